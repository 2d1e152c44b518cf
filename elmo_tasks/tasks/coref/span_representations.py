"""Word and span representations of the coreference model, with memory that stays flat on long documents.

A document is a batch of sentences: they are embedded ``sentences_per_batch`` at a time (the biLM
is stateless, so a sentence's vectors do not depend on which sentences share its batch), then the
padded sentences are flattened into one row of document tokens. Outside training, the candidate
spans' mention scores (their head attention) are computed ``chunk_size`` spans at a time
(:func:`spans_in_chunks`), with exactly the numbers of one pass.
"""

from typing import Callable, Tuple, cast

import torch
from allennlp.data import TextFieldTensors
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import util

#: ``embed_spans(spans, span_mask)`` -> (batch, spans, dim), one pass over the given spans.
SpanEmbedder = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def embed_sentences(
    text_field_embedder: TextFieldEmbedder, text: TextFieldTensors, sentences_per_batch: int
) -> torch.Tensor:
    """(batch, sentences, words, dim), embedding ``sentences_per_batch`` sentences at a time."""
    some_tensor = next(iter(next(iter(text.values())).values()))
    num_sentences = some_tensor.size(1)
    pieces = []
    for first in range(0, num_sentences, sentences_per_batch):
        chunk = {
            name: {key: value[:, first : first + sentences_per_batch] for key, value in tensors.items()}
            for name, tensors in text.items()
        }
        pieces.append(text_field_embedder(chunk, num_wrapping_dims=1))
    return torch.cat(pieces, dim=1)


def document_representations(
    text_field_embedder: TextFieldEmbedder,
    context_layer: Seq2SeqEncoder,
    lexical_dropout: torch.nn.Dropout,
    text: TextFieldTensors,
    sentences_per_batch: int,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Word representations (after ``lexical_dropout``) and the BiLSTM states over each sentence,
    both as documents, (batch, tokens, dim), and the documents' mask."""
    sentence_mask = util.get_text_field_mask(text, num_wrapping_dims=1)  # (batch, sentences, words)
    embedded = lexical_dropout(embed_sentences(text_field_embedder, text, sentences_per_batch))
    batch, num_sentences, num_words, _ = embedded.shape
    contextual = context_layer(
        embedded.reshape(batch * num_sentences, num_words, -1),
        sentence_mask.reshape(batch * num_sentences, num_words),
    ).reshape(batch, num_sentences, num_words, -1)
    document_embedded, document_mask = flatten_sentences(embedded, sentence_mask)
    document_contextual, _ = flatten_sentences(contextual, sentence_mask)
    return document_embedded, document_contextual, document_mask


def flatten_sentences(sentence_values: torch.Tensor, sentence_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(batch, sentences, words, dim) -> (batch, document tokens, dim) and its mask."""
    batch, sentences, words = sentence_mask.shape
    flat_mask = sentence_mask.reshape(batch, sentences * words)
    lengths = flat_mask.sum(dim=1)
    longest = int(lengths.max().item())
    # A stable sort of "is padding" puts every real token first, in document order.
    order = torch.sort((~flat_mask).long(), dim=1, stable=True).indices[:, :longest]
    values = util.batched_index_select(
        sentence_values.reshape(batch, sentences * words, -1), cast(torch.LongTensor, order)
    )
    mask = torch.arange(longest, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)
    return values, mask


def spans_in_chunks(
    embed_spans: SpanEmbedder, spans: torch.Tensor, span_mask: torch.Tensor, chunk_size: int
) -> torch.Tensor:
    """``embed_spans`` of all the spans, (batch, spans, dim), ``chunk_size`` spans at a time.

    The head attention gathers a vector per word of every span, padded to the widest span: a
    (spans x max_span_width x dim) tensor that grows with the document (the model's mention scores
    sum projected words, 150 numbers each at the full-data sizes: about 280 MB for a 300-sentence
    document's 46,500 spans if all went through at once). In chunks that part of memory stays flat
    however long the document. Each chunk also carries each document's widest span (its output
    dropped), so every chunk pads to the same width as one pass does and gives exactly its numbers.
    """
    num_spans = spans.size(1)
    widths = (spans[:, :, 1] - spans[:, :, 0]).masked_fill(~span_mask, -1)
    widest = widths.argmax(dim=1, keepdim=True)  # (batch, 1)
    widest_span = util.batched_index_select(spans, cast(torch.LongTensor, widest))  # (batch, 1, 2)
    widest_mask = span_mask.gather(1, widest)
    pieces = []
    for first in range(0, num_spans, chunk_size):
        last = min(first + chunk_size, num_spans)
        chunk = embed_spans(
            torch.cat([spans[:, first:last], widest_span], dim=1),
            torch.cat([span_mask[:, first:last], widest_mask], dim=1),
        )
        pieces.append(chunk[:, :-1])
    return torch.cat(pieces, dim=1)
