"""What the tasks' tests of hand-built models share: the token indexers and the embedder of words
with or without the tiny test biLM, one tensor batch of a few instances, and fitting a model to it.

Imported by ``tests/tasks/<task>/test_<task>_model.py``.
"""

from typing import Any, Dict, List, Sequence

import torch
from allennlp.data import Batch, Instance, TensorDict, TokenIndexer, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.models import Model
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding, TokenEmbedder

from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE
from tests.tasks.experiment_case import tiny_bilm_embedder


def token_indexers(elmo: bool, lowercase_tokens: bool = True) -> Dict[str, TokenIndexer]:
    """Word ids under ``tokens``, and with ``elmo`` the biLM's character ids under ``elmo``."""
    indexers: Dict[str, TokenIndexer] = {"tokens": SingleIdTokenIndexer(lowercase_tokens=lowercase_tokens)}
    if elmo:
        indexers["elmo"] = ELMoTokenCharactersIndexer()
    return indexers


def words_and_elmo(vocab: Vocabulary, embedding_dim: int, elmo: bool) -> BasicTextFieldEmbedder:
    """Word embeddings of ``embedding_dim``, and with ``elmo`` the tiny test biLM's two mixes (one for
    the input, one for the output) without dropout."""
    embedders: Dict[str, TokenEmbedder] = {
        "tokens": Embedding(embedding_dim=embedding_dim, vocab_namespace="tokens", vocab=vocab)
    }
    if elmo:
        embedders["elmo"] = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, dropout=0.0, num_output_representations=2)
    return BasicTextFieldEmbedder(embedders)


def words_and_elmo_config(elmo: bool, embedding_dim: int = 16) -> Dict[str, Any]:
    """The ``token_embedders`` of a model's config: words of ``embedding_dim``, and with ``elmo`` the
    tiny test biLM."""
    embedders: Dict[str, Any] = {"tokens": {"type": "embedding", "embedding_dim": embedding_dim}}
    if elmo:
        embedders["elmo"] = tiny_bilm_embedder()
    return embedders


def tensor_batch(instances: Sequence[Instance], vocab: Vocabulary) -> TensorDict:
    """``instances`` indexed with ``vocab`` as one padded batch: the keyword arguments of ``forward``."""
    batch = Batch(list(instances))
    batch.index_instances(vocab)
    return batch.as_tensor_dict()


def fit(model: Model, tensors: TensorDict, optimizer: torch.optim.Optimizer, steps: int) -> List[float]:
    """``steps`` optimizer steps on the loss of the one batch ``tensors``; returns the loss before each."""
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = model(**tensors)["loss"]
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
