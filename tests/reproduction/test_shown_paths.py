"""The cards and the report show recorded data paths under ``$ELMO_TASKS_SHARED_DATA`` (never the folder
of the machine that made the records), and a card's commands still run in bash: read back by bash with
the variable set, each word is the recorded one with the data folder swapped."""

import shlex
import subprocess

import pytest

from elmo_tasks.reproduction.shown_paths import command_with_data_root_named, with_data_root_named

RECORDED = [
    "OMP_NUM_THREADS=1 ELMO_TASKS_DATA=full .venv/bin/allennlp evaluate runs/ner/model.tar.gz "
    "../shared/data/conll2003/eng.testb --output-file runs/ner/test_metrics.json",
    "allennlp evaluate runs/m.tar.gz '../shared/data/squad/xquad.en.json#fold=1/4' --output-file out.json",
    "allennlp train experiments/srl_elmo.jsonnet -s runs/srl -o "
    """'{"train_data_path": "/work/shared/data/conll2005/train-set.gz#sample=0.01", "trainer.num_epochs": 3}'""",
]


def _words_bash_reads(command: str, data_root: str) -> list:
    script = f'ELMO_TASKS_SHARED_DATA={shlex.quote(data_root)}; printf "%s\\0" {command}'
    output = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    return output.split("\0")[:-1]


@pytest.mark.parametrize("recorded", RECORDED)
def test_a_card_command_reads_the_data_folder_from_the_variable_in_bash(recorded):
    shown = command_with_data_root_named(recorded)
    assert "shared/data" not in shown and '"$ELMO_TASKS_SHARED_DATA"/' in shown
    expected = [
        word.replace("../shared/data/", "/elsewhere/data/").replace("/work/shared/data/", "/elsewhere/data/")
        for word in shlex.split(recorded)
    ]
    assert _words_bash_reads(shown, "/elsewhere/data") == expected


def test_commands_and_text_without_the_data_folder_are_left_as_recorded():
    plain = "python scripts/build_bilm_corpus.py $ELMO_TASKS_SHARED_DATA/lm runs/bilm_corpus"
    assert command_with_data_root_named(plain) == plain
    assert with_data_root_named("runs/word_vectors/unshared/data/x.txt") == "runs/word_vectors/unshared/data/x.txt"
    assert with_data_root_named('{"train_data_path": "../shared/data/conll2005/train-set.gz#sample=0.1"}') == (
        '{"train_data_path": "$ELMO_TASKS_SHARED_DATA/conll2005/train-set.gz#sample=0.1"}'
    )


@pytest.mark.parametrize("data_root", ["/data/elmo", "/data/elmo/", "data"])
def test_a_readers_own_data_folder_is_shown_as_the_variable_too(data_root, monkeypatch):
    """A record of the reader's own run names their data folder (as ELMO_TASKS_SHARED_DATA gave it): the card
    they ship shows the variable, and bash reads the command back with the folder swapped. Paths that only
    contain the folder's name elsewhere are left alone."""
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", data_root)
    folder = data_root.rstrip("/")
    recorded = f"allennlp evaluate runs/ner/model.tar.gz {folder}/conll2003/eng.testb --output-file runs/data/m.json"
    shown = command_with_data_root_named(recorded)
    assert shown == (
        'allennlp evaluate runs/ner/model.tar.gz "$ELMO_TASKS_SHARED_DATA"/conll2003/eng.testb '
        "--output-file runs/data/m.json"
    )
    assert _words_bash_reads(shown, "/elsewhere/data") == shlex.split(
        recorded.replace(f"{folder}/conll2003", "/elsewhere/data/conll2003")
    )
    assert with_data_root_named(f'"{folder}/sst/train.txt", "my{folder}/x"') == (
        f'"$ELMO_TASKS_SHARED_DATA/sst/train.txt", "my{folder}/x"'
    )
