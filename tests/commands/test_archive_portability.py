"""Archives survive a move: train, move the biLM files (and the archive) away, then predict and
evaluate from another working directory.

- Another biLM (a copy of bilm-tf's test model) with ``include_in_archive: ["elmo_bilm"]``: the
  archive carries the biLM's options, its weights are in the model's state dict, so after the copy
  is renamed the archive alone predicts, with the trained weights.
- The shipped biLM, named by package reference: the archive's config holds no path of the
  checkout; the reference is resolved through the installed package (here: a copy of the package's
  biLM folder somewhere else, standing in for a moved or re-cloned checkout).
"""

import json
import shutil
import tarfile
from pathlib import Path

import pytest
import torch
from allennlp.models.archival import load_archive

from elmo_tasks.bilm import BilmError, load_bilm, references, weights
from elmo_tasks.bilm.archived import ARCHIVE_FOLDER
from elmo_tasks.pretrained import SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE
from tests.conftest import BILM_TF, FIXTURES_ROOT, ROOT, run_allennlp

ELMO = "model.text_field_embedder.token_embedders.elmo"
PAIRS = [
    {"premise": "A man plays a guitar on stage.", "hypothesis": "A man performs music."},
    {"premise": "Two dogs run in the snow.", "hypothesis": "The cats are asleep."},
]


def _train(serialization_dir: Path, options_file: str, weight_file: str, archive_bilm: bool) -> Path:
    # no initializer: the check below compares the loaded biLM with its original weight file
    overrides = {
        "trainer.num_epochs": 1,
        "dataset_reader.max_instances": 24,
        "model.initializer": {"regexes": []},
        f"{ELMO}.options_file": options_file,
        f"{ELMO}.weight_file": weight_file,
    }
    # the experiments archive the biLM's options (common.task_base); without it, a moved biLM is missing
    overrides["include_in_archive"] = [ARCHIVE_FOLDER] if archive_bilm else []
    run_allennlp("train", "experiments/snli_elmo.jsonnet", "-s", str(serialization_dir), "-o", json.dumps(overrides))
    return serialization_dir / "model.tar.gz"


def _predict_and_evaluate(archive: Path, workdir: Path, evaluate: bool = True) -> list:
    workdir.mkdir(exist_ok=True)
    (workdir / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    run_allennlp(
        "predict",
        str(archive),
        "pairs.jsonl",
        "--predictor",
        "snli_pair",
        "--output-file",
        "out.jsonl",
        "--silent",
        "--include-package",
        "elmo_tasks.plugin",
        cwd=workdir,
    )
    if evaluate:
        run_allennlp(
            "evaluate",
            str(archive),
            str(FIXTURES_ROOT / "snli" / "dev.jsonl"),
            "--output-file",
            "metrics.json",
            "--include-package",
            "elmo_tasks.plugin",
            cwd=workdir,
        )
        assert 0.0 <= json.loads((workdir / "metrics.json").read_text())["accuracy"] <= 1.0
    return [json.loads(line)["label_probs"] for line in (workdir / "out.jsonl").read_text().splitlines()]


def _archived_config(archive: Path) -> str:
    with tarfile.open(archive) as tar:
        return tar.extractfile("config.json").read().decode("utf-8")


def test_an_archive_with_another_bilm_predicts_after_the_bilm_files_are_moved(tmp_path):
    bilm = tmp_path / "my_bilm"
    bilm.mkdir()
    shutil.copy(BILM_TF / "options.json", bilm / "options.json")
    shutil.copy(BILM_TF / "lm_weights.hdf5", bilm / "weights.hdf5")
    archive = _train(tmp_path / "run", str(bilm / "options.json"), str(bilm / "weights.hdf5"), archive_bilm=True)
    with tarfile.open(archive) as tar:
        carried = [name for name in tar.getnames() if name.startswith(ARCHIVE_FOLDER + "/")]
    assert len(carried) == 1 and carried[0].endswith(".json")  # the options only: the weights are in weights.th
    before = _predict_and_evaluate(archive, tmp_path / "before")

    moved_archive = tmp_path / "elsewhere" / "model.tar.gz"
    moved_archive.parent.mkdir()
    shutil.move(str(archive), moved_archive)
    shutil.rmtree(tmp_path / "run")
    bilm.rename(tmp_path / "my_bilm_moved")
    after = _predict_and_evaluate(moved_archive, tmp_path / "after")
    assert after == before

    # the biLM inside the loaded model is the trained one (from the state dict), not random
    loaded = load_archive(str(moved_archive)).model
    embedder = next(m for m in loaded.modules() if type(m).__name__ == "ElmoTokenEmbedder")
    original = load_bilm(
        str(tmp_path / "my_bilm_moved" / "options.json"), str(tmp_path / "my_bilm_moved" / "weights.hdf5")
    )
    for (name, ours), (_, theirs) in zip(
        embedder.bilm.state_dict().items(), original.state_dict().items(), strict=True
    ):
        assert torch.equal(ours, theirs), name


def test_an_archive_without_its_bilm_names_the_missing_file_and_the_fix(tmp_path):
    bilm = tmp_path / "my_bilm"
    shutil.copytree(BILM_TF, bilm)
    archive = _train(tmp_path / "run", str(bilm / "options.json"), str(bilm / "lm_weights.hdf5"), archive_bilm=False)
    shutil.rmtree(bilm)
    with pytest.raises(BilmError) as caught:
        load_archive(str(archive))
    message = str(caught.value)
    assert (
        "options file not found" in message and str(bilm) in message and 'include_in_archive: ["elmo_bilm"]' in message
    )


@pytest.mark.slow  # the shipped biLM is 7M parameters: about a minute on a quiet 2-core machine
def test_an_archive_with_the_shipped_bilm_holds_no_checkout_path(tmp_path, monkeypatch):
    archive = _train(tmp_path / "run", SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE, archive_bilm=False)
    config = _archived_config(archive)
    assert SMALL_OPTIONS_REFERENCE in config and SMALL_WEIGHT_REFERENCE in config
    assert str(ROOT) not in config and str(tmp_path) not in config
    before = _predict_and_evaluate(archive, tmp_path / "before", evaluate=False)

    # a moved checkout: the package (here, its biLM folder) lives somewhere else now
    moved_package = tmp_path / "moved_checkout" / "elmo_tasks"
    shutil.copytree(ROOT / "elmo_tasks" / "pretrained" / "bilm_small", moved_package / "pretrained" / "bilm_small")
    monkeypatch.setattr(references, "PACKAGE_ROOT", moved_package.resolve())
    opened = []
    real_open = open

    def recording_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", recording_open)
    real_h5_open = weights._open
    monkeypatch.setattr(weights, "_open", lambda path, mode: opened.append(str(path)) or real_h5_open(path, mode))
    after = _predict_and_evaluate(archive, tmp_path / "after", evaluate=False)
    monkeypatch.undo()
    assert after == before
    assert str(moved_package / "pretrained" / "bilm_small" / "options.json") in opened
    assert str(moved_package / "pretrained" / "bilm_small" / "weights.hdf5") in opened
    assert not any(path.startswith(str(ROOT / "elmo_tasks" / "pretrained")) for path in opened)


def test_package_references_resolve_inside_the_package_only():
    assert references.resolve_bilm_file(SMALL_OPTIONS_REFERENCE) == str(
        ROOT / "elmo_tasks" / "pretrained" / "bilm_small" / "options.json"
    )
    assert references.resolve_bilm_file("some/plain/path.json") == "some/plain/path.json"
    with pytest.raises(references.BilmReferenceError, match="no such file in the installed elmo_tasks package"):
        references.resolve_bilm_file("elmo_tasks:pretrained/bilm_small/missing.json")
    with pytest.raises(references.BilmReferenceError, match="must name a file inside elmo_tasks"):
        references.resolve_bilm_file("elmo_tasks:../setup.cfg")
