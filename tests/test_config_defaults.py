"""The environment defaults the experiments read: the real data's folder and what happens when it is missing."""

import logging

from elmo_tasks.config_defaults import DEFAULTS, apply_defaults
from tests.conftest import ROOT


def test_the_real_data_defaults_to_a_folder_of_the_checkout():
    assert DEFAULTS["ELMO_TASKS_SHARED_DATA"] == "data"
    assert "/data/" in (ROOT / ".gitignore").read_text().splitlines()


def test_full_data_without_its_folder_says_where_to_put_it(monkeypatch, tmp_path, caplog):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ELMO_TASKS_DATA", "full")
    monkeypatch.delenv("ELMO_TASKS_SHARED_DATA")
    with caplog.at_level(logging.WARNING, logger="elmo_tasks.config_defaults"):
        apply_defaults()
    assert "ELMO_TASKS_SHARED_DATA=data, which is not a folder" in caplog.text
    assert str(tmp_path) in caplog.text and "docs/DATA.md" in caplog.text


def test_full_data_with_its_folder_and_fixtures_warn_about_nothing(monkeypatch, tmp_path, caplog):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()  # full data with its folder; fixtures need none
    monkeypatch.delenv("ELMO_TASKS_SHARED_DATA")
    for data in ("full", "fixtures"):
        monkeypatch.setenv("ELMO_TASKS_DATA", data)
        with caplog.at_level(logging.WARNING, logger="elmo_tasks.config_defaults"):
            apply_defaults()
    assert caplog.text == ""
