"""Reads SNLI 1.0 jsonl (plain or gzipped) into premise/hypothesis/label instances.

Pairs whose ``gold_label`` is ``-`` (the annotators did not agree) are left out, as every SNLI
paper does; how many were left out is logged at the end of each file.

Deterministic parts of one file. The full SNLI training set is not available here, so the
``full`` experiments train on SNLI dev and keep part of it for model selection. A data path may
end in ``#train`` or ``#holdout``: the pair goes to ``holdout`` when
``crc32(premise) % holdout_modulus == 0`` (about 1 pair in 10 by default), otherwise to
``train``. Keying on the premise keeps the three hypotheses written for one caption on the same
side, so no premise seen in training reappears in the held-out part. ``#sample=P`` (0 < P <= 1)
keeps a pair when ``crc32(premise) % 10000 < P * 10000``, again by premise, and combines with a
split in either order: ``dev.jsonl.gz#train#sample=0.1`` is a 10% sample of the train side (what
``scripts/reproduce.py --sample-efficiency`` trains on). A path without a suffix reads every pair
(use that for test files and for ``allennlp evaluate``). The rules are shared with the other
readers in :mod:`elmo_tasks.tasks.data_selection`.
"""

import json
import logging
from typing import Any, Dict, Iterable, Iterator, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Instance, TokenIndexer, Tokenizer
from allennlp.data.fields import LabelField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from elmo_tasks.counted_nouns import counted
from elmo_tasks.tasks.data_files import DataFileError, read_lines
from elmo_tasks.tasks.data_selection import in_holdout as in_holdout  # re-exported: the split rule
from elmo_tasks.tasks.data_selection import split_path
from elmo_tasks.tokenization import SpacyBlankTokenizer

logger = logging.getLogger(__name__)

LABELS = ("entailment", "neutral", "contradiction")
NO_CONSENSUS = "-"


#: The name of SNLI data errors before they were one class for every reader (kept for code that catches it).
SnliFormatError = DataFileError
#: Starts the messages about a data path's suffixes.
DATASET = "SNLI"


def parse_line(line: str, where: str) -> Dict[str, str]:
    """The premise, hypothesis and gold label of one jsonl line, or a DataFileError naming ``where``."""
    try:
        record: Any = json.loads(line)
    except json.JSONDecodeError as error:
        raise DataFileError(
            f"{where}: not valid JSON ({error.msg} at column {error.colno}); each line must be one SNLI json object"
        ) from None
    if not isinstance(record, dict):
        raise DataFileError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [key for key in ("sentence1", "sentence2", "gold_label") if key not in record]
    if missing:
        raise DataFileError(
            f"{where}: missing field(s) {', '.join(missing)}; SNLI lines need "
            "sentence1 (premise), sentence2 (hypothesis) and gold_label"
        )
    for key in ("sentence1", "sentence2", "gold_label"):
        if not isinstance(record[key], str):
            raise DataFileError(f"{where}: field {key} must be a string, got {record[key]!r}")
    label = record["gold_label"]
    if label != NO_CONSENSUS and label not in LABELS:
        raise DataFileError(f"{where}: unknown gold_label {label!r}; expected one of {', '.join(LABELS)} or '-'")
    return {
        "premise": record["sentence1"],
        "hypothesis": record["sentence2"],
        "label": label,
        "pair_id": str(record.get("pairID", "")),
    }


def selected_pairs(
    file_path: str, holdout_modulus: int, counts: Dict[str, Any]
) -> Iterator[Tuple[int, Dict[str, str]]]:
    """``(line number, pair)`` of every pair a data path selects (its ``#train``/``#holdout``/
    ``#sample=P`` suffixes) that has a gold label, in file order. ``counts`` receives how many
    pairs were ``not_selected``, how many had ``no_consensus`` (gold label ``-``) and the ``suffix``."""
    path, selection = split_path(file_path, DATASET)
    counts.update(not_selected=0, no_consensus=0, suffix=selection.suffix)
    for line_number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        pair = parse_line(line, f"{path}, line {line_number}")
        if not selection.keeps(pair["premise"], pair["premise"], holdout_modulus):
            counts["not_selected"] += 1
        elif pair["label"] == NO_CONSENSUS:
            counts["no_consensus"] += 1
        else:
            yield line_number, pair


@DatasetReader.register("snli_jsonl")
class SnliJsonlReader(DatasetReader):
    """SNLI jsonl -> ``premise``, ``hypothesis`` (TextFields), ``label``, ``metadata``.

    # Parameters
    tokenizer : defaults to ``spacy_blank`` (spaCy's rule-based English tokenizer, no model).
    token_indexers : e.g. ``{"tokens": single_id}`` for the baseline, plus
        ``{"elmo": elmo_characters}`` for ELMo. Default: ``{"tokens": single_id}``.
    holdout_modulus : 1 / (share of pairs in ``#holdout``); see the module docstring.
    """

    def __init__(
        self,
        tokenizer: Optional[Tokenizer] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        holdout_modulus: int = 10,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if holdout_modulus < 2:
            raise ConfigurationError(f"holdout_modulus must be at least 2, got {holdout_modulus}")
        self.tokenizer = tokenizer or SpacyBlankTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.holdout_modulus = holdout_modulus

    def _read(self, file_path: str) -> Iterable[Instance]:
        path = split_path(file_path, DATASET)[0]
        counts: Dict[str, int] = {}
        kept = 0
        for line_number, pair in selected_pairs(file_path, self.holdout_modulus, counts):
            try:
                instance = self.text_to_instance(pair["premise"], pair["hypothesis"], pair["label"], pair["pair_id"])
            except ValueError as error:  # a pair without tokens
                raise DataFileError(f"{path}, line {line_number}: {error}") from None
            kept += 1
            yield instance
        not_read = counted(counts["not_selected"], "pair")
        side = "" if not counts["suffix"] else f" ({counts['suffix']}: {not_read} not selected)"
        skipped = counts["no_consensus"]
        logger.info("SNLI %s: read %s, skipped %d with gold label '-'%s", path, counted(kept, "pair"), skipped, side)

    def text_to_instance(
        self,
        premise: str,
        hypothesis: str,
        label: Optional[str] = None,
        pair_id: Optional[str] = None,
    ) -> Instance:
        premise_tokens = self.tokenizer.tokenize(premise)
        hypothesis_tokens = self.tokenizer.tokenize(hypothesis)
        for name, text, tokens in (("premise", premise, premise_tokens), ("hypothesis", hypothesis, hypothesis_tokens)):
            if not tokens:
                raise ValueError(f"the {name} {text!r} has no tokens; both sentences of a pair must contain text")
        fields: Dict[str, Any] = {
            "premise": TextField(premise_tokens, self.token_indexers),
            "hypothesis": TextField(hypothesis_tokens, self.token_indexers),
            "metadata": MetadataField(
                {
                    "premise_tokens": [t.text for t in premise_tokens],
                    "hypothesis_tokens": [t.text for t in hypothesis_tokens],
                    "pair_id": pair_id,
                }
            ),
        }
        if label is not None:
            fields["label"] = LabelField(label)
        return Instance(fields)
