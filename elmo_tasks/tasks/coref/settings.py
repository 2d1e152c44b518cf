"""The coreference model's settings: the widths derived from them, and the checks that refuse
settings the model cannot run with (``ConfigurationError`` saying what to change)."""

from allennlp.common.checks import ConfigurationError, check_dimensions_match
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder

from elmo_tasks.modules.elmo_token_embedder import find_elmo_embedder
from elmo_tasks.tasks.coref.feedforward import LayeredFeedForward
from elmo_tasks.tasks.coref.names import MODEL

#: What to do about a width the config gives where the model would derive it.
DERIVED = "(leave it out of the config: the model derives it)"


def span_width(embedding_dim: int, context_dim: int, feature_size: int) -> int:
    """Width of g_i: the BiLSTM states at both ends, the width embedding, the head attention's sum."""
    return 2 * context_dim + feature_size + embedding_dim


def pair_width(span_dim: int, feature_size: int) -> int:
    """Width of [g_i, g_j, g_i * g_j, phi(i, j)], phi being three feature embeddings."""
    return 3 * span_dim + 3 * feature_size


def check_widths(
    text_field_embedder: TextFieldEmbedder,
    context_layer: Seq2SeqEncoder,
    mention_feedforward: LayeredFeedForward,
    antecedent_feedforward: LayeredFeedForward,
    feature_size: int,
) -> None:
    """Each layer's input width is what the layer before it gives (and the FFNNs are ones whose first
    layer the model can compute by parts)."""
    for name, feedforward in (("mention", mention_feedforward), ("antecedent", antecedent_feedforward)):
        if not isinstance(feedforward, LayeredFeedForward):
            raise ConfigurationError(
                f"{MODEL}: {name}_feedforward must be a LayeredFeedForward (elmo_tasks.tasks.coref.feedforward, "
                f"AllenNLP FeedForward's arguments), got {type(feedforward).__name__}"
            )
    embedding_dim = text_field_embedder.get_output_dim()
    check_dimensions_match(
        embedding_dim, context_layer.get_input_dim(), "the text_field_embedder's output dim",
        f"the context_layer's input_size {DERIVED}",
    )  # fmt: skip
    span_dim = span_width(embedding_dim, context_layer.get_output_dim(), feature_size)
    check_dimensions_match(
        span_dim, mention_feedforward.get_input_dim(), "the span width",
        f"the mention_feedforward's input_dim {DERIVED}",
    )  # fmt: skip
    check_dimensions_match(
        pair_width(span_dim, feature_size), antecedent_feedforward.get_input_dim(),
        "3 x the span width + 3 x feature_size", f"the antecedent_feedforward's input_dim {DERIVED}",
    )  # fmt: skip


def check_settings(
    text_field_embedder: TextFieldEmbedder,
    spans_per_word: float,
    max_antecedents: int,
    max_span_width: int,
    sentences_per_embedding_batch: int,
) -> None:
    """Pruning and batching settings in range, and a stateless biLM if ELMo is used."""
    if not 0 < spans_per_word <= 1 or max_antecedents < 1 or max_span_width < 1 or sentences_per_embedding_batch < 1:
        raise ConfigurationError(
            f"{MODEL}: needs 0 < spans_per_word <= 1, max_antecedents >= 1, max_span_width >= 1 and "
            f"sentences_per_embedding_batch >= 1; got {spans_per_word}, {max_antecedents}, {max_span_width}, "
            f"{sentences_per_embedding_batch}"
        )
    elmo = find_elmo_embedder(text_field_embedder)
    if elmo is not None and elmo.bilm.stateful:
        raise ConfigurationError(
            f"{MODEL} embeds a document's sentences in batches, which only gives the same vectors as "
            "one pass if the biLM is stateless: set stateful: false in the fast_elmo embedder"
        )


def check_dropouts(**rates: float) -> None:
    """Every dropout rate (``name``: the rate of ``name_dropout``) in [0, 1)."""
    wrong = {name: rate for name, rate in rates.items() if not 0.0 <= rate < 1.0}
    if wrong:
        raise ConfigurationError(
            f"{MODEL}: dropout rates must be in [0, 1), got "
            + ", ".join(f"{name}_dropout {rate}" for name, rate in sorted(wrong.items()))
        )
