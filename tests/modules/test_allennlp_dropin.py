"""The opt-in replacement of AllenNLP's ``elmo_token_embedder`` (checked for the behaviours of
AllenNLP's elmo_token_embedder_test.py) and archives trained with AllenNLP's own ELMo."""

import copy
import importlib
import inspect
import json

import pytest
import torch
from allennlp.common import FromParams, Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Vocabulary
from allennlp.data.dataset_readers import Conll2003DatasetReader
from allennlp.data.token_indexers import (
    ELMoTokenCharactersIndexer,
    SingleIdTokenIndexer,
    TokenCharactersIndexer,
)
from allennlp.models.archival import load_archive
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.token_embedders import (
    ElmoTokenEmbedder as AllenNlpElmoTokenEmbedderOriginal,
)
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from allennlp.training.learning_rate_schedulers import ReduceOnPlateauLearningRateScheduler as AllenNlpReduceOnPlateau

import elmo_tasks.modules
from elmo_tasks.bilm import batch_to_ids
from elmo_tasks.command_start import start_command
from elmo_tasks.modules import (
    AllenNlpElmoTokenEmbedder,
    Elmo,
    ElmoAtOutput,
    ElmoTokenEmbedder,
    allennlp_elmo_replaced,
    restore_allennlp_elmo,
)
from elmo_tasks.modules.allennlp_compat import (
    ENVIRONMENT_VARIABLE,
    allennlp_elmo_is_replaced,
    apply_environment_switch,
)
from elmo_tasks.training import ReduceOnPlateauScheduler
from tests.conftest import FIXTURES_ROOT, WEIGHT_FILE, run_allennlp

SKIP_OPTIONS = str(FIXTURES_ROOT / "migrating" / "bilm_tf_options_with_skip.json")
CONFIG = "fixtures/migrating/ner_elmo_allennlp.jsonnet"
SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark", "loudly", "at", "night", "."]]


def _params(**extra) -> Params:
    return Params(
        {
            "type": "elmo_token_embedder",
            "options_file": SKIP_OPTIONS,
            "weight_file": WEIGHT_FILE,
            "dropout": 0.0,
            **extra,
        }
    )


def test_off_by_default_and_switched_on_and_off_cleanly():
    assert not allennlp_elmo_is_replaced()
    assert type(TokenEmbedder.from_params(_params())) is AllenNlpElmoTokenEmbedderOriginal
    with allennlp_elmo_replaced():
        embedder = TokenEmbedder.from_params(_params())
        assert type(embedder) is AllenNlpElmoTokenEmbedder and isinstance(embedder, ElmoTokenEmbedder)
    assert type(TokenEmbedder.from_params(_params())) is AllenNlpElmoTokenEmbedderOriginal


def test_plugin_module_and_environment_variable_switch_it_on(monkeypatch):
    try:
        importlib.import_module("elmo_tasks.modules.replace_allennlp_elmo")
        assert allennlp_elmo_is_replaced()
    finally:
        restore_allennlp_elmo()
    assert not allennlp_elmo_is_replaced()
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "1")
    importlib.reload(elmo_tasks.modules)  # importing only registers names: the switch is read where a command starts
    assert not allennlp_elmo_is_replaced()
    try:
        start_command()
        assert allennlp_elmo_is_replaced()
    finally:
        restore_allennlp_elmo()


@pytest.mark.parametrize("value", ["0", "false", "off", ""])
def test_environment_variable_off_values_leave_allennlps_elmo(monkeypatch, value):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, value)
    apply_environment_switch()
    assert not allennlp_elmo_is_replaced()


def test_environment_variable_with_an_unknown_value_stops_the_run(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "ours")
    with pytest.raises(ConfigurationError, match="ELMO_TASKS_REPLACE_ALLENNLP_ELMO='ours' is neither on"):
        apply_environment_switch()
    assert not allennlp_elmo_is_replaced()


class _TakesAllenNlpElmo(FromParams):
    """Like allennlp-models' biattentive classification network: an argument typed AllenNLP's ``Elmo``."""

    def __init__(self, elmo: AllenNlpElmo) -> None:
        self.elmo = elmo


class _AllenNlpElmoSubclass(AllenNlpElmo):
    pass


def test_allennlps_elmo_in_a_config_is_ours_only_while_switched_on():
    config = {
        "elmo": {
            "options_file": SKIP_OPTIONS,
            "weight_file": WEIGHT_FILE,
            "num_output_representations": 2,
            "dropout": 0.0,
            "do_layer_norm": True,
        }
    }
    torch.manual_seed(4)
    theirs = _TakesAllenNlpElmo.from_params(Params(copy.deepcopy(config))).elmo
    their_next_draw = torch.rand(2)
    with allennlp_elmo_replaced():
        torch.manual_seed(4)
        ours = _TakesAllenNlpElmo.from_params(Params(copy.deepcopy(config))).elmo
        assert torch.equal(torch.rand(2), their_next_draw)
        # a subclass of AllenNLP's Elmo is someone else's code: built as before
        subclass = _AllenNlpElmoSubclass.from_params(Params(copy.deepcopy(config["elmo"])))
    assert type(theirs) is AllenNlpElmo and type(ours) is Elmo and type(subclass) is _AllenNlpElmoSubclass
    assert ours.layer_norm_style == "allennlp" and ours.bilm.stateful and len(ours._scalar_mixes) == 2
    assert "from_params" not in vars(AllenNlpElmo)  # switched off again: AllenNLP's own from_params
    assert type(_TakesAllenNlpElmo.from_params(Params(copy.deepcopy(config))).elmo) is AllenNlpElmo
    worst = 0.0
    for batch in (SENTENCES, [["A", "dog"]], SENTENCES):
        ids = batch_to_ids(batch)
        a, b = theirs(ids), ours(ids)
        keep = a["mask"].unsqueeze(-1)
        for x, y in zip(a["elmo_representations"], b["elmo_representations"], strict=True):
            worst = max(worst, float(((x - y) * keep).abs().max().detach()))
    assert worst < 1e-5


class _Offline(ConnectionError):
    pass


def _offline(url, *args, **kwargs):
    raise _Offline(f"cannot fetch {url}")


def test_without_files_the_drop_in_asks_for_allennlps_default_biLM_and_fails_as_allennlp_does(monkeypatch):
    """allennlp-models' decomposable attention and fine-grained NER configs give no options_file: the drop-in
    must read AllenNLP's default biLM (its URLs, through its download cache), never another one."""
    import allennlp.modules.elmo

    import elmo_tasks.modules.elmo_token_embedder

    defaults = inspect.signature(AllenNlpElmoTokenEmbedderOriginal.__init__).parameters
    ours = inspect.signature(AllenNlpElmoTokenEmbedder.__init__).parameters
    for name in ("options_file", "weight_file"):
        assert ours[name].default == defaults[name].default and "://" in defaults[name].default
    monkeypatch.setattr(allennlp.modules.elmo, "cached_path", _offline)  # no download here: as if offline
    monkeypatch.setattr(elmo_tasks.modules.elmo_token_embedder, "cached_path", _offline)
    params = {"type": "elmo_token_embedder", "do_layer_norm": False, "dropout": 0.2}
    with pytest.raises(_Offline) as theirs:
        TokenEmbedder.from_params(Params(dict(params)))
    with allennlp_elmo_replaced(), pytest.raises(_Offline) as ours_error:
        TokenEmbedder.from_params(Params(dict(params)))
    assert str(ours_error.value) == str(theirs.value) == f"cannot fetch {defaults['options_file'].default}"


@pytest.mark.parametrize("missing", ["options_file", "weight_file"])
def test_a_null_file_is_refused_in_one_line(missing):
    with allennlp_elmo_replaced(), pytest.raises(ConfigurationError, match=f"elmo_token_embedder: {missing} is null"):
        TokenEmbedder.from_params(_params(**{missing: None}))


def test_reduce_on_plateau_is_served_by_ours_while_switched_on():
    """allennlp-models' BiDAF and ESIM configs name AllenNLP's reduce_on_plateau, which passes torch 2.x's
    ReduceLROnPlateau an argument it no longer takes."""
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    params = {"type": "reduce_on_plateau", "factor": 0.5, "mode": "max", "patience": 0}
    assert LearningRateScheduler.by_name("reduce_on_plateau") is AllenNlpReduceOnPlateau
    with allennlp_elmo_replaced():
        scheduler = LearningRateScheduler.from_params(Params(dict(params)), optimizer=optimizer)
        assert type(scheduler) is ReduceOnPlateauScheduler
    assert LearningRateScheduler.by_name("reduce_on_plateau") is AllenNlpReduceOnPlateau
    for metric in (1.0, 0.5, 0.4):
        scheduler.step(metric)
    assert optimizer.param_groups[0]["lr"] == 0.25  # two epochs without improvement, patience 0


def test_allennlp_defaults_stateful_and_allennlp_layer_norm():
    embedder = AllenNlpElmoTokenEmbedder(SKIP_OPTIONS, WEIGHT_FILE)
    assert embedder.bilm.stateful and embedder.layer_norm_style == "allennlp" and embedder.cache is None
    assert embedder.dropout.p == 0.5 and not embedder.requires_grad and embedder.projection is None


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"projection_dim": 9},
        {"do_layer_norm": True},
        {"scalar_mix_parameters": [0.0, 1.0, -1.0]},
        {"requires_grad": True},
    ],
)
def test_same_numbers_as_allennlp_embedder_over_stateful_batches(extra):
    torch.manual_seed(3)
    theirs = TokenEmbedder.from_params(_params(**extra))
    their_next_draw = torch.rand(2)
    with allennlp_elmo_replaced():
        torch.manual_seed(3)
        ours = TokenEmbedder.from_params(_params(**extra))
    assert torch.equal(torch.rand(2), their_next_draw)  # same initial weights for what follows
    assert ours.get_output_dim() == theirs.get_output_dim() == extra.get("projection_dim", 32)
    worst = 0.0
    for batch in (SENTENCES, [["A", "dog"]], SENTENCES):
        ids = batch_to_ids(batch)
        mask = (ids > 0).any(-1, keepdim=True)
        worst = max(worst, float(((theirs(ids) - ours(ids)) * mask).abs().max().detach()))
    assert worst < 1e-5
    if extra.get("requires_grad"):
        ours(batch_to_ids(SENTENCES)).sum().backward()
        assert ours.bilm.layers[1].w_state.grad is not None


def test_4d_input_with_projection_like_allennlp():
    ids = torch.stack([batch_to_ids([SENTENCES[1], SENTENCES[0]]), batch_to_ids([SENTENCES[0], SENTENCES[1]])])
    torch.manual_seed(0)
    theirs = AllenNlpElmoTokenEmbedderOriginal(SKIP_OPTIONS, WEIGHT_FILE, dropout=0.0, projection_dim=5)
    torch.manual_seed(0)
    ours = AllenNlpElmoTokenEmbedder(SKIP_OPTIONS, WEIGHT_FILE, dropout=0.0, projection_dim=5)
    out, expected = ours(ids), theirs(ids)
    assert out.shape == expected.shape == (2, 2, 6, 5)
    assert torch.allclose(out, expected, atol=1e-5)


def test_elmo_at_output_works_through_the_replaced_name():
    from allennlp.modules.text_field_embedders import TextFieldEmbedder

    with allennlp_elmo_replaced():
        text_embedder = TextFieldEmbedder.from_params(
            Params({"token_embedders": {"elmo": _params(num_output_representations=2).as_dict()}})
        )
    assert ElmoAtOutput(text_embedder, "model").elmo.num_output_representations == 2


# ---- the NER config shaped like allennlp-models' ner_elmo.jsonnet, trained both ways ----------

OVERRIDES = json.dumps({"trainer.num_epochs": 2})


@pytest.fixture(scope="module")
def allennlp_run(tmp_path_factory):
    """The fixture config trained with AllenNLP's own elmo_token_embedder."""
    directory = tmp_path_factory.mktemp("allennlp")
    run_allennlp("train", CONFIG, "-s", str(directory), "-o", OVERRIDES)
    return directory


def _fixture_batch(vocab: Vocabulary):
    reader = Conll2003DatasetReader(
        tag_label="ner",
        convert_to_coding_scheme="BIOUL",
        token_indexers={
            "tokens": SingleIdTokenIndexer(lowercase_tokens=True),
            "token_characters": TokenCharactersIndexer(min_padding_length=3),
            "elmo": ELMoTokenCharactersIndexer(),
        },
    )
    instances = list(reader.read(str(FIXTURES_ROOT / "ner" / "dev.txt")))
    for instance in instances:
        instance.index_fields(vocab)
    return [Batch(instances[i : i + 8]).as_tensor_dict() for i in range(0, len(instances), 8)]


@pytest.mark.slow
def test_unchanged_config_trains_to_the_same_numbers(allennlp_run, tmp_path):
    with allennlp_elmo_replaced():
        run_allennlp("train", CONFIG, "-s", str(tmp_path / "ours"), "-o", OVERRIDES)
    theirs = json.loads((allennlp_run / "metrics.json").read_text())
    ours = json.loads((tmp_path / "ours" / "metrics.json").read_text())
    state = torch.load(tmp_path / "ours" / "best.th", map_location="cpu")
    assert any("._elmo._elmo_lstm._token_embedder." in key for key in state)  # saved under AllenNLP's names
    for key in ("training_loss", "validation_loss", "best_validation_loss", "best_validation_f1-measure-overall"):
        assert abs(theirs[key] - ours[key]) < 1e-5, key


def test_archive_trained_with_allennlps_elmo_loads_and_predicts_the_same(allennlp_run):
    archive = str(allennlp_run / "model.tar.gz")
    theirs = load_archive(archive).model.eval()
    with allennlp_elmo_replaced():
        ours = load_archive(archive).model.eval()
    assert isinstance(ours.text_field_embedder._token_embedders["elmo"], AllenNlpElmoTokenEmbedder)
    with torch.no_grad():
        for batch in _fixture_batch(theirs.vocab):
            a, b = theirs(**batch), ours(**batch)
            assert torch.allclose(a["logits"], b["logits"], atol=1e-5)
            assert a["tags"] == b["tags"]
