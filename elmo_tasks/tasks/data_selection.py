"""Data-path suffixes that select a deterministic part of one file: ``#train``, ``#holdout``, ``#sample=P``.

Some benchmarks lack a file here (SNLI train, the CoNLL-2012 train split), so their experiments
train on another file split in two, and the sample-efficiency runs train on a share of a file.
Both are written into the data path, so a config or ``-o '{"train_data_path": ...}'`` says
exactly which items a run saw:

- ``#train`` / ``#holdout``: an item is on the holdout side when
  ``crc32(split key) % holdout_modulus == 0`` (about 1 in 10 by default), else on the train side;
- ``#sample=P`` (0 < P <= 1): keep an item when ``crc32(sample key) % 10000 < P * 10000``;
- both, in either order: ``dev.jsonl.gz#train#sample=0.1`` is a 10% sample of the train side
  (``scripts/reproduce.py`` writes this when it samples a training path that ends in ``#train``).

Each reader picks the keys (SNLI: the premise; coreference: the document id; SRL: the document or
the words, see each reader). The rule uses crc32 rather than ``hash()`` so that the same items are
chosen on every run, machine and Python version: trained runs and their results depend on it.
A file name must not contain ``#``: everything after the first ``#`` is read as suffixes.

Every reader reads its suffixes with :func:`split_path`, giving its dataset's name for the
messages. A suffix that cannot be read is a :class:`DataPathError`, a ``ConfigurationError``: the
data path is part of the config (``train_data_path``) or of the command line, and that is what
to change.
"""

import math
import zlib
from dataclasses import dataclass
from typing import Optional, Tuple

from allennlp.common.checks import ConfigurationError

SPLITS = ("train", "holdout")
SAMPLE_PREFIX = "sample="
SAMPLE_SCALE = 10000
ACCEPTED = (
    "accepted suffixes: '#train', '#holdout', '#sample=P' (0 < P <= 1), one split and one sample "
    "combined in either order (e.g. 'dev.jsonl.gz#train#sample=0.1'), or none for the whole file"
)


class DataPathError(ConfigurationError, ValueError):
    """A data path whose suffixes cannot be read; the message names the path and the suffix.

    A ``ConfigurationError`` (a config or command-line mistake); also a ``ValueError``, which it
    was before, so callers that catch that keep working."""


def crc32(key: str) -> int:
    """The crc32 of a key's UTF-8 bytes: stable across runs, machines and Python versions."""
    return zlib.crc32(key.encode("utf-8"))


def in_holdout(key: str, holdout_modulus: int) -> bool:
    """Whether the item with this split key is on the ``#holdout`` side."""
    return crc32(key) % holdout_modulus == 0


def in_sample(key: str, share: float) -> bool:
    """Whether the item with this sample key is in the ``#sample=share`` sample."""
    return crc32(key) % SAMPLE_SCALE < share * SAMPLE_SCALE


@dataclass(frozen=True)
class DataSelection:
    """Which items of a file a path asks for: a split side and/or a sample share (None: all)."""

    split: Optional[str] = None
    sample: Optional[float] = None

    def __post_init__(self) -> None:
        if self.split is not None and self.split not in SPLITS:
            raise DataPathError(f"unknown split {self.split!r}; {ACCEPTED}")
        if self.sample is not None and not 0.0 < self.sample <= 1.0:
            raise DataPathError(f"sample share {self.sample!r} is not in (0, 1]; {ACCEPTED}")

    @property
    def everything(self) -> bool:
        """True when the path has no suffix, so every item is read."""
        return self.split is None and self.sample is None

    @property
    def suffix(self) -> str:
        """The suffixes as written in a path, split first: ``"#train#sample=0.1"`` (or ``""``)."""
        split = f"#{self.split}" if self.split is not None else ""
        sample = f"#{SAMPLE_PREFIX}{self.sample!r}" if self.sample is not None else ""
        return split + sample

    def keeps(self, split_key: str, sample_key: str, holdout_modulus: int) -> bool:
        """Whether an item is selected: on the asked split side (by ``split_key``) and in the sample
        (by ``sample_key``). Without a split suffix ``holdout_modulus`` is not used."""
        if self.sample is not None and not in_sample(sample_key, self.sample):
            return False
        if self.split is not None:
            return in_holdout(split_key, holdout_modulus) == (self.split == "holdout")
        return True


def _sample_share(text: str, file_path: str, dataset: str) -> float:
    try:
        share = float(text)
    except ValueError:
        share = math.nan
    if not 0.0 < share <= 1.0:  # also rejects nan
        raise DataPathError(
            f"{dataset} data path {file_path!r}: '#{SAMPLE_PREFIX}{text}' is not a valid sample; "
            f"#sample=P needs 0 < P <= 1, e.g. '#sample=0.01'; {ACCEPTED}"
        )
    return share


def split_path(file_path: str, dataset: str = "the") -> Tuple[str, DataSelection]:
    """``"dev.gz#train#sample=0.1"`` -> ``("dev.gz", DataSelection("train", 0.1))``; no suffix ->
    ``(path, DataSelection())``. ``dataset`` (e.g. ``"SNLI"``) starts the error messages."""
    path, *suffixes = str(file_path).split("#")
    if suffixes and not path:
        raise DataPathError(f"{dataset} data path {file_path!r} has suffixes but no file before them; {ACCEPTED}")
    split: Optional[str] = None
    sample: Optional[float] = None
    for suffix in suffixes:
        if suffix in SPLITS:
            if split is not None:
                raise DataPathError(
                    f"{dataset} data path {file_path!r}: '#{suffix}' after '#{split}'; "
                    f"a path takes at most one split suffix; {ACCEPTED}"
                )
            split = suffix
        elif suffix.startswith(SAMPLE_PREFIX):
            if sample is not None:
                raise DataPathError(
                    f"{dataset} data path {file_path!r}: '#{suffix}' repeats '#sample'; "
                    f"a path takes at most one sample suffix; {ACCEPTED}"
                )
            sample = _sample_share(suffix[len(SAMPLE_PREFIX) :], file_path, dataset)
        else:
            raise DataPathError(f"{dataset} data path {file_path!r}: unknown suffix '#{suffix}'; {ACCEPTED}")
    return path, DataSelection(split, sample)
