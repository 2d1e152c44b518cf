"""The harness's word-vector step: a budget with a WordVectorRecipe builds each task's vectors (sized and
cased as the task's word embedding) before the first run that reads them, hands them to the run through
ELMO_TASKS_WORD_VECTORS, records the build, and reuses both the vectors and the run the next time."""

import dataclasses
import shutil
from pathlib import Path

import pytest

from elmo_tasks.reproduction import main
from elmo_tasks.reproduction.cli import parse_args
from elmo_tasks.reproduction.plan import Plan
from elmo_tasks.reproduction.records import load_records
from elmo_tasks.reproduction.specs import WordVectorRecipe
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.reproduction.word_vectors import describe, prepare_corpus, word_embedding_shape
from elmo_tasks.word_vectors import WordVectorOptions, check_glove_file
from elmo_tasks.word_vectors.record import file_sha256
from tests.conftest import ROOT


def _with_recipe(monkeypatch, task: str, recipe: WordVectorRecipe) -> None:
    """``task``'s smoke budget with ``recipe``, as if tasks.py gave it one."""
    spec = TASKS[task]
    smoke = dataclasses.replace(spec.budgets["smoke"], word_vectors=recipe)
    monkeypatch.setitem(TASKS, task, dataclasses.replace(spec, budgets={**spec.budgets, "smoke": smoke}))


@pytest.fixture
def recipe(tmp_path):
    corpus = tmp_path / "corpus" / "train.txt"
    corpus.parent.mkdir()
    shutil.copy(ROOT / "fixtures" / "lm" / "train.txt", corpus)
    options = WordVectorOptions(min_count=1, epochs=1)
    return WordVectorRecipe(corpus=str(corpus), directory=str(tmp_path / "vectors"), options=options)


def test_the_vectors_are_built_once_recorded_and_read_by_the_run(recipe, tmp_path, monkeypatch, capsys):
    _with_recipe(monkeypatch, "ner", recipe)
    runs = tmp_path / "runs"
    asked = ["ner", "--budget", "smoke", "--variants", "baseline", "--runs-dir", str(runs), "--in-process"]
    assert main(asked) == 0
    dim, lowercase = word_embedding_shape("ner", "fixtures")
    (record,) = load_records(runs / "records")
    vectors = record["word_vectors"]
    assert vectors["options"]["dim"] == dim and vectors["options"]["lowercase"] == lowercase
    assert record["env"]["ELMO_TASKS_WORD_VECTORS"] == vectors["file"]
    summary = check_glove_file(Path(vectors["file"]), dim=dim)
    assert summary.vectors > 50
    built = record["word_vectors_built"]
    assert built["corpus_sha256"] == file_sha256(Path(recipe.corpus))
    assert built["output_sha256"] == file_sha256(Path(vectors["file"]))
    # the build is the run's first command, and the run's config starts its embedding from the file
    assert record["commands"][0] == built["command"] and "build-word-vectors" in built["command"]
    embedder = record["config_resolved"]["model"]["text_field_embedder"]["token_embedders"]["tokens"]
    assert embedder["pretrained_file"] == vectors["file"]
    report = (runs / "RESULTS.md").read_text()
    assert f"ours: word2vec {dim}-d {'lowercased' if lowercase else 'cased'}" in report
    # again: the run is reused, the vectors are not rebuilt
    capsys.readouterr()
    assert main(asked) == 0
    out = capsys.readouterr().out
    assert "reusing ner baseline seed0" in out and "build-word-vectors" not in out
    assert load_records(runs / "records")[0]["evaluated_at"] == record["evaluated_at"]
    assert file_sha256(Path(vectors["file"])) == built["output_sha256"]


def test_another_algorithm_is_another_run_with_its_own_file(recipe, monkeypatch):
    _with_recipe(monkeypatch, "ner", recipe)
    default = Plan(parse_args(["ner", "--budget", "smoke"])[0])
    fasttext = Plan(parse_args(["ner", "--budget", "smoke", "--word-vector-algorithm", "fasttext"])[0])
    variant = default.variants("ner")["baseline"]
    first, second = (plan.settings("ner", variant, None) for plan in (default, fasttext))
    assert second["word_vectors"]["options"]["algorithm"] == "fasttext"
    assert first["word_vectors"]["file"] != second["word_vectors"]["file"]
    assert first["config_sha256"] != second["config_sha256"]


def test_a_missing_corpus_without_the_text_to_build_it_fails_the_run_and_says_what_is_missing(
    recipe, tmp_path, monkeypatch, capsys
):
    _with_recipe(monkeypatch, "ner", dataclasses.replace(recipe, corpus=str(tmp_path / "absent" / "train.txt")))
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(tmp_path / "data"))  # no lm/ folder there
    asked = ["ner", "--budget", "smoke", "--variants", "baseline", "--runs-dir", str(tmp_path / "runs")]
    assert main([*asked, "--in-process"]) == 1
    out = capsys.readouterr().out
    assert f"the word vectors' corpus {tmp_path / 'absent' / 'train.txt'} is missing" in out
    assert f"the biLM's text it is built from, {tmp_path / 'data' / 'lm'}" in out
    assert "scripts/build_bilm_corpus.py" in out
    assert not (tmp_path / "absent").exists()


def test_a_missing_corpus_is_built_from_the_data_folders_lm_text_once(tmp_path, monkeypatch, capsys):
    """The harness runs scripts/build_bilm_corpus.py itself (a user's first `reproduce.py --budget mini`),
    under a lock, and a second call finds the corpus built."""
    lm = tmp_path / "data" / "lm"  # the parts scripts/build_bilm_corpus.py reads, one sentence or two each
    for folder in ("news/abc", "books", "wikipedia"):
        (lm / folder).mkdir(parents=True)
    (lm / "news" / "abc" / "science.txt").write_text("Cells divide.\n")
    (lm / "books" / "book.txt").write_text("Call me Ishmael.\n")
    (lm / "news" / "training_00.txt").write_text("Stocks fell on Monday.\nBonds rose.\n")
    (lm / "news" / "test_00.txt").write_text("Held out news.\n")  # never read
    (lm / "wikipedia" / "wiki_00.txt").write_text("Paris is a city.\n")
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(tmp_path / "data"))
    corpus = tmp_path / "runs" / "bilm_corpus" / "train.txt"
    prepare_corpus(corpus)
    assert sorted(corpus.read_text().splitlines()) == [
        "Bonds rose .",
        "Call me Ishmael .",
        "Cells divide .",
        "Paris is a city .",
        "Stocks fell on Monday .",
    ]
    assert (corpus.parent / "vocabulary" / "lm_targets.txt").exists()
    assert [path.name for path in corpus.parent.parent.iterdir() if path.name.endswith(".partial")] == []
    out = capsys.readouterr().out
    assert "building the word vectors' corpus" in out and "wrote 5 sentences" in out
    built_at = corpus.stat().st_mtime_ns
    prepare_corpus(corpus)
    assert corpus.stat().st_mtime_ns == built_at and "building" not in capsys.readouterr().out


def test_the_mini_budget_builds_ours_for_every_task_sized_as_its_embedding():
    plan = Plan(parse_args(["all", "--budget", "mini"])[0])
    sizes = {task: plan.word_vectors(task)["options"]["dim"] for task in TASKS}
    # the paper's vector sizes: Senna 50-d for NER, GloVe 6B 100-d for SRL, GloVe 840B 300-d for the rest
    assert sizes == {"squad": 300, "snli": 300, "srl": 100, "coref": 300, "ner": 50, "sst5": 300}
    assert plan.word_vectors("ner")["options"]["lowercase"] and not plan.word_vectors("snli")["options"]["lowercase"]
    assert all(plan.word_vectors(task)["corpus"] == "runs/bilm_corpus/train.txt" for task in TASKS)


def test_an_override_that_resizes_the_word_embedding_resizes_the_vectors(recipe, monkeypatch):
    _with_recipe(monkeypatch, "ner", recipe)
    resize = '{"model.text_field_embedder.token_embedders.tokens.embedding_dim": 12}'
    plan = Plan(parse_args(["ner", "--budget", "smoke", "--overrides", resize])[0])
    assert plan.word_vectors("ner")["options"]["dim"] == 12
    assert word_embedding_shape("ner", "fixtures")[0] != 12


def test_missing_task_data_fails_the_run_before_the_vectors_are_built(recipe, tmp_path, monkeypatch, capsys):
    """With ELMO_TASKS_DATA=full but no data where ELMO_TASKS_SHARED_DATA points, the run stops at once,
    naming the files, instead of after building the vectors (minutes to an hour on the real corpus)."""
    spec = TASKS["ner"]
    full_smoke = dataclasses.replace(spec.budgets["smoke"], data="full", word_vectors=recipe)
    monkeypatch.setitem(TASKS, "ner", dataclasses.replace(spec, budgets={**spec.budgets, "smoke": full_smoke}))
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(tmp_path / "no_data"))
    asked = ["ner", "--budget", "smoke", "--variants", "baseline", "--runs-dir", str(tmp_path / "runs")]
    assert main([*asked, "--in-process"]) == 1
    out = capsys.readouterr().out
    assert "ner's data is missing (from " in out
    assert f'{tmp_path / "no_data" / "conll2003" / "eng.train"}: how to get it: docs/DATA.md, "CoNLL-2003 NER"' in out
    assert f"ELMO_TASKS_SHARED_DATA={tmp_path / 'no_data'}" in out and "docs/DATA.md" in out
    assert not Path(recipe.directory).exists()


def test_table_1s_word_vectors_say_ours_and_how_many_builds_the_runs_read():
    options = {"algorithm": "word2vec", "dim": 50, "lowercase": True}

    def run(sha):
        return {"word_vectors": {"options": options}, "word_vectors_built": {"output_sha256": sha}}

    assert describe([run("aa"), run("aa")]) == "ours: word2vec 50-d lowercased"
    assert describe([run("aa"), run("bb"), run("aa")]) == "ours: word2vec 50-d lowercased (2 builds)"
    assert describe([{"env": {}}]) == "none"
