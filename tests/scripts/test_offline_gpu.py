"""scripts/offline_gpu/: the GPU checks' kit, the files set aside, and the checks' runner (smoke mode)."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary

from tests.conftest import ROOT

SCRIPTS = ROOT / "scripts" / "offline_gpu"
spec = importlib.util.spec_from_file_location("ner_vectors", SCRIPTS / "ner_vectors.py")
assert spec is not None and spec.loader is not None
ner_vectors = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ner_vectors)

NER_FIXTURES = [ROOT / "fixtures" / "ner" / name for name in ("train.txt", "dev.txt", "test.txt")]


def _vectors_file(path: Path, words: List[str]) -> None:
    lines = [f"{word} {i * 0.5:.6f} {-i * 0.25:.6f}\n" for i, word in enumerate(words)]
    path.write_text("".join(lines), encoding="utf-8")


def _ner_vocabulary(vectors: Path, monkeypatch: pytest.MonkeyPatch) -> Dict[str, int]:
    """The word vocabulary the NER experiment builds on the fixtures with these vectors."""
    monkeypatch.setenv("ELMO_TASKS_WORD_VECTORS", str(vectors))
    params = Params.from_file(
        str(ROOT / "experiments" / "ner_elmo.jsonnet"), ext_vars={**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    )
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = [
        instance
        for key in ("train_data_path", "validation_data_path", "test_data_path")
        for instance in reader.read(str(ROOT / params[key]))
    ]
    vocabulary = Vocabulary.from_params(params.pop("vocabulary"), instances=instances)
    return vocabulary.get_token_to_index_vocabulary("tokens")


def test_cut_vectors_keep_the_lines_of_the_conll_words_and_the_same_vocabulary(tmp_path, monkeypatch):
    words = sorted(ner_vectors.conll_words(NER_FIXTURES))
    assert "-docstart-" not in words and words == [w.lower() for w in words] and len(words) > 20
    # Every fixture word, words the fixtures lack, and a cased copy of a fixture word, which the
    # lowercasing indexer never asks for.
    full = tmp_path / "full.txt"
    cased = next(word for word in words if word.isalpha()).capitalize()
    _vectors_file(full, ["zzunseen", *words[::2], cased, *words[1::2], "qqnever"])
    cut = tmp_path / "cut.txt"
    assert ner_vectors.main([str(full), str(cut), *map(str, NER_FIXTURES)]) == 0
    full_lines = full.read_text(encoding="utf-8").splitlines(keepends=True)
    cut_lines = cut.read_text(encoding="utf-8").splitlines(keepends=True)
    assert cut_lines == [line for line in full_lines if line.split(" ", 1)[0] in set(words)]
    assert len(cut_lines) == len(words)
    # What matters: the experiment gives the same words a row with either file.
    with_full = _ner_vocabulary(full, monkeypatch)
    assert with_full == _ner_vocabulary(cut, monkeypatch)
    assert "zzunseen" not in with_full and set(words) <= set(with_full)


def _git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)


def test_files_set_aside_come_back_from_their_folder_or_from_git(tmp_path):
    repo = tmp_path / "checkout"
    script = repo / "scripts" / "offline_gpu" / "set_aside.sh"
    script.parent.mkdir(parents=True)
    shutil.copy(SCRIPTS / "set_aside.sh", script)
    names = [f"elmo_tasks/pretrained/{task}/model.tar.gz" for task in ("coref", "ner", "snli", "squad", "srl", "sst5")]
    names.append("elmo_tasks/pretrained/bilm_small/softmax.npz")
    for i, name in enumerate(names):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(os.urandom(1000 + i))
    kept = repo / "elmo_tasks/pretrained/bilm_small/weights.hdf5"
    kept.write_bytes(b"weights")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "files")
    original = {name: (repo / name).read_bytes() for name in names}
    folder = tmp_path / "aside"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(script), *args], cwd=tmp_path, capture_output=True, text=True)

    assert run("aside", str(folder)).returncode == 0
    assert not any((repo / name).exists() for name in names) and kept.exists()
    assert {name: (folder / name).read_bytes() for name in names} == original
    assert run("back", str(folder)).returncode == 0
    assert {name: (repo / name).read_bytes() for name in names} == original
    # The folder lost: git gives them back.
    assert run("aside", str(folder)).returncode == 0
    shutil.rmtree(folder)
    back = run("back", str(folder))
    assert back.returncode == 0, back.stderr
    assert {name: (repo / name).read_bytes() for name in names} == original
    wrong = run("sideways")
    assert wrong.returncode == 2 and "say aside or back" in wrong.stderr


@pytest.mark.slow
def test_the_checks_run_end_to_end_in_smoke_mode(tmp_path):
    """Every step of run_checks.sh on the CPU (tiny sizes, the NER fixtures, one epoch), without a kit."""
    out = tmp_path / "out"
    env = {
        **os.environ,
        "OUT": str(out),
        "ELMO_TASKS_CHECK_SMOKE": "1",
        "ELMO_TASKS_KIT": str(tmp_path / "no_kit"),
        "PYTHON": sys.executable,
        "NER_EPOCHS": "1",
    }
    finished = subprocess.run(
        ["bash", str(SCRIPTS / "run_checks.sh")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert finished.returncode == 0, finished.stderr
    summary = (out / "summary.txt").read_text(encoding="utf-8").splitlines()
    assert [line.split()[:3] for line in summary] == [
        [name, "exit", "0"] for name in ("env", "cuda_tests", "gpu_check", "embed_profile", "ner")
    ], summary
    assert "allennlp and elmo_tasks import" in (out / "env.log").read_text(encoding="utf-8")
    assert json.loads((out / "gpu_check.json").read_text(encoding="utf-8"))["rows"]
    assert "| AllenNLP |" in (out / "embed_profile.log").read_text(encoding="utf-8")
    ner = json.loads((out / "ner_metrics.json").read_text(encoding="utf-8"))
    assert len(ner["epochs"]) == 1 and "f1-measure-overall" in ner["test"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "summary.txt",
            "env.log",
            "cuda_tests.log",
            "gpu_check.log",
            "gpu_check.json",
            "embed_profile.log",
            "ner.log",
            "ner_metrics.json",
        ]
    )
