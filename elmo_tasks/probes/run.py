"""Both probes over every layer of one biLM: the numbers of the model card's probe table."""

import time
from itertools import islice
from typing import Dict, List, Optional

import numpy as np
import torch

from elmo_tasks.bilm import load_bilm
from elmo_tasks.probes.conll2012_words import AnnotatedSentence, read_sentences
from elmo_tasks.probes.features import layer_features
from elmo_tasks.probes.pos import LinearPosTagger, accuracy, train_pos_tagger
from elmo_tasks.probes.wsd import f1, most_frequent_sense, nearest_sense, seen_in_training, sense_centroids, sense_key


def load_split(path: str, max_sentences: Optional[int] = None) -> List[AnnotatedSentence]:
    sentences = list(islice(read_sentences(path), max_sentences))
    if not sentences:
        raise ValueError(f"{path}: no sentence found; give a CoNLL-2012 *_gold_conll file")
    return sentences


def _flat(sentences: List[AnnotatedSentence], field: str) -> list:
    return [value for s in sentences for value in getattr(s, field)]


def probe_bilm(
    options_file: str,
    weight_file: Optional[str],
    train: List[AnnotatedSentence],
    test: List[AnnotatedSentence],
    seed: int = 0,
    progress: bool = True,
) -> Dict:
    """POS accuracy and WSD F1 (in percent) per layer; ``weight_file=None``: random weights.

    Returns ``{"pos": {layer: acc}, "wsd": {layer: f1}, "wsd_mfs": f1, "taggers": {layer:
    LinearPosTagger}, "counts": {...}, "seconds": s}``.
    """
    started = time.time()
    torch.manual_seed(seed)  # the random control's weights
    bilm = load_bilm(options_file, weight_file)
    train_layers = layer_features(bilm, [s.words for s in train], progress=progress)
    test_layers = layer_features(bilm, [s.words for s in test], progress=progress)
    train_pos, test_pos = _flat(train, "pos_tags"), _flat(test, "pos_tags")

    def sense_rows(sentences):
        rows, keys, senses = [], [], []
        flat = zip(_flat(sentences, "lemmas"), _flat(sentences, "pos_tags"), _flat(sentences, "senses"), strict=True)
        for i, (lemma, tag, sense) in enumerate(flat):
            if lemma is not None and sense is not None:
                rows.append(i)
                keys.append(sense_key(lemma, tag))
                senses.append(sense)
        return np.array(rows, dtype=np.int64), keys, senses

    train_rows, train_keys, train_senses = sense_rows(train)
    test_rows, test_keys, test_senses = sense_rows(test)
    seen = seen_in_training(train_keys, test_keys)
    seen_senses = [sense for sense, known in zip(test_senses, seen, strict=True) if known]

    def on_seen(predictions: List[str]) -> float:
        return 100 * f1([p for p, known in zip(predictions, seen, strict=True) if known], seen_senses)

    results: Dict = {"pos": {}, "wsd": {}, "wsd_seen": {}, "taggers": {}}
    for layer, (train_x, test_x) in enumerate(zip(train_layers, test_layers, strict=True)):
        tagger = train_pos_tagger(train_x, train_pos, layer, seed=seed)
        results["taggers"][layer] = tagger
        results["pos"][layer] = 100 * accuracy(tagger.predict(test_x), test_pos)
        centroids = sense_centroids(train_x[train_rows], train_keys, train_senses)
        predictions = nearest_sense(centroids, test_x[test_rows], test_keys)
        results["wsd"][layer] = 100 * f1(predictions, test_senses)
        results["wsd_seen"][layer] = on_seen(predictions)
    baseline = most_frequent_sense(train_keys, train_senses, test_keys)
    results["wsd_mfs"] = 100 * f1(baseline, test_senses)
    results["wsd_mfs_seen"] = on_seen(baseline)
    results["counts"] = {
        "train_tokens": len(train_pos),
        "test_tokens": len(test_pos),
        "train_sense_words": len(train_senses),
        "test_sense_words": len(test_senses),
        "test_sense_words_seen": len(seen_senses),
    }
    results["seconds"] = time.time() - started
    return results


def best_tagger(results: Dict) -> LinearPosTagger:
    layer = max(results["pos"], key=results["pos"].get)
    return results["taggers"][layer]


def markdown_table(rows: Dict[str, Dict]) -> str:
    """``rows``: biLM name -> probe_bilm results."""
    lines = [
        "| biLM | POS acc. layer 0 | layer 1 | layer 2 | WSD F1 layer 0 | layer 1 | layer 2 | WSD "
        "most frequent sense | WSD F1, lemmas seen in training: layer 0 | layer 1 | layer 2 | most frequent sense |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cells(values: Dict) -> str:
        return " | ".join(f"{values[k]:.1f}" for k in sorted(values))

    for name, result in rows.items():
        lines.append(
            f"| {name} | {cells(result['pos'])} | {cells(result['wsd'])} | {result['wsd_mfs']:.1f} "
            f"| {cells(result['wsd_seen'])} | {result['wsd_mfs_seen']:.1f} |"
        )
    return "\n".join(lines)
