"""DatasetReader for the Stanford Sentiment Treebank (one PTB-style tree per line)."""

import logging
from typing import Dict, Iterable, List, Optional, Set

from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Field, Instance, Token, TokenIndexer
from allennlp.data.fields import LabelField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from elmo_tasks.tasks.data_files import read_lines
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.sst.labels import to_binary
from elmo_tasks.tasks.sst.trees import Phrase, parse_tree
from elmo_tasks.wording import counted

logger = logging.getLogger(__name__)

PHRASE_CHOICES = ("all", "roots")


@DatasetReader.register("sst_ptb_trees")
class SstTreesReader(DatasetReader):
    """One instance per labelled phrase: ``tokens`` (TextField) and ``label`` (class index).

    # Parameters
    token_indexers : how to index words (default: single ids).
    phrases : ``"all"`` gives every subtree of every tree, as the ELMo paper trained SST-5;
        ``"roots"`` gives whole sentences only, which is what SST accuracy is reported on.
    deduplicate : with ``phrases="all"``, keep one instance per distinct (words, label) within a
        file. Common short phrases ("the", ".", "film") recur thousands of times; the treebank
        labelled each distinct phrase once, so repeats only re-weight the loss towards them and
        double the epoch (train: 318,582 subtrees, 159,274 distinct). Roots are never deduplicated,
        so evaluation counts every sentence.
    binary : SST-2: drop neutral (2) phrases, map 0-1 to class 0 (negative), 3-4 to 1 (positive).
    max_tokens : truncate longer phrases (None: keep all).

    Labels use ``skip_indexing``: the class index IS the sentiment (0..4, or 0..1 with binary), so
    predictions need no vocabulary lookup.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        phrases: str = "all",
        deduplicate: bool = True,
        binary: bool = False,
        max_tokens: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if phrases not in PHRASE_CHOICES:
            raise ConfigurationError(f"sst_ptb_trees: phrases must be one of {PHRASE_CHOICES}, got {phrases!r}")
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._phrases = phrases
        self._deduplicate = deduplicate
        self._binary = binary
        self._max_tokens = max_tokens

    def _read(self, file_path: str) -> Iterable[Instance]:
        seen: Set[Phrase] = set()
        trees = yielded = duplicates = neutral = blank = 0
        for line_number, line in enumerate(read_lines(file_path), start=1):
            if not line.strip():
                blank += 1
                continue
            phrases = parse_tree(line, f"{file_path}, line {line_number}")
            trees += 1
            if self._phrases == "roots":
                phrases = phrases[:1]
            for phrase in phrases:
                if self._binary and phrase.label == 2:
                    neutral += 1
                    continue
                if self._phrases == "all" and self._deduplicate:
                    if phrase in seen:
                        duplicates += 1
                        continue
                    seen.add(phrase)
                yielded += 1
                yield self.text_to_instance(list(phrase.tokens), phrase.label)
        logger.info(
            "%s: %s -> %s (phrases=%s; skipped %s, %s, %s)",
            file_path,
            counted(trees, "tree"),
            counted(yielded, "instance"),
            self._phrases,
            counted(duplicates, "duplicate phrase"),
            counted(neutral, "neutral phrase"),
            counted(blank, "blank line"),
        )

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
