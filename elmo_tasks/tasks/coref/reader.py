"""Reads CoNLL-2012 ``*_gold_conll`` files into one coreference instance per document.

An instance holds the whole document: its sentences (a ListField of TextFields, so ELMo and the
BiLSTM see one sentence at a time), every candidate span up to ``max_span_width`` tokens that
stays inside a sentence (Lee et al. 2017 do the same), each span's gold cluster (or -1), each
token's speaker and the document's genre and name in the metadata.

Splitting and sampling one file by document. The CoNLL-2012 training split is not available
here, so the ``full`` experiments train on the dev file and keep part of it for model selection.
A data path may end in ``#train`` or ``#holdout``: a document goes to ``holdout`` when
``crc32(document id) % holdout_modulus == 0`` (about 1 in 10 by default), otherwise to
``train``; all parts of one OntoNotes document go to the same side. ``#sample=P`` (0 < P <= 1)
keeps a document when ``crc32(document id) % 10000 < P * 10000``, and combines with a split in
either order: ``dev.english.v4_gold_conll.gz#train#sample=0.1`` is a 10% sample of the train
side's documents. No suffix reads every document (test files, ``allennlp evaluate``). The rules
are shared with the other readers in :mod:`elmo_tasks.tasks.data_selection`.

Long training documents. With ``max_sentences = N`` a document of S > N sentences is cut into
ceil(S / N) consecutive pieces of near-equal length (e.g. 120 sentences with N = 50 give
pieces of 40), each its own instance, so no text is thrown away; clusters are restricted to
each piece. Use it for training only (the configs' ``validation_dataset_reader`` has no
``max_sentences``): evaluation needs whole documents. Lee et al. (2017) instead train on one random
window of 50 sentences of a long document, a new one each time it is seen: the `full` configs read
whole documents and crop them as they go into a batch (``training_windows.py``, which says why it is
not done here).
"""

import logging
import math
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer
from allennlp.data.fields import (
    ListField,
    MetadataField,
    SequenceLabelField,
    SpanField,
    TensorField,
    TextField,
)
from allennlp.data.token_indexers import SingleIdTokenIndexer

from elmo_tasks.counted_nouns import counted
from elmo_tasks.setting_checks import positive_count, positive_setting
from elmo_tasks.tasks.coref.conll import Cluster, ConllDocument, read_conll_documents
from elmo_tasks.tasks.coref.names import OLD_READER, READER
from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.data_selection import in_holdout as in_holdout  # re-exported: the split rule
from elmo_tasks.tasks.data_selection import split_path
from elmo_tasks.tasks.instance_fields import field_of, items_of

logger = logging.getLogger(__name__)


#: Starts the messages about a data path's suffixes.
DATASET = "CoNLL-2012"


def cut_document(document: ConllDocument, max_sentences: int) -> Tuple[List[ConllDocument], int]:
    """Consecutive pieces of at most ``max_sentences`` sentences, and how many mentions crossed a cut."""
    count = len(document.sentences)
    if count <= max_sentences:
        return [document], 0
    pieces = math.ceil(count / max_sentences)
    bounds = [round(k * count / pieces) for k in range(pieces + 1)]
    result, lost = [], 0
    token_starts = [0]
    for sentence in document.sentences:
        token_starts.append(token_starts[-1] + len(sentence))
    for number, (first, last) in enumerate(zip(bounds, bounds[1:], strict=False)):
        begin, end = token_starts[first], token_starts[last]
        clusters, crossing = clusters_inside(document.clusters, begin, end)
        lost += crossing
        result.append(
            ConllDocument(
                name=f"{document.name} [sentences {first}-{last - 1}, piece {number + 1}/{pieces}]",
                begin_line=document.begin_line,
                sentences=document.sentences[first:last],
                speakers=document.speakers[first:last],
                clusters=clusters,
                token_lines=document.token_lines[begin:end],
            )
        )
    return result, lost


def clusters_inside(clusters: Sequence[Cluster], begin: int, end: int) -> Tuple[List[Cluster], int]:
    """The mentions inside the tokens [begin, end), counted from ``begin`` (a cluster left with none is
    dropped), and how many mentions crossed ``begin`` or ``end``."""
    inside_clusters, crossing = [], 0
    for cluster in clusters:
        inside = [(s - begin, e - begin) for s, e in cluster if begin <= s and e < end]
        crossing += sum(1 for s, e in cluster if (s < begin <= e) or (s < end <= e))
        if inside:
            inside_clusters.append(inside)
    return inside_clusters, crossing


def candidate_spans(sentences: Sequence[Sequence[str]], max_span_width: int) -> List[Tuple[int, int]]:
    """Every span of 1..max_span_width tokens inside one sentence, ordered by start, then end."""
    spans = []
    offset = 0
    for sentence in sentences:
        for start in range(len(sentence)):
            for end in range(start, min(start + max_span_width, len(sentence))):
                spans.append((offset + start, offset + end))
        offset += len(sentence)
    return spans


@DatasetReader.register(READER)
@DatasetReader.register(OLD_READER)
class Conll2012CorefReader(DatasetReader):
    """CoNLL-2012 ``*_gold_conll`` (plain or .gz) -> one instance per document (or piece).

    Fields: ``text`` (ListField of one TextField per sentence), ``spans`` (ListField of
    SpanFields over document token offsets, inclusive), ``span_labels`` (gold cluster of each
    span, -1 for none; only when the document has gold clusters), ``speaker_ids`` (per token,
    numbered within the document) and ``metadata`` (name, genre, sentences, speakers,
    ``clusters``: the gold clusters as spans, exactly as in the file).

    # Parameters
    token_indexers : default ``{"tokens": single_id}``; add ``{"elmo": elmo_characters}`` for ELMo.
    max_span_width : the widest candidate span in tokens (10 in Lee et al. 2017).
    max_sentences : cut longer documents into pieces (training only; see the module docstring).
    holdout_modulus : 1 / (share of documents in ``#holdout``).
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        max_span_width: int = 10,
        max_sentences: Optional[int] = None,
        holdout_modulus: int = 10,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        positive_count(max_span_width, "max_span_width", READER)
        positive_setting(max_sentences, "max_sentences", READER, optional=True)
        if holdout_modulus < 2:
            raise ConfigurationError(f"holdout_modulus must be at least 2, got {holdout_modulus}")
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.max_span_width = max_span_width
        self.max_sentences = max_sentences
        self.holdout_modulus = holdout_modulus

    def _read(self, file_path: str) -> Iterable[Instance]:
        path, selection = split_path(file_path, DATASET)
        documents = not_selected = pieces = lost_at_cuts = 0
        mentions = unreachable = 0
        for document in read_conll_documents(path):
            if not selection.keeps(document.document_id, document.document_id, self.holdout_modulus):
                not_selected += 1
                continue
            documents += 1
            if not document.sentences:
                raise DataFileError(
                    f"{path}, line {document.begin_line}: document {document.name} has no token lines; "
                    "every document needs at least one sentence"
                )
            parts, lost = cut_document(document, self.max_sentences) if self.max_sentences else ([document], 0)
            lost_at_cuts += lost
            for part in parts:
                pieces += 1
                instance = self.text_to_instance(part.sentences, part.speakers, part.genre, part.name, part.clusters)
                metadata = field_of(instance, "metadata", MetadataField)
                mentions += metadata["num_gold_mentions"]
                unreachable += metadata["num_gold_mentions_not_candidates"]
                yield instance
        not_read = counted(not_selected, "document")
        side = "" if selection.everything else f", {selection.suffix} ({not_read} not selected)"
        logger.info(
            "CoNLL-2012 %s%s: %s -> %s; %s, %d of them not candidate spans "
            "(wider than %d tokens or across sentences); %s lost at cuts of long documents",
            path,
            side,
            counted(documents, "document"),
            counted(pieces, "instance"),
            counted(mentions, "gold mention"),
            unreachable,
            self.max_span_width,
            counted(lost_at_cuts, "mention"),
        )

    def text_to_instance(
        self,
        sentences: List[List[str]],
        speakers: Optional[List[List[str]]] = None,
        genre: str = "nw",
        name: str = "",
        gold_clusters: Optional[List[Cluster]] = None,
    ) -> Instance:
        if not sentences or not all(sentences):
            raise ValueError(f"document {name!r}: needs at least one sentence and no empty sentence")
        if speakers is None:
            speakers = [["-"] * len(sentence) for sentence in sentences]
        sentence_fields = [TextField([Token(word) for word in sentence]) for sentence in sentences]
        flat = TextField([Token(word) for sentence in sentences for word in sentence])
        spans = candidate_spans(sentences, self.max_span_width)
        speaker_numbers: Dict[str, int] = {}
        speaker_ids = [speaker_numbers.setdefault(s, len(speaker_numbers)) for row in speakers for s in row]
        span_field = ListField([SpanField(start, end, flat) for start, end in spans])
        fields = {
            "text": ListField(sentence_fields),
            "spans": span_field,
            "speaker_ids": TensorField(torch.tensor(speaker_ids, dtype=torch.long), padding_value=-1),
        }
        metadata = {
            "name": name,
            "genre": genre,
            "sentences": sentences,
            "speakers": speakers,
            "num_candidate_spans": len(spans),
        }
        if gold_clusters is not None:
            cluster_of: Dict[Tuple[int, int], int] = {}
            for number, cluster in enumerate(gold_clusters):
                for start, end in cluster:
                    cluster_of[(start, end)] = number
            labels = [cluster_of.get(span, -1) for span in spans]
            reachable = set(spans)
            metadata["clusters"] = [[tuple(span) for span in cluster] for cluster in gold_clusters]
            metadata["num_gold_mentions"] = len(cluster_of)
            metadata["num_gold_mentions_not_candidates"] = sum(1 for span in cluster_of if span not in reachable)
            fields["span_labels"] = SequenceLabelField(labels, span_field)
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        for sentence in items_of(instance, "text", TextField):
            sentence.token_indexers = self.token_indexers
