"""``ELMO_TASKS_DATA=full`` reads the paper's data by the official file names, plain or gzipped, and
CoNLL-2012 in either of its layouts; a missing file is named with what else was looked for.

The data root is written here from the bundled fixtures, each file under its official name (the
formats are the official ones), so the tests need none of the licensed releases.
"""

import copy
import gzip
import shutil
from pathlib import Path
from typing import Dict, List

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader

from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.tasks.official_files import DATA_SECTIONS, data_file_parts, found_data_path, where_to_get
from tests.command_runs import elmo_tasks_exit_status
from tests.conftest import FIXTURES_ROOT, ROOT

DOCUMENTS_FOLDER = "conll-formatted-ontonotes-5.0/data/{split}/data/english/annotations"


def _copy(source: Path, target: Path, gzipped: bool = False) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    data = source.read_bytes()
    if source.suffix == ".gz":
        data = gzip.decompress(data)
    target.write_bytes(gzip.compress(data) if gzipped else data)


def _split_documents(source: Path, folder: Path) -> int:
    """Writes each ``#begin document`` ... ``#end document`` part of a *_gold_conll file to a file of its own
    under ``folder`` (nested as the release nests them); the number of files."""
    parts: List[List[str]] = []
    for line in source.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("#begin document"):
            parts.append([])
        parts[-1].append(line)
    for number, lines in enumerate(parts):
        target = folder / "nw" / f"doc{number:02d}" / f"part_{number:04d}.v4_gold_conll"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(lines), encoding="utf-8")
    return len(parts)


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    """The official names, some plain and some gzipped, CoNLL-2012's test split in per-document folders."""
    root = tmp_path / "data"
    _copy(FIXTURES_ROOT / "snli" / "train.jsonl", root / "snli" / "snli_1.0_train.jsonl")
    _copy(FIXTURES_ROOT / "snli" / "dev.jsonl", root / "snli" / "snli_1.0_dev.jsonl.gz", gzipped=True)
    _copy(FIXTURES_ROOT / "snli" / "test.jsonl.gz", root / "snli" / "snli_1.0_test.jsonl")
    _copy(FIXTURES_ROOT / "squad" / "train.json", root / "squad" / "train-v1.1.json.gz", gzipped=True)
    _copy(FIXTURES_ROOT / "squad" / "dev.json", root / "squad" / "dev-v1.1.json")
    conll2012, srl = root / "conll2012", FIXTURES_ROOT / "srl"  # SRL's samples have coreference columns too
    _copy(srl / "conll2012_dev.gold_conll", conll2012 / "train.english.v4_gold_conll")
    _copy(srl / "conll2012_dev.gold_conll", conll2012 / "dev.english.v4_gold_conll.gz", gzipped=True)
    assert _split_documents(srl / "conll2012_test.gold_conll", conll2012 / DOCUMENTS_FOLDER.format(split="test")) > 1
    for name, source in (("eng.train", "train.txt"), ("eng.testa", "dev.txt"), ("eng.testb", "test.txt")):
        _copy(FIXTURES_ROOT / "ner" / source, root / "conll2003" / name)
    for name in ("train.txt", "dev.txt", "test.txt"):
        gzipped = name == "dev.txt"
        _copy(FIXTURES_ROOT / "sst" / name, root / "sst" / (name + ".gz" if gzipped else name), gzipped=gzipped)
    return root


def _full_env(root: Path, monkeypatch: pytest.MonkeyPatch) -> Dict[str, str]:
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(root))
    monkeypatch.setenv("ELMO_TASKS_SRL_DATASET", "conll2012")
    return {"ELMO_TASKS_SHARED_DATA": str(root), "ELMO_TASKS_SRL_DATASET": "conll2012"}


def _read_count(config: Dict, path: str) -> int:
    reader = DatasetReader.from_params(Params(copy.deepcopy(config["dataset_reader"])))  # Params pops what it reads
    return sum(1 for _ in reader.read(path))


@pytest.mark.parametrize("task", sorted(TASKS))
def test_full_reads_every_split_by_its_official_name(task, data_root, monkeypatch):
    env = _full_env(data_root, monkeypatch)
    assert configs.missing_data_files(task, configs.run_env("full", 0, env)) == []
    config = configs.resolved_config(TASKS[task].configs["elmo"], "full", {}, env)
    paths = configs.data_paths(task, configs.run_env("full", 0, env))
    assert config["train_data_path"] == paths["train"] and config["validation_data_path"] == paths["validation"]
    for split, path in paths.items():
        assert path.startswith(str(data_root)), (split, path)  # an official file, no substitute
        assert "#" not in path, (split, path)
        assert _read_count(config, path) > 0, (task, split, path)


def test_substitutes_keep_the_mini_budgets_files(monkeypatch):
    """The mini budget's substitutes (SNLI's dev split, XQuAD's folds, CoNLL-2012's dev split) are its own
    data mode, not what ``full`` reads."""
    paths = {
        task: configs.data_paths(task, configs.run_env("substitutes", 0, {})) for task in ("snli", "squad", "coref")
    }
    assert paths["snli"]["train"].endswith("snli/snli_1.0_dev.jsonl.gz#train")
    assert paths["squad"]["train"].endswith("squad/xquad.en.json#folds-except=1,2/4")
    assert paths["coref"]["train"].endswith("conll2012/dev.english.v4_gold_conll.gz#train")
    assert all(TASKS[task].budgets["mini"].data == "substitutes" for task in TASKS)


def test_a_missing_official_file_is_listed(data_root, monkeypatch):
    env = _full_env(data_root, monkeypatch)
    (data_root / "snli" / "snli_1.0_train.jsonl").unlink()
    shutil.rmtree(data_root / "conll2012" / "conll-formatted-ontonotes-5.0")
    assert configs.missing_data_files("snli", configs.run_env("full", 0, env)) == [
        f"{data_root}/snli/snli_1.0_train.jsonl"
    ]
    assert configs.missing_data_files("coref", configs.run_env("full", 0, env)) == [
        f"{data_root}/conll2012/test.english.v4_gold_conll"
    ]


def test_each_data_folder_names_a_section_of_data_md():
    headings = [
        line[3:]
        for line in (ROOT / "docs" / "DATA.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    ]
    for folder, section in DATA_SECTIONS.items():
        assert any(heading.startswith(section) for heading in headings), (folder, section)
    assert where_to_get("data/conll2012/train.english.v4_gold_conll") == 'docs/DATA.md, "CoNLL-2012 (OntoNotes 5.0)"'
    assert where_to_get("elsewhere/file.txt") == "docs/DATA.md"


def test_plain_and_gzipped_names_find_each_other(tmp_path):
    plain, zipped = tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"
    plain.write_text("x\n")
    zipped.write_bytes(gzip.compress(b"y\n"))
    assert data_file_parts(str(tmp_path / "a.jsonl.gz")) == [str(plain)]
    assert data_file_parts(str(tmp_path / "b.jsonl")) == [str(zipped)]
    assert data_file_parts(str(plain)) == [str(plain)]
    assert found_data_path(str(tmp_path / "c.jsonl")) is None


def test_per_document_folders_are_read_in_path_order(tmp_path):
    folder = tmp_path / DOCUMENTS_FOLDER.format(split="development")
    count = _split_documents(FIXTURES_ROOT / "coref" / "dev.gold_conll", folder)
    (folder / "README").write_text("not a *_gold_conll file")
    parts = data_file_parts(str(tmp_path / "dev.english.v4_gold_conll"))
    assert len(parts) == count > 1 and parts == sorted(parts)
    assert all(part.endswith("_gold_conll") for part in parts)


@pytest.mark.parametrize(
    "name, says",
    [
        ("snli_1.0_train.jsonl", "snli_1.0_train.jsonl: no such file, with or without .gz; docs/DATA.md"),
        ("train.english.v4_gold_conll", "with or without .gz (nor its per-document folder); docs/DATA.md"),
    ],
)
def test_a_missing_file_error_names_it_and_what_was_looked_for(tmp_path, name, says):
    with pytest.raises(FileNotFoundError, match=says.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        data_file_parts(str(tmp_path / name))


def test_train_stops_before_any_work_naming_each_missing_file(tmp_path, monkeypatch, capsys):
    """``elmo-tasks train`` (and ``allennlp train``, through the same prepared command) on a data root
    without the files: one line per missing file, exit status 2, no serialization directory made."""
    root, run_dir = tmp_path / "none", tmp_path / "run"
    monkeypatch.setenv("ELMO_TASKS_DATA", "full")
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(root))
    arguments = ["train", "experiments/snli_baseline.jsonnet", "-s", str(run_dir)]
    assert elmo_tasks_exit_status(arguments, monkeypatch) == 2
    lines = capsys.readouterr().err.strip().splitlines()[-2:]
    assert lines == [
        f"elmo-tasks train: error: {key} {root}/snli/{name}: no such file, with or without .gz; "
        'how to get it: docs/DATA.md, "SNLI"'
        for key, name in (("train_data_path", "snli_1.0_train.jsonl"), ("validation_data_path", "snli_1.0_dev.jsonl"))
    ]
    assert not run_dir.exists()


def test_the_check_passes_a_config_whose_files_are_there(data_root, monkeypatch):
    from elmo_tasks.commands.train_data_check import missing_data_lines

    _full_env(data_root, monkeypatch)
    monkeypatch.setenv("ELMO_TASKS_DATA", "full")
    assert missing_data_lines("allennlp", str(ROOT / "experiments" / "coref_elmo.jsonnet"), "") == []
    assert missing_data_lines("allennlp", str(ROOT / "experiments" / "no_such.jsonnet"), "") == []  # AllenNLP says why
