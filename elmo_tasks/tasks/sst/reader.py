"""DatasetReader for the Stanford Sentiment Treebank (one PTB-style tree per line)."""

import logging
from typing import Dict, Iterable, List, Optional, Set, Union

from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Field, Instance, Token, TokenIndexer
from allennlp.data.fields import LabelField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from elmo_tasks.counted_nouns import counted
from elmo_tasks.tasks.data_files import read_lines
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.sst.labels import to_binary
from elmo_tasks.tasks.sst.trees import Phrase, parse_tree

logger = logging.getLogger(__name__)

PHRASE_CHOICES = ("all", "roots")


class PhraseSelection(FromParams):
    """Which labelled phrases (subtrees) of each tree become instances, as a training recipe states it:
    the reader's ``phrases`` given as a mapping, e.g. ``{"min_tokens": 4, "deduplicate": false}``.

    # Parameters
    min_tokens : skip phrases of fewer tokens. The ELMo paper (appendix A.8) trained SST-5 on the
        phrases of four or more tokens only, to match McCann et al.'s (2017) CoVe setup.
    deduplicate : keep one instance per distinct (words, label) within a file (see the reader).
    """

    def __init__(self, min_tokens: int = 1, deduplicate: bool = True) -> None:
        if min_tokens < 1:
            raise ConfigurationError(f"sst5_reader: phrases.min_tokens must be 1 or more, got {min_tokens!r}")
        self.min_tokens = min_tokens
        self.deduplicate = deduplicate


@DatasetReader.register("sst_ptb_trees")
class SstTreesReader(DatasetReader):
    """One instance per labelled phrase: ``tokens`` (TextField) and ``label`` (class index).

    # Parameters
    token_indexers : how to index words (default: single ids).
    phrases : ``"all"`` gives every subtree of every tree; ``"roots"`` gives whole sentences only,
        which is what SST accuracy is reported on; a ``PhraseSelection`` (a mapping in a config)
        gives the subtrees it selects, e.g. ``{"min_tokens": 4, "deduplicate": false}``, the
        paper's training set (appendix A.8: every phrase of four or more tokens).
    deduplicate : with ``phrases="all"``, keep one instance per distinct (words, label) within a
        file (default true; a ``PhraseSelection`` carries its own). Common short phrases ("the",
        ".", "film") recur thousands of times; the treebank labelled each distinct phrase once, so
        repeats re-weight the loss towards them and double the epoch (train: 318,582 subtrees,
        159,274 distinct). Roots are never deduplicated, so evaluation counts every sentence.
    binary : SST-2: drop neutral (2) phrases, map 0-1 to class 0 (negative), 3-4 to 1 (positive).
    max_tokens : truncate longer phrases (None: keep all).

    Labels use ``skip_indexing``: the class index IS the sentiment (0..4, or 0..1 with binary), so
    predictions need no vocabulary lookup.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        phrases: Union[str, PhraseSelection] = "all",
        deduplicate: Optional[bool] = None,
        binary: bool = False,
        max_tokens: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if isinstance(phrases, PhraseSelection):
            if deduplicate is not None:
                raise ConfigurationError(
                    "sst5_reader: give deduplicate inside phrases when phrases selects them "
                    '(e.g. {"min_tokens": 4, "deduplicate": false}), not beside it'
                )
            selection: Optional[PhraseSelection] = phrases
        elif phrases in PHRASE_CHOICES:
            selection = None if phrases == "roots" else PhraseSelection(deduplicate=deduplicate is not False)
        else:
            raise ConfigurationError(
                f"sst5_reader: phrases must be one of {PHRASE_CHOICES} or a mapping of min_tokens and "
                f"deduplicate, got {phrases!r}"
            )
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        # None: the roots only.
        self._selection = selection
        self._binary = binary
        self._max_tokens = max_tokens

    def _read(self, file_path: str) -> Iterable[Instance]:
        seen: Set[Phrase] = set()
        trees = yielded = duplicates = short = neutral = blank = 0
        for line_number, line in enumerate(read_lines(file_path), start=1):
            if not line.strip():
                blank += 1
                continue
            phrases = parse_tree(line, f"{file_path}, line {line_number}")
            trees += 1
            if self._selection is None:
                phrases = phrases[:1]
            for phrase in phrases:
                if self._selection is not None and len(phrase.tokens) < self._selection.min_tokens:
                    short += 1
                    continue
                if self._binary and phrase.label == 2:
                    neutral += 1
                    continue
                if self._selection is not None and self._selection.deduplicate:
                    if phrase in seen:
                        duplicates += 1
                        continue
                    seen.add(phrase)
                yielded += 1
                yield self.text_to_instance(list(phrase.tokens), phrase.label)
        logger.info(
            "%s: %s -> %s (%s; skipped %s, %s, %s, %s)",
            file_path,
            counted(trees, "tree"),
            counted(yielded, "instance"),
            self._described_selection(),
            counted(duplicates, "duplicate phrase"),
            counted(short, "shorter phrase"),
            counted(neutral, "neutral phrase"),
            counted(blank, "blank line"),
        )

    def _described_selection(self) -> str:
        if self._selection is None:
            return "roots only"
        return f"phrases of {self._selection.min_tokens}+ tokens, deduplicate={self._selection.deduplicate}"

    def text_to_instance(self, tokens: List[str], label: Optional[int] = None) -> Instance:
        """``label`` is the 0..4 treebank sentiment (mapped to 0/1 here when ``binary``)."""
        if self._max_tokens is not None:
            tokens = tokens[: self._max_tokens]
        fields: Dict[str, Field] = {
            "tokens": TextField([Token(t) for t in tokens]),
            "metadata": MetadataField({"words": tokens}),
        }
        if label is not None:
            if self._binary:
                label = to_binary(label)
            fields["label"] = LabelField(label, skip_indexing=True)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        field_of(instance, "tokens", TextField).token_indexers = self._token_indexers
