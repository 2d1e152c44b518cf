"""AllenNLP 2.10.1's private attributes that elmo-tasks relies on still behave as relied on.

``elmo_tasks/allennlp_internals.py`` reads some of them (embedders, span extractors, the trainer's resume point
and best model) and replaces ``archival.cached_path``;
``elmo_tasks/modules/allennlp_compat.py`` (the drop-in) patches ``Elmo.from_params`` and
``Registrable._registry``. Each test fails with a message naming the place to fix when an AllenNLP
upgrade changes what it relies on."""

import inspect

import pytest
import torch
from allennlp.common import Registrable
from allennlp.common.from_params import FromParams
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.span_extractors import EndpointSpanExtractor, SelfAttentiveSpanExtractor
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import ElmoTokenEmbedder as AllenNlpOwnElmoTokenEmbedder
from allennlp.modules.token_embedders import Embedding, TokenEmbedder
from allennlp.training.learning_rate_schedulers import LearningRateScheduler

from elmo_tasks.allennlp_internals import (
    endpoint_width_embedding,
    head_attention,
    resolve_archive_names,
    token_embedders,
)
from elmo_tasks.modules import allennlp_compat

INTERNALS = "elmo_tasks/allennlp_internals.py"
COMPAT = "elmo_tasks/modules/allennlp_compat.py"


def _require(condition: bool, place: str, what: str) -> None:
    if not condition:
        pytest.fail(f"{place}: {what} no longer holds in this AllenNLP version; adapt {place}")


def test_token_embedders_are_the_basic_text_field_embedders_by_name():
    words, letters = Embedding(embedding_dim=3, num_embeddings=5), Embedding(embedding_dim=2, num_embeddings=4)
    embedder = BasicTextFieldEmbedder({"words": words, "letters": letters})
    try:
        found = token_embedders(embedder)
    except AttributeError as error:
        pytest.fail(f"{INTERNALS}: token_embedders: {error}; adapt {INTERNALS}")
    _require(found == {"words": words, "letters": letters}, INTERNALS, "BasicTextFieldEmbedder._token_embedders")


def test_endpoint_width_embedding_is_what_the_extractor_appends():
    torch.manual_seed(0)
    extractor = EndpointSpanExtractor(4, combination="x,y", num_width_embeddings=3, span_width_embedding_dim=2)
    try:
        width_embedding = endpoint_width_embedding(extractor)
    except AttributeError as error:
        pytest.fail(f"{INTERNALS}: endpoint_width_embedding: {error}; adapt {INTERNALS}")
    _require(isinstance(width_embedding, Embedding), INTERNALS, "EndpointSpanExtractor._span_width_embedding")
    assert width_embedding is not None
    spans = torch.tensor([[[0, 0], [1, 3], [2, 3]]])
    output = extractor(torch.randn(1, 5, 4), spans)
    expected = width_embedding(spans[..., 1] - spans[..., 0])
    _require(torch.equal(output[..., 8:], expected), INTERNALS, "x,y extractors append the width embedding")
    for other in (
        EndpointSpanExtractor(4, combination="x,y,x*y", num_width_embeddings=3, span_width_embedding_dim=2),
        EndpointSpanExtractor(
            4, combination="x,y", num_width_embeddings=3, span_width_embedding_dim=2, bucket_widths=True
        ),
        EndpointSpanExtractor(4, combination="x,y"),
    ):
        _require(endpoint_width_embedding(other) is None, INTERNALS, "_combination/_bucket_widths")


def test_head_attention_gives_the_logits_the_self_attentive_extractor_weights_by():
    torch.manual_seed(0)
    extractor = SelfAttentiveSpanExtractor(5)
    words = torch.randn(1, 6, 5)
    try:
        logits = head_attention(extractor)(words)
    except AttributeError as error:
        pytest.fail(f"{INTERNALS}: head_attention: {error}; adapt {INTERNALS}")
    _require(logits.shape == (1, 6, 1), INTERNALS, "SelfAttentiveSpanExtractor._global_attention's shape")
    found = extractor(words, torch.tensor([[[1, 4]]]))[0, 0]
    weights = torch.softmax(logits[0, 1:5, 0], dim=0)
    _require(torch.allclose(found, weights @ words[0, 1:5], atol=1e-6), INTERNALS, "_global_attention's logits")


def test_allennlps_elmo_inherits_from_params_for_the_drop_in_to_replace():
    """The drop-in sets ``Elmo.from_params`` and deletes it again, falling back on FromParams'."""
    with allennlp_compat.allennlp_elmo_replaced():
        _require(
            AllenNlpElmo.__dict__.get("from_params") is allennlp_compat._ELMO_FROM_PARAMS,
            COMPAT,
            "assigning Elmo.from_params",
        )
    if not allennlp_compat.allennlp_elmo_is_replaced():
        _require("from_params" not in AllenNlpElmo.__dict__, COMPAT, "Elmo inherits from_params from FromParams")
    inherited = getattr(FromParams.from_params, "__func__", None)
    _require(inherited is not None, COMPAT, "FromParams.from_params is a classmethod (it has __func__)")
    parameters = list(inspect.signature(inherited).parameters)
    _require(
        parameters[:4] == ["cls", "params", "constructor_to_call", "constructor_to_inspect"],
        COMPAT,
        f"from_params(cls, params, constructor_to_call, constructor_to_inspect, **extras), got {parameters}",
    )


def test_registrable_registry_maps_names_to_class_and_constructor():
    """The drop-in swaps entries of ``Registrable._registry[base][name]``, ``(class, constructor)`` pairs,
    and ``by_name`` must read them."""
    registry = getattr(Registrable, "_registry", None)
    _require(isinstance(registry, dict), COMPAT, "Registrable._registry is a dict")
    name, scheduler = allennlp_compat.ALLENNLP_NAME, allennlp_compat.SCHEDULER_NAME
    for base, key in ((TokenEmbedder, name), (LearningRateScheduler, scheduler)):
        entry = registry.get(base, {}).get(key)
        _require(
            isinstance(entry, tuple) and len(entry) == 2, COMPAT, f"Registrable._registry[{base.__name__}][{key!r}]"
        )
    with allennlp_compat.allennlp_elmo_replaced():
        _require(
            TokenEmbedder.by_name(name) is allennlp_compat.AllenNlpElmoTokenEmbedder,
            COMPAT,
            "by_name reads Registrable._registry",
        )
    if not allennlp_compat.allennlp_elmo_is_replaced():
        _require(TokenEmbedder.by_name(name) is AllenNlpOwnElmoTokenEmbedder, COMPAT, "restoring the registry")


def test_load_archive_resolves_an_archive_name_before_anything_else(monkeypatch, tmp_path):
    """``resolve_archive_names`` replaces ``allennlp.models.archival.cached_path``, which ``load_archive`` must
    call first with the name it was given (tests/conftest.py has installed it through start_command)."""
    from allennlp.models import archival

    resolve_archive_names(lambda name: name)  # installed already: changes nothing
    _require(hasattr(archival.cached_path, "_elmo_tasks_archive_names"), INTERNALS, "archival.cached_path (replaced)")
    asked = []
    replaced = archival.cached_path
    monkeypatch.setattr(archival, "cached_path", lambda name, *args, **kwargs: asked.append(name) or replaced(name))
    with pytest.raises(FileNotFoundError):
        archival.load_archive(str(tmp_path / "no.tar.gz"))
    _require(asked == [str(tmp_path / "no.tar.gz")], INTERNALS, "load_archive calling archival.cached_path first")


def test_the_trainer_keeps_its_resume_point_tracker_and_best_model_where_they_are_read():
    """``resumed_at_the_end_of_its_best_epoch``, ``best_model_file``, ``save_best_model_state`` and
    ``set_best_model_file`` read and write what ``GradientDescentTrainer`` sets in ``_maybe_restore_checkpoint``
    and uses in its epoch loop (``_try_train``), which only its source shows."""
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer
    from allennlp.training.metric_tracker import MetricTracker

    restore = GradientDescentTrainer._maybe_restore_checkpoint
    restore_source = inspect.getsource(getattr(restore, "__wrapped__", restore))
    for assigned in (
        "self._start_after_epochs_completed =",
        "self._start_after_batches_in_epoch_completed =",
        "self._metric_tracker.load_state_dict(",
        "self._best_model_filename =",
    ):
        _require(assigned in restore_source, INTERNALS, f"_maybe_restore_checkpoint: {assigned}")
    loop_source = inspect.getsource(GradientDescentTrainer._try_train)
    for used in (
        'os.path.join(self._serialization_dir, "best.th")',
        "self._moving_average.assign_average_value()",
        "self._save_model_state(self._best_model_filename)",
        "self._metric_tracker.is_best_so_far()",
        "self._ddp_wrapped_model.is_sharded",
        "self._primary",
    ):
        _require(used in loop_source, INTERNALS, f"_try_train: {used}")
    tracker = MetricTracker("+accuracy")
    tracker.add_metrics({"accuracy": 0.5})
    _require(
        tracker.state_dict()["epoch_number"] == 1 and tracker.is_best_so_far(),
        INTERNALS,
        "MetricTracker's epoch_number",
    )
