"""The settings of one word-vector build: what the record stores, and what decides whether a build is reused.

Every field changes the vectors written, so two builds with equal options on the same corpus give the
same file (with ``workers=1``: gensim trains in one thread, in corpus order, from ``seed``; more
workers are faster but interleave their updates in whatever order the threads run).
"""

import dataclasses
import shlex
from typing import Any, Dict, List

from elmo_tasks.word_vectors.errors import WordVectorsError

ALGORITHMS = ("word2vec", "fasttext")
ARCHITECTURES = ("skipgram", "cbow")
# Fixed decimals per value in the GloVe text file: float32 holds about 7 significant digits, and the
# values are mostly below 1 in magnitude, so 6 decimals keep what the vectors hold.
MAX_DECIMALS = 9


@dataclasses.dataclass(frozen=True)
class WordVectorOptions:
    """How to train the vectors (gensim 4.4's ``Word2Vec`` or ``FastText``, negative sampling) and write them.

    ``algorithm``: ``word2vec`` or ``fasttext`` (subword n-grams of 3 to 6 characters help rare words; the
    GloVe text format keeps only the vectors of the vocabulary's words). ``architecture``: ``skipgram``
    (predict the context from the word) or ``cbow`` (the word from its context, several times faster).
    ``min_count``: words seen fewer times get no vector. ``lowercase``: lowercase every token first, for
    models that lowercase their vocabulary (``lowercase_tokens: true`` in an experiment's indexer).
    ``decimals``: digits after the point of each value written.
    """

    algorithm: str = "word2vec"
    architecture: str = "skipgram"
    dim: int = 300
    window: int = 5
    min_count: int = 5
    epochs: int = 5
    seed: int = 0
    workers: int = 1
    lowercase: bool = False
    decimals: int = 6

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise WordVectorsError(f"algorithm (--algorithm) is {self.algorithm!r}; expected one of {ALGORITHMS}")
        if self.architecture not in ARCHITECTURES:
            raise WordVectorsError(
                f"architecture (--architecture) is {self.architecture!r}; expected one of {ARCHITECTURES}"
            )
        for name in ("dim", "window", "min_count", "epochs", "workers", "decimals"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise WordVectorsError(f"{name} (--{_flag(name)}) is {value!r}; expected a whole number of at least 1")
        if self.decimals > MAX_DECIMALS:
            raise WordVectorsError(f"decimals (--decimals) is {self.decimals}; expected at most {MAX_DECIMALS}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**32:
            raise WordVectorsError(f"seed (--seed) is {self.seed!r}; expected a whole number from 0 to 2**32 - 1")
        if not isinstance(self.lowercase, bool):
            raise WordVectorsError(f"lowercase (--lowercase) is {self.lowercase!r}; expected true or false")

    def as_dict(self) -> Dict[str, Any]:
        """The options as the record stores them (JSON-ready)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Dict[str, Any]) -> "WordVectorOptions":
        """Options from a record's ``options`` (unknown keys are an error, missing ones take the default)."""
        unknown = sorted(set(values) - {field.name for field in dataclasses.fields(cls)})
        if unknown:
            raise WordVectorsError(f"unknown word-vector options {unknown}; expected only {sorted(cls().as_dict())}")
        return cls(**values)

    def command_line(self, corpus: str, output: str) -> str:
        """The ``allennlp build-word-vectors`` line that builds these vectors (every option spelled out)."""
        arguments: List[str] = ["allennlp", "build-word-vectors", corpus, output]
        for name, value in self.as_dict().items():
            if isinstance(value, bool):
                arguments += [f"--{_flag(name)}"] if value else []
            else:
                arguments += [f"--{_flag(name)}", str(value)]
        return shlex.join(arguments)


def _flag(name: str) -> str:
    return name.replace("_", "-")
