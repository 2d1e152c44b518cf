"""Frozen biLM layers for every token of a list of sentences, as one array per layer."""

from typing import List, Sequence

import numpy as np
import torch

from elmo_tasks.bilm import BiLM, batch_to_ids


def layer_features(
    bilm: BiLM, sentences: Sequence[Sequence[str]], batch_size: int = 64, progress: bool = True
) -> List[np.ndarray]:
    """``num_layers`` arrays ``(total_tokens, dim)``: layer j of every token, sentences in order.

    Sentences are batched by length (less padding); the biLM is stateless, so a sentence's
    vectors do not depend on its batch.
    """
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    per_sentence: List[List[np.ndarray]] = [[] for _ in sentences]
    batches = range(0, len(order), batch_size)
    if progress:
        from tqdm import tqdm

        batches = tqdm(batches, desc="biLM layers", unit="batch")
    bilm.eval()
    with torch.no_grad():
        for start in batches:
            rows = order[start : start + batch_size]
            output = bilm(batch_to_ids([sentences[i] for i in rows]))
            stacked = torch.stack(output.layers).numpy()  # (layers, batch, tokens, dim)
            for slot, i in enumerate(rows):
                per_sentence[i] = [stacked[j, slot, : len(sentences[i])] for j in range(stacked.shape[0])]
    num_layers = len(per_sentence[0])
    return [np.concatenate([s[j] for s in per_sentence]).astype(np.float32) for j in range(num_layers)]
