"""Lee et al. (2017)'s training crops: a document of more than N sentences is trained on one random window
of N consecutive sentences, a new window each time the document is seen (their ``truncate_example``).

Why a data collator and not the reader: AllenNLP's data loader reads its dataset once and keeps the
instances for every later epoch (unless ``max_instances_in_memory`` is set), and the vocabulary is built
from that same read. A reader that cropped would train every epoch on the windows of its first read, and
would leave the words and characters outside those windows out of the vocabulary (a word of the training
data would lose its pretrained vector). So the reader gives whole documents and
:class:`RandomWindowCollator`, the training loader's ``collate_fn``, crops each one as it goes into a
batch. The windows come from Python's ``random``, which AllenNLP seeds from the config's ``random_seed``:
the same seed draws the same windows. The validation loader keeps AllenNLP's collator, so validation and
test documents are never cropped.

A window keeps the document's indexed sentences as they are (nothing is read or indexed again), the
candidate spans that start inside it (every candidate lies within one sentence), their labels, the
speakers of its tokens and, in the metadata, the mentions that lie inside it (for the training metrics).
A mention across a window's edge is not a candidate of the window, as in Lee et al.'s code.
"""

import random
from typing import List

from allennlp.data import Instance, Token
from allennlp.data.data_loaders.data_collator import DataCollator, allennlp_collate
from allennlp.data.data_loaders.data_loader import TensorDict
from allennlp.data.fields import ListField, MetadataField, SequenceLabelField, SpanField, TensorField, TextField

from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.coref.names import WINDOW_COLLATOR
from elmo_tasks.tasks.coref.reader import clusters_inside
from elmo_tasks.tasks.instance_fields import field_of, items_of


def sentence_window(instance: Instance, first: int, count: int) -> Instance:
    """The instance of a ``coref_reader`` document cut to its sentences ``first`` .. ``first + count - 1``.

    Its fields are those the reader gives a document of those sentences, with the same candidate spans
    (shifted to the window's first token) and labels; the sentences' fields are the document's own,
    already indexed."""
    sentences = items_of(instance, "text", TextField)
    if not 0 <= first < first + count <= len(sentences):
        raise ValueError(f"a window of {count} sentences from sentence {first} does not fit {len(sentences)} sentences")
    lengths = [len(sentence.tokens) for sentence in sentences]
    begin = sum(lengths[:first])
    end = begin + sum(lengths[first : first + count])
    window = sentences[first : first + count]
    window_tokens = TextField([Token(token.text) for sentence in window for token in sentence.tokens])
    spans = items_of(instance, "spans", SpanField)
    inside = [number for number, span in enumerate(spans) if begin <= span.span_start < end]
    span_field = ListField(
        [SpanField(spans[i].span_start - begin, spans[i].span_end - begin, window_tokens) for i in inside]
    )
    speakers = field_of(instance, "speaker_ids", TensorField)
    fields = {
        "text": ListField(window),
        "spans": span_field,
        "speaker_ids": TensorField(speakers.tensor[begin:end], padding_value=speakers.padding_value),
    }
    metadata = dict(field_of(instance, "metadata", MetadataField).metadata)
    metadata.update(
        name=f"{metadata.get('name', '')} [sentences {first}-{first + count - 1}]",
        sentences=metadata["sentences"][first : first + count],
        speakers=metadata["speakers"][first : first + count],
        num_candidate_spans=len(inside),
    )
    if "span_labels" in instance.fields:
        labels = field_of(instance, "span_labels", SequenceLabelField).labels
        fields["span_labels"] = SequenceLabelField([int(labels[i]) for i in inside], span_field)
        metadata["clusters"] = [
            [tuple(span) for span in cluster] for cluster in clusters_inside(metadata["clusters"], begin, end)[0]
        ]
    fields["metadata"] = MetadataField(metadata)
    return Instance(fields)


def random_window(instance: Instance, max_sentences: int) -> Instance:
    """The instance itself if it has at most ``max_sentences`` sentences, else one window of that many
    consecutive sentences, its first drawn uniformly (Lee et al.'s ``random.randint(0, S - N)``)."""
    num_sentences = len(field_of(instance, "text", ListField).field_list)
    if num_sentences <= max_sentences:
        return instance
    return sentence_window(instance, random.randint(0, num_sentences - max_sentences), max_sentences)


@DataCollator.register(WINDOW_COLLATOR)
class RandomWindowCollator(DataCollator):
    """AllenNLP's collator on the instances cropped by :func:`random_window`: the training loader's
    ``collate_fn`` for Lee et al.'s random windows (see the module docstring).

    # Parameters
    max_sentences : the window's length in sentences (Lee et al.: 50).
    """

    def __init__(self, max_sentences: int = 50) -> None:
        self.max_sentences = positive_count(max_sentences, "max_sentences", WINDOW_COLLATOR)

    def __call__(self, instances: List[Instance]) -> TensorDict:
        return allennlp_collate([random_window(instance, self.max_sentences) for instance in instances])
