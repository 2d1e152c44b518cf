"""Archives travel both ways between the drop-in and plain AllenNLP: the drop-in's ELMo writes its state
dict under AllenNLP's names (elmo_tasks/modules/allennlp_state.py) and reads both namings.

Module level (fast): the state dicts load strictly into AllenNLP's ``ElmoTokenEmbedder`` and ``Elmo``
and give the same outputs. Archive level: a tiny config of AllenNLP's own components (``conll2003``
reader, ``simple_tagger``, ``elmo_token_embedder`` on the fixtures' biLM) trained with the drop-in on
evaluates in plain AllenNLP with equal outputs, and the reverse.
"""

import copy
import json
import sys
from pathlib import Path

import pytest
import torch
from allennlp.common import FromParams, Params
from allennlp.data import Batch
from allennlp.data.dataset_readers import Conll2003DatasetReader
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.models.archival import load_archive
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.token_embedders import ElmoTokenEmbedder as AllenNlpOwnElmoTokenEmbedder
from allennlp.modules.token_embedders import TokenEmbedder

from elmo_tasks.bilm import batch_to_ids
from elmo_tasks.modules import AllenNlpElmoTokenEmbedder, Elmo, allennlp_elmo_replaced
from elmo_tasks.modules.allennlp_compat import allennlp_elmo_is_replaced
from tests.command_runs import environment_without_ours, finished
from tests.conftest import FIXTURES_ROOT, WEIGHT_FILE, run_allennlp

# AllenNLP's ELMo takes only biLMs with skip connections: the fixtures' biLM with that flag set
SKIP_OPTIONS = str(FIXTURES_ROOT / "migrating" / "bilm_tf_options_with_skip.json")
BATCHES = [
    [["The", "cat", "sat", "."], ["Dogs", "bark", "loudly", "at", "night", "."]],
    [["A", "dog"]],
    [["The", "cat", "sat", "."], ["Dogs", "bark", "loudly", "at", "night", "."]],
]


def _perturb(module: torch.nn.Module) -> None:
    """Move every weight off the file's values, as training would (the padding row of the character
    embedding, which no real character reads, stays zero as both implementations keep it)."""
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for name, parameter in module.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator) * 0.01
            if name.endswith(("char_embedding", "_char_embedding_weights")):
                noise[0] = 0.0
            parameter.add_(noise)


def _worst_difference(theirs: torch.nn.Module, ours: torch.nn.Module) -> float:
    """Largest difference over stateful batches from fresh states, at real tokens (AllenNLP's embedder
    gives a tensor, ``Elmo`` a dict of representations)."""
    their_elmo = theirs._elmo if isinstance(theirs, AllenNlpOwnElmoTokenEmbedder) else theirs
    their_elmo._elmo_lstm._elmo_lstm.reset_states()
    ours.reset_states()
    worst = 0.0
    for sentences in BATCHES:
        ids = batch_to_ids(sentences)
        a, b = theirs(ids), ours(ids)
        pairs = (
            zip(a["elmo_representations"], b["elmo_representations"], strict=True) if isinstance(a, dict) else [(a, b)]
        )
        mask = (ids > 0).any(-1, keepdim=True)
        for x, y in pairs:
            worst = max(worst, float(((x - y) * mask).abs().max().detach()))
    return worst


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"projection_dim": 5},
        {"vocab_to_cache": ["The", "cat", "Dogs", "unseen"]},
        {"do_layer_norm": True, "requires_grad": True},
        {"scalar_mix_parameters": [0.0, 1.0, -1.0]},
    ],
)
def test_the_drop_in_embedder_saves_under_allennlps_names_and_reads_both(extra):
    ours = AllenNlpElmoTokenEmbedder(SKIP_OPTIONS, WEIGHT_FILE, dropout=0.0, **extra)
    _perturb(ours)
    state = ours.state_dict()
    theirs = AllenNlpOwnElmoTokenEmbedder(SKIP_OPTIONS, WEIGHT_FILE, dropout=0.0, **extra)
    assert list(state) == list(theirs.state_dict())  # AllenNLP's names, in AllenNLP's order
    theirs.load_state_dict(state)  # strict
    again = AllenNlpElmoTokenEmbedder(SKIP_OPTIONS, WEIGHT_FILE, dropout=0.0, **extra)
    again.load_state_dict(theirs.state_dict())
    assert _worst_difference(theirs, ours) < 1e-5
    assert _worst_difference(theirs, again) < 1e-5
    for name, tensor in again.state_dict().items():  # AllenNLP's names read back to the same tensors
        assert torch.allclose(tensor, state[name], atol=1e-6), name


def test_an_allennlp_state_read_and_written_again_is_unchanged():
    theirs = AllenNlpOwnElmoTokenEmbedder(SKIP_OPTIONS, WEIGHT_FILE, dropout=0.0, projection_dim=5)
    _perturb(theirs)
    ours = AllenNlpElmoTokenEmbedder(SKIP_OPTIONS, WEIGHT_FILE, dropout=0.0, projection_dim=5)
    ours.load_state_dict(theirs.state_dict())
    for name, tensor in ours.state_dict().items():
        assert torch.allclose(tensor, theirs.state_dict()[name], atol=1e-6), name


def test_fast_elmo_keeps_its_own_names():
    state = TokenEmbedder.from_params(
        Params({"type": "fast_elmo", "options_file": SKIP_OPTIONS, "weight_file": WEIGHT_FILE})
    ).state_dict()
    assert "bilm.token_encoder.char_embedding" in state and not any(key.startswith("_elmo.") for key in state)


class _TakesAllenNlpElmo(FromParams):
    """Like allennlp-models' biattentive classification network: an argument typed AllenNLP's ``Elmo``."""

    def __init__(self, elmo: AllenNlpElmo) -> None:
        self.elmo = elmo


def test_elmo_built_by_the_drop_in_saves_under_allennlps_names():
    arguments = {"options_file": SKIP_OPTIONS, "weight_file": WEIGHT_FILE, "num_output_representations": 2}
    arguments.update(dropout=0.0, vocab_to_cache=["The", "cat"])
    with allennlp_elmo_replaced():
        ours = _TakesAllenNlpElmo.from_params(Params({"elmo": copy.deepcopy(arguments)})).elmo
    assert type(ours) is Elmo
    _perturb(ours)
    theirs = AllenNlpElmo(**arguments)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict(ours.state_dict())
    assert _worst_difference(theirs, ours) < 1e-5
    # built in Python, ours keeps our names (and reads AllenNLP's)
    direct = Elmo(**arguments)
    assert "bilm.token_encoder.char_embedding" in direct.state_dict()
    direct.load_state_dict(theirs.state_dict())
    assert _worst_difference(theirs, direct) < 1e-5


# ---- whole archives: a tiny config of AllenNLP's own components ----------------------------------


def _tagger_config(tmp_path: Path, scheduler: bool) -> str:
    """``simple_tagger`` over ``elmo_token_embedder`` (AllenNLP's components only, absolute paths), with
    AllenNLP's ``reduce_on_plateau`` when ``scheduler`` (it fails on torch 2.x without the drop-in)."""
    config = {
        "dataset_reader": {
            "type": "conll2003",
            "tag_label": "ner",
            "token_indexers": {"tokens": {"type": "single_id"}, "elmo": {"type": "elmo_characters"}},
        },
        "train_data_path": str(FIXTURES_ROOT / "ner" / "train.txt"),
        "validation_data_path": str(FIXTURES_ROOT / "ner" / "dev.txt"),
        "model": {
            "type": "simple_tagger",
            "text_field_embedder": {
                "token_embedders": {
                    "tokens": {"type": "embedding", "embedding_dim": 8},
                    "elmo": {
                        "type": "elmo_token_embedder",
                        "options_file": SKIP_OPTIONS,
                        "weight_file": WEIGHT_FILE,
                        "dropout": 0.0,
                        "projection_dim": 12,
                        "requires_grad": True,
                    },
                }
            },
            "encoder": {"type": "lstm", "input_size": 20, "hidden_size": 8, "bidirectional": True},
        },
        "data_loader": {"batch_size": 8},
        "trainer": {"optimizer": {"type": "adam", "lr": 0.01}, "num_epochs": 1},
    }
    if scheduler:
        config["trainer"]["learning_rate_scheduler"] = {"type": "reduce_on_plateau", "factor": 0.5, "patience": 0}
    path = tmp_path / ("tagger_with_scheduler.json" if scheduler else "tagger.json")
    path.write_text(json.dumps(config))
    return str(path)


def _logits(archive: str, drop_in: bool) -> torch.Tensor:
    if drop_in:
        with allennlp_elmo_replaced():
            model = load_archive(archive).model.eval()
        expected = AllenNlpElmoTokenEmbedder
    else:
        model = load_archive(archive).model.eval()
        expected = AllenNlpOwnElmoTokenEmbedder
    assert type(model.text_field_embedder._token_embedders["elmo"]) is expected
    reader = Conll2003DatasetReader(
        tag_label="ner", token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    )
    instances = list(reader.read(str(FIXTURES_ROOT / "ner" / "dev.txt")))
    for instance in instances:
        instance.index_fields(model.vocab)
    with torch.no_grad():  # one batch: a stateful ELMo gives the same numbers only over the same batches
        return model(**Batch(instances).as_tensor_dict())["logits"]


def _evaluate(archive: str, output: Path) -> dict:
    run_allennlp("evaluate", archive, str(FIXTURES_ROOT / "ner" / "dev.txt"), "--output-file", str(output))
    return json.loads(output.read_text())


@pytest.fixture(scope="module")
def trained_with_the_drop_in(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("drop_in")
    with allennlp_elmo_replaced():
        run_allennlp("train", _tagger_config(directory, scheduler=True), "-s", str(directory / "run"))
    return directory / "run"


@pytest.mark.slow
def test_an_archive_trained_with_the_drop_in_evaluates_in_plain_allennlp(trained_with_the_drop_in, tmp_path):
    archive = str(trained_with_the_drop_in / "model.tar.gz")
    state = torch.load(trained_with_the_drop_in / "best.th", map_location="cpu")
    elmo = "text_field_embedder.token_embedder_elmo._elmo."
    assert elmo + "_elmo_lstm._elmo_lstm.forward_layer_0.input_linearity.weight" in state  # AllenNLP's names
    assert not allennlp_elmo_is_replaced()
    plain, ours = _logits(archive, drop_in=False), _logits(archive, drop_in=True)
    assert torch.allclose(plain, ours, atol=1e-5)
    metrics_plain = _evaluate(archive, tmp_path / "plain.json")
    with allennlp_elmo_replaced():
        metrics_ours = _evaluate(archive, tmp_path / "ours.json")
    assert metrics_plain.keys() == metrics_ours.keys()
    for key, value in metrics_plain.items():
        assert value == pytest.approx(metrics_ours[key], abs=1e-5), key


@pytest.mark.slow
def test_an_archive_trained_with_allennlps_elmo_evaluates_with_the_drop_in(tmp_path):
    run_allennlp("train", _tagger_config(tmp_path, scheduler=False), "-s", str(tmp_path / "run"))
    archive = str(tmp_path / "run" / "model.tar.gz")
    plain, ours = _logits(archive, drop_in=False), _logits(archive, drop_in=True)
    assert torch.allclose(plain, ours, atol=1e-5)
    metrics_plain = _evaluate(archive, tmp_path / "plain.json")
    with allennlp_elmo_replaced():
        metrics_ours = _evaluate(archive, tmp_path / "ours.json")
    for key, value in metrics_plain.items():
        assert value == pytest.approx(metrics_ours[key], abs=1e-5), key


@pytest.mark.slow
def test_plain_allennlp_without_our_plugin_evaluates_the_drop_ins_archive(trained_with_the_drop_in, tmp_path):
    """``allennlp evaluate`` in a folder with no plugins file and a HOME without one: AllenNLP alone."""
    archive = str(trained_with_the_drop_in / "model.tar.gz")
    output = tmp_path / "metrics.json"
    command = [str(Path(sys.executable).parent / "allennlp"), "evaluate", archive, str(FIXTURES_ROOT / "ner/dev.txt")]
    environment = environment_without_ours(HOME=str(tmp_path), OMP_NUM_THREADS="1", PYTHONPATH="")
    completed = finished(command + ["--output-file", str(output)], tmp_path, environment)
    assert "elmo_tasks" not in completed.stderr  # nothing of ours was loaded
    with allennlp_elmo_replaced():
        ours = _evaluate(archive, tmp_path / "ours.json")
    plain = json.loads(output.read_text())
    for key, value in ours.items():
        assert plain[key] == pytest.approx(value, abs=1e-5), key
