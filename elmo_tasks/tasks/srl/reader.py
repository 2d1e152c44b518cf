"""Readers for CoNLL-2005 and CoNLL-2012 SRL data: one instance per predicate.

Each instance holds the sentence's ``tokens``, a binary ``predicate_indicator`` (1 on the
predicate's word), the gold ``tags`` in BIO (``B-A0``, ``I-AM-TMP``, ``B-C-A1``, ``B-R-A0``,
``B-V``: continuation and reference arguments keep their own labels, as in He et al. 2017) and
``metadata`` with what is needed to write the prediction back in the props format (the
sentence's position in the file, the target string of the props' first column, the gold props
column for exact scoring).

Sentences without a predicate give no instance; they are counted and logged, and
:func:`read_srl_sentences` (used by ``allennlp srl-props``) still yields them.

Data paths may end in suffixes that select part of a file, deterministically (the rules are
shared with the other readers in :mod:`elmo_tasks.tasks.data_selection`):

- ``#train`` / ``#holdout``: split by document (CoNLL-2012) or by sentence (CoNLL-2005); an
  item goes to the holdout side when ``crc32(document id or words) % holdout_modulus == 0``
  (about one in ten by default). Used to train on CoNLL-2012 dev, whose train split is absent.
- ``#sample=P``: keep a sentence when ``crc32(words) % 10000 < P * 10000``, e.g.
  ``train-set.gz#sample=0.01`` for the 1% sample-efficiency runs. All predicates of a kept
  sentence are kept.
- both, in either order: ``dev.english.v4_gold_conll.gz#train#sample=0.1`` keeps the sentences
  of the train-side documents that are in the 10% sample (what
  ``scripts/reproduce.py --sample-efficiency`` trains on for CoNLL-2012).
"""

import glob
import logging
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Field, Instance, TokenIndexer
from allennlp.data.fields import MetadataField, SequenceLabelField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer
from allennlp.data.tokenizers import Token

from elmo_tasks.counted_nouns import counted
from elmo_tasks.tasks.data_files import DataFileError, read_lines
from elmo_tasks.tasks.data_selection import split_path
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.official_files import data_file_parts
from elmo_tasks.tasks.srl.names import OLD_READER, READER
from elmo_tasks.tasks.srl.props import PropsSentence, parse_start_end, props_sentence, read_props, start_end_to_bio

logger = logging.getLogger(__name__)

# Not "*tags"/"*labels", so the vocabulary gives it an unknown entry for roles unseen in training.
ROLE_NAMESPACE = "srl_roles"


#: The name of SRL data errors before they were one class for every reader (kept for code that catches it).
SrlFormatError = DataFileError
#: Starts the messages about a data path's suffixes.
DATASET = "SRL"


@dataclass
class SrlSentence:
    """One sentence with its props: words, target column, one Start-End column per target."""

    words: List[str]
    props: PropsSentence
    document: str  # CoNLL-2012 document id; CoNLL-2005: the file name
    where: str  # "file, line N" of the sentence's first line


def _blocks(path: str) -> Iterator[Tuple[int, List[Tuple[int, List[str]]]]]:
    """(first line, [(line number, fields)]) per blank-line separated block of a column file."""
    rows: List[Tuple[int, List[str]]] = []
    for line_number, line in enumerate(read_lines(path), start=1):
        fields = line.split()
        if fields:
            rows.append((line_number, fields))
        elif rows:
            yield rows[0][0], rows
            rows = []
    if rows:
        yield rows[0][0], rows


def _column_count(rows: List[Tuple[int, List[str]]], path: str, file_kind: str) -> int:
    """The number of columns of a sentence's ``(line number, fields)`` rows, which must all have
    as many as the first; a row that differs is a file of another format (``file_kind`` names
    the one expected)."""
    first_line, first_fields = rows[0]
    width = len(first_fields)
    for line_number, fields in rows:
        if len(fields) != width:
            raise DataFileError(
                f"{path}, line {line_number}: {len(fields)} columns, but the sentence starting "
                f"at line {first_line} has {width}; is this {file_kind}?"
            )
    return width


def read_conll2005(path: str, props_column: int = 5) -> Iterator[SrlSentence]:
    """Sentences of a CoNLL-2005 file (``*-set.gz``: words, POS, parse, NE, sense, props) or of a
    release folder with ``words/`` and ``props/`` per-section files (read in name order).

    ``props_column`` is the index of the props' first (target) column in a single file.
    """
    if os.path.isdir(path):
        yield from _read_conll2005_folder(path)
        return
    for first_line, rows in _blocks(path):
        width = _column_count(rows, path, "a CoNLL-2005 file")
        if width <= props_column:
            raise DataFileError(
                f"{path}, line {first_line}: {width} columns, but the props start at column "
                f"{props_column + 1}; pass props_column for files with other columns"
            )
        props = props_sentence([fields[props_column:] for _, fields in rows], path, first_line)
        yield SrlSentence([fields[0] for _, fields in rows], props, path, f"{path}, line {first_line}")


def _read_conll2005_folder(folder: str) -> Iterator[SrlSentence]:
    words_files = sorted(glob.glob(os.path.join(folder, "words", "*")))
    props_files = sorted(glob.glob(os.path.join(folder, "props", "*")))
    if not words_files or len(words_files) != len(props_files):
        raise DataFileError(
            f"{folder}: expected matching files in words/ and props/ (found {len(words_files)} "
            f"and {len(props_files)}); pass a CoNLL-2005 release folder such as devel/ or test.wsj/"
        )
    for words_file, props_file in zip(words_files, props_files, strict=True):
        word_blocks = _blocks(words_file)
        for props in read_props(read_lines(props_file), props_file):
            block = next(word_blocks, None)
            if block is None or len(block[1]) != len(props.targets):
                found = "no more sentences" if block is None else f"{len(block[1])} words at line {block[0]}"
                raise DataFileError(
                    f"{props_file}, line {props.line}: {len(props.targets)} words in the props, "
                    f"but {words_file} has {found}; the two files must align"
                )
            yield SrlSentence(
                [fields[0] for _, fields in block[1]], props, props_file, f"{props_file}, line {props.line}"
            )
        if next(word_blocks, None) is not None:
            raise DataFileError(f"{words_file} has more sentences than {props_file}; the two files must align")


def read_conll2012(path: str) -> Iterator[SrlSentence]:
    """Sentences of an OntoNotes ``*_gold_conll`` file, or of every such file of the release's
    per-document folder of a split (:func:`elmo_tasks.tasks.official_files.data_file_parts`).

    Columns: document, part, word number, word, POS, parse, lemma, frameset, sense, speaker, NE,
    one SRL column per predicate, coreference. The predicate of a column is the word where its
    ``V`` phrase starts (it may sit inside another phrase: ``(C-ARG2(V*)``); its target string is
    the lemma column (the word itself where that is ``-``).
    Columns are ordered by predicate position, as the props format needs.
    """
    for part in data_file_parts(path):
        yield from _conll2012_sentences(part)


def _conll2012_sentences(path: str) -> Iterator[SrlSentence]:
    document = ""
    for first_line, rows in _blocks(path):
        content = []
        for line_number, fields in rows:
            if fields[0] == "#begin":
                document = " ".join(fields[2:]).split(";")[0].strip("()")
            elif fields[0] != "#end":
                content.append((line_number, fields))
        if not content:
            continue
        first_line = content[0][0]
        width = _column_count(content, path, "a *_gold_conll file")
        if width < 12:
            raise DataFileError(f"{path}, line {first_line}: {width} columns; *_gold_conll lines have at least 12")
        words = [fields[3] for _, fields in content]
        lemmas = [fields[6] for _, fields in content]
        columns = [[fields[k] for _, fields in content] for k in range(11, width - 1)]
        where = f"{path}, line {first_line}"
        by_position: Dict[int, List[str]] = {}
        for number, column in enumerate(columns, start=1):
            phrases = parse_start_end(column, f"{where}, SRL column {number}")
            positions = [phrase.start for phrase in phrases if phrase.label == "V"]
            if len(positions) != 1:
                raise DataFileError(
                    f"{where}: SRL column {number} has {len(positions)} V phrases; "
                    "each SRL column of a *_gold_conll file marks exactly one predicate"
                )
            if positions[0] in by_position:
                raise DataFileError(f"{where}: two SRL columns share the predicate at word {positions[0] + 1}")
            by_position[positions[0]] = column
        targets = ["-"] * len(words)
        for position in by_position:
            targets[position] = lemmas[position] if lemmas[position] != "-" else words[position]
        ordered = [by_position[position] for position in sorted(by_position)]
        yield SrlSentence(words, PropsSentence(targets, ordered, first_line), document, where)


FORMATS = {"conll2005": read_conll2005, "conll2012": read_conll2012}


def read_srl_sentences(
    file_path: str, data_format: str = "conll2005", holdout_modulus: int = 10
) -> Iterator[SrlSentence]:
    """Every selected sentence of an SRL file (path suffixes as in the module docstring)."""
    if data_format not in FORMATS:
        raise ConfigurationError(f"unknown SRL data_format {data_format!r}; use one of {', '.join(FORMATS)}")
    path, selection = split_path(file_path, DATASET)
    for sentence in FORMATS[data_format](path):
        words = " ".join(sentence.words)
        split_key = sentence.document if data_format == "conll2012" else words
        if selection.keeps(split_key, words, holdout_modulus):
            yield sentence


@DatasetReader.register(READER)
@DatasetReader.register(OLD_READER)
class SrlConllReader(DatasetReader):
    """CoNLL-2005 or CoNLL-2012 SRL files -> one instance per predicate.

    # Parameters
    data_format : ``conll2005`` (``*-set.gz`` files or release folders) or ``conll2012``
        (``*_gold_conll``).
    token_indexers : ``{"tokens": single_id}`` for the baseline, plus ``{"elmo": elmo_characters}``.
    holdout_modulus : 1 / (share of documents or sentences in ``#holdout``).
    """

    def __init__(
        self,
        data_format: str = "conll2005",
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        holdout_modulus: int = 10,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if data_format not in FORMATS:
            raise ConfigurationError(f"unknown SRL data_format {data_format!r}; use one of {', '.join(FORMATS)}")
        if holdout_modulus < 2:
            raise ConfigurationError(f"holdout_modulus must be at least 2, got {holdout_modulus}")
        self.data_format = data_format
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.holdout_modulus = holdout_modulus

    def _read(self, file_path: str) -> Iterable[Instance]:
        sentences = predicates = without_predicate = dropped_embedded = 0
        for index, sentence in enumerate(read_srl_sentences(file_path, self.data_format, self.holdout_modulus)):
            sentences += 1
            positions = sentence.props.predicate_positions
            if not positions:
                without_predicate += 1
                continue
            for position, column in zip(positions, sentence.props.columns, strict=True):
                tags, dropped = start_end_to_bio(column, sentence.where)
                dropped_embedded += dropped
                predicates += 1
                yield self.text_to_instance(
                    sentence.words,
                    position,
                    tags,
                    {"sentence_index": index, "target": sentence.props.targets[position], "gold_props": column},
                )
        logger.info(
            "SRL %s: %s, %s (instances), %s without a predicate (no instance), %s left out of the BIO tags",
            file_path,
            counted(sentences, "sentence"),
            counted(predicates, "predicate"),
            counted(without_predicate, "sentence"),
            counted(dropped_embedded, "embedded argument phrase"),
        )

    def text_to_instance(
        self,
        words: List[str],
        predicate_index: int,
        tags: Optional[List[str]] = None,
        extra_metadata: Optional[Dict] = None,
    ) -> Instance:
        if not words:
            raise ValueError("the sentence has no words")
        if not 0 <= predicate_index < len(words):
            raise ValueError(f"predicate index {predicate_index} is outside the sentence of {len(words)} words")
        text_field = TextField([Token(word) for word in words])
        indicator = [1 if i == predicate_index else 0 for i in range(len(words))]
        fields: Dict[str, Field[Any]] = {
            "tokens": text_field,
            "predicate_indicator": SequenceLabelField(
                indicator, text_field, label_namespace="predicate_indicator_tags"
            ),
        }
        if tags is not None:
            fields["tags"] = SequenceLabelField(tags, text_field, label_namespace=ROLE_NAMESPACE)
        metadata = {"words": words, "predicate_index": predicate_index, **(extra_metadata or {})}
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        field_of(instance, "tokens", TextField).token_indexers = self.token_indexers
