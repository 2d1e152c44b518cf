"""Word sense disambiguation probe: 1-nearest-neighbour over sense centroids of one layer.

As in Peters et al. (2018, section 5.3): the representation of each sense is the mean layer
vector of its training occurrences; a test word takes the sense whose centroid is nearest
(cosine). Senses are OntoNotes word senses, which are numbered per lemma and part of speech,
so the key is ``(lemma, noun|verb|other)``. A test word whose key was never seen in training
falls back to sense ``"1"`` (we have no WordNet first sense here); the most-frequent-sense
baseline uses the same fallback. Every test word gets a prediction, so precision, recall and
F1 are all equal to accuracy.

The paper's fallback (WordNet's first sense) decides every test word whose lemma training never
saw, so the scores are also reported on the words whose key training saw (``seen_in_training``):
there, and only there, the layer's vectors choose the sense.
"""

from collections import Counter, defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

FALLBACK_SENSE = "1"
Key = Tuple[str, str]


def sense_key(lemma: str, pos_tag: str) -> Key:
    group = "verb" if pos_tag.startswith("VB") else "noun" if pos_tag.startswith("NN") else "other"
    return lemma.lower(), group


def sense_centroids(
    features: np.ndarray, keys: Sequence[Key], senses: Sequence[str]
) -> Dict[Key, Tuple[List[str], np.ndarray]]:
    """``key -> (sense names, unit-length centroids (senses, dim))`` from training words."""
    rows: Dict[Key, Dict[str, List[int]]] = defaultdict(lambda: defaultdict(list))
    for i, (key, sense) in enumerate(zip(keys, senses, strict=True)):
        rows[key][sense].append(i)
    centroids = {}
    for key, by_sense in rows.items():
        names = sorted(by_sense)
        means = np.stack([features[by_sense[name]].mean(axis=0) for name in names])
        centroids[key] = (names, means / (np.linalg.norm(means, axis=1, keepdims=True) + 1e-8))
    return centroids


def nearest_sense(
    centroids: Dict[Key, Tuple[List[str], np.ndarray]], features: np.ndarray, keys: Sequence[Key]
) -> List[str]:
    predictions = []
    for vector, key in zip(features, keys, strict=True):
        if key not in centroids:
            predictions.append(FALLBACK_SENSE)
            continue
        names, matrix = centroids[key]
        predictions.append(names[int(np.argmax(matrix @ vector))])
    return predictions


def most_frequent_sense(train_keys: Sequence[Key], train_senses: Sequence[str], test_keys: Sequence[Key]) -> List[str]:
    counts: Dict[Key, Counter] = defaultdict(Counter)
    for key, sense in zip(train_keys, train_senses, strict=True):
        counts[key][sense] += 1
    # ties go to the smaller sense name, so the baseline does not depend on reading order
    best: Dict[Key, Optional[str]] = {k: min(c, key=lambda s: (-c[s], s)) for k, c in counts.items()}
    return [best.get(key) or FALLBACK_SENSE for key in test_keys]


def seen_in_training(train_keys: Sequence[Key], test_keys: Sequence[Key]) -> np.ndarray:
    """Boolean mask of the test words whose (lemma, POS group) occurs among the training words."""
    known = set(train_keys)
    return np.array([key in known for key in test_keys], dtype=bool)


def f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """Every word has a prediction, so F1 = precision = recall = accuracy."""
    return float(np.mean([p == g for p, g in zip(predicted, gold, strict=True)])) if gold else 0.0
