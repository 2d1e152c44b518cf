"""Nearest neighbours of a word in context, per biLM layer (Peters et al. 2018, Table 4).

The paper shows that the biLM's top layer separates word senses: the neighbours of "play" in a
baseball sentence are other sports plays, while GloVe's nearest words mix every sense. Here every
token of a small bundled corpus (``neighbour_corpus.txt``: sentences written for the demo, with
several senses each of play, bank, run, bat, spring, light, match, rock, fair, bark, ship, key)
is embedded once at start-up; a query sentence is embedded on demand, and the chosen word's
vector in each layer is compared (cosine similarity) with the corpus tokens of the same layer.
Layer 0 is the character CNN's token vector, the same for every occurrence of a word whatever
its context, so it cannot tell senses apart; layers 1 and 2 can.

By default only occurrences of the same word (case-insensitive) are ranked, as in Table 4; with
``same_word`` off, any corpus token may be a neighbour.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from elmo_tasks.bilm.file_embedder import embed_sentences
from elmo_tasks.bilm.model import BiLM

CORPUS_FILE = Path(__file__).resolve().parent / "neighbour_corpus.txt"
#: The longest query sentence taken, in tokens (the biLM is linear in length; a sentence is enough).
MAX_QUERY_TOKENS = 200
#: The most neighbours listed per layer.
MAX_TOP = 20
_BATCH = 16


def read_corpus(path: Path) -> List[List[str]]:
    """One sentence per non-blank line, tokens separated by spaces."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split() for line in lines if line.strip()]


def layer_name(layer: int) -> str:
    return "token layer (character CNN, no context)" if layer == 0 else f"biLSTM layer {layer}"


@dataclass
class Neighbour:
    """A corpus token: the sentence it is in, its position, and its similarity to the query word."""

    sentence: List[str]
    index: int
    similarity: float


class BilmNeighbours:
    """A biLM and the normalised vectors of every token of a corpus, per layer."""

    def __init__(self, bilm: BiLM, sentences: List[List[str]], description: str, device: str = "cpu") -> None:
        self.bilm = bilm.eval().to(device)
        self.sentences = sentences
        self.description = description
        self._device = torch.device(device)
        self._places = [(s, t) for s, words in enumerate(sentences) for t in range(len(words))]
        self._lowered = [sentences[s][t].lower() for s, t in self._places]
        vectors = []  # per sentence (layers, tokens, dim)
        for start in range(0, len(sentences), _BATCH):
            vectors.extend(self._embed(sentences[start : start + _BATCH]))
        #: (layers, corpus tokens, dim), unit length
        self.matrix = torch.nn.functional.normalize(torch.cat(vectors, dim=1), dim=-1)

    @property
    def num_layers(self) -> int:
        return self.bilm.num_layers

    def _embed(self, sentences: Sequence[Sequence[str]]) -> List[torch.Tensor]:
        return [layers.float().cpu() for layers in embed_sentences(self.bilm, sentences, self._device)]

    def neighbours(self, words: List[str], index: int, top: int = 5, same_word: bool = True) -> Dict[str, Any]:
        """For ``words[index]``: per layer the ``top`` most similar corpus tokens (JSON-ready)."""
        query = torch.nn.functional.normalize(self._embed([words])[0][:, index], dim=-1)  # (layers, dim)
        similarities = torch.einsum("ld,ltd->lt", query, self.matrix)
        candidates = self._candidates(words, words[index].lower() if same_word else None)
        note = None
        if same_word and not candidates:
            note = f"{words[index]!r} is not in the demo corpus: the nearest tokens of any word are shown"
            candidates = self._candidates(words, None)
        chosen = torch.tensor(candidates, dtype=torch.long)
        layers = []
        for layer in range(similarities.shape[0]):
            scores = similarities[layer, chosen]
            order = torch.argsort(scores, descending=True, stable=True)[:top]
            found = [self._neighbour(candidates[int(i)], float(scores[int(i)])) for i in order]
            layers.append({"layer": layer, "name": layer_name(layer), "neighbours": [vars(n) for n in found]})
        return {"words": words, "index": index, "word": words[index], "layers": layers, "note": note}

    def _candidates(self, words: List[str], word: Optional[str]) -> List[int]:
        """Corpus token positions to rank: all, or those of ``word``; never the query sentence itself."""
        return [
            position
            for position, (sentence, _) in enumerate(self._places)
            if (word is None or self._lowered[position] == word) and self.sentences[sentence] != words
        ]

    def _neighbour(self, position: int, similarity: float) -> Neighbour:
        sentence, token = self._places[position]
        return Neighbour(self.sentences[sentence], token, round(similarity, 4))


def load_neighbours(
    options_file: str, weight_file: str, corpus_file: Path = CORPUS_FILE, device: str = "cpu"
) -> BilmNeighbours:
    """The biLM of ``options_file``/``weight_file`` (paths or ``elmo_tasks:`` references) over a corpus."""
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.bilm.weights import load_bilm

    bilm = load_bilm(resolve_bilm_file(options_file), resolve_bilm_file(weight_file))
    return BilmNeighbours(bilm, read_corpus(corpus_file), f"{options_file} + {weight_file}", device)


def spacy_tokenizer() -> Callable[[str], List[str]]:
    """The tokenizer for query sentences: spaCy's rule-based English one, as the task predictors use."""
    from elmo_tasks.bilm.embed import spacy_words

    return spacy_words()
