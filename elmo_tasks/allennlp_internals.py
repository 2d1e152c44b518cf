"""The one place elmo-tasks reads attributes that AllenNLP 2.10.1 keeps private.

AllenNLP is pinned at 2.10.1 (``requirements/runtime.txt``), so these do not move under us, but each is a
name AllenNLP never promised: ``tests/modules/test_allennlp_internals.py`` checks every one against
the installed AllenNLP and its failure names this module and the attribute, so an upgrade breaks
here, loudly, and is fixed here. Each function says what it reads (or, for :func:`resolve_archive_names`,
replaces) and why no public interface does.
(The drop-in's patches of ``Elmo.from_params`` and ``Registrable._registry`` live in
``elmo_tasks/modules/allennlp_compat.py``; the same test file checks that they still apply.)
"""

import os
from typing import Any, Callable, Dict, Optional

import torch
from allennlp.modules.span_extractors import EndpointSpanExtractor, SelfAttentiveSpanExtractor
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding, TokenEmbedder


def token_embedders(text_field_embedder: BasicTextFieldEmbedder) -> Dict[str, TokenEmbedder]:
    """The embedders by indexer name (``_token_embedders``): ``BasicTextFieldEmbedder`` has no getter,
    and ELMo at the output must find its ``fast_elmo`` embedder by the indexer that feeds it."""
    return dict(text_field_embedder._token_embedders)


def endpoint_width_embedding(extractor: EndpointSpanExtractor) -> Optional[Embedding]:
    """The width embedding of an ``x,y`` endpoint extractor with raw (unbucketed) widths, else None
    (``_span_width_embedding``, ``_combination``, ``_bucket_widths``): coreference computes the
    extractor's output by parts (``elmo_tasks/tasks/coref/mention_scores.py``) and needs its weights."""
    if extractor._combination != "x,y" or extractor._bucket_widths:
        return None
    return extractor._span_width_embedding


def head_attention(extractor: SelfAttentiveSpanExtractor) -> torch.nn.Module:
    """The module giving each word's attention logit (``_global_attention``, (batch, tokens, 1)):
    coreference sums projected words with the extractor's own attention weights."""
    return extractor._global_attention


# the attribute our replacement of archival.cached_path carries, so that installing twice changes nothing
_NAMES_RESOLVED = "_elmo_tasks_archive_names"


def resolve_archive_names(resolve: Callable[[str], str]) -> None:
    """Makes ``load_archive`` take ``archive_file`` through ``resolve`` (a name to a path) first; idempotent.

    Replaces ``allennlp.models.archival.cached_path`` (AllenNLP's ``cached_path`` as that module imported
    it): ``load_archive``'s first step, which every archive load passes through (``allennlp predict`` and
    ``evaluate``, ``Predictor.from_path``, ``Model.from_archive``, our commands), while AllenNLP has no hook
    for archive names. Only that module's name is replaced: other files (data, word vectors) are looked up
    by AllenNLP's own ``cached_path`` as before. What ``resolve`` does not know it returns unchanged."""
    from allennlp.models import archival

    original = archival.cached_path
    if getattr(original, _NAMES_RESOLVED, False):
        return

    def cached_path_after_names(url_or_filename: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(url_or_filename, (str, os.PathLike)):
            url_or_filename = resolve(os.fspath(url_or_filename))
        return original(url_or_filename, *args, **kwargs)

    setattr(cached_path_after_names, _NAMES_RESOLVED, True)
    archival.cached_path = cached_path_after_names


# the attribute our replacement of params.evaluate_file carries, so that installing twice changes nothing
_LIBRARY_SEARCHED = "_elmo_tasks_jsonnet_library"


def search_jsonnet_library(folder: str) -> None:
    """Makes AllenNLP's jsonnet evaluation of a config file look in ``folder`` for what it imports, after
    the file's own folder; idempotent.

    Replaces ``allennlp.common.params.evaluate_file`` (``_jsonnet.evaluate_file`` as that module imported
    it), which ``Params.from_file`` calls without import paths: AllenNLP has no setting for them, and an
    experiment copied out of the checkout must still find the blocks it imports (elmo_tasks/experiments)."""
    from allennlp.common import params

    original = params.evaluate_file
    if getattr(original, _LIBRARY_SEARCHED, False):
        return

    def evaluate_file_with_library(filename: str, **kwargs: Any) -> str:
        kwargs["jpathdir"] = [*(kwargs.get("jpathdir") or []), folder]
        return original(filename, **kwargs)

    setattr(evaluate_file_with_library, _LIBRARY_SEARCHED, True)
    params.evaluate_file = evaluate_file_with_library


def resumed_at_the_end_of_its_best_epoch(trainer: Any) -> bool:
    """Whether ``--recover`` restored a ``GradientDescentTrainer`` at the end of an epoch (not mid-epoch), with
    every epoch so far validated and the last one the best so far. Reads ``_start_after_epochs_completed``,
    ``_start_after_batches_in_epoch_completed``, ``_metric_tracker``, ``_serialization_dir``, ``_primary`` and
    ``_ddp_wrapped_model``: ``_maybe_restore_checkpoint`` sets them and returns nothing, and the trainer has no
    getter. Where it holds, elmo_tasks/whole_checkpoints.py writes that epoch's ``best.th`` again."""
    epochs = trainer._start_after_epochs_completed
    if not trainer._serialization_dir or epochs == 0 or trainer._start_after_batches_in_epoch_completed != 0:
        return False
    sharded = trainer._ddp_wrapped_model is not None and trainer._ddp_wrapped_model.is_sharded
    if sharded or not trainer._primary:
        return False
    tracker = trainer._metric_tracker
    return bool(tracker.is_best_so_far()) and tracker.state_dict()["epoch_number"] == epochs


def best_model_file(trainer: Any) -> str:
    """Where a ``GradientDescentTrainer`` keeps its best model: ``best.th`` in ``_serialization_dir``, the name
    its epoch loop writes inline and the archive step reads."""
    return os.path.join(trainer._serialization_dir, "best.th")


def save_best_model_state(trainer: Any, path: str) -> None:
    """Save what a ``GradientDescentTrainer`` keeps as its best model into ``path``: its model's state, or its
    moving average's where it has one (``_moving_average``, ``_save_model_state``, as its epoch loop does
    inline)."""
    if trainer._moving_average is None:
        trainer._save_model_state(path)
    else:
        trainer._moving_average.assign_average_value()
        try:
            trainer._save_model_state(path)
        finally:
            trainer._moving_average.restore()


def set_best_model_file(trainer: Any, path: str) -> None:
    """Name ``path`` as the trainer's best model (``_best_model_filename``, read when training ends and by the
    archive step; no setter)."""
    trainer._best_model_filename = path
