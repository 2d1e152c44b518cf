"""scripts/build_bilm_corpus.py: held-out files never read; ``--domains`` keeps only the domains named;
progress in a log is whole lines."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _build(*args) -> str:
    """Runs the script with its standard error a pipe, as in a log; returns what it wrote there."""
    script = ROOT / "scripts" / "build_bilm_corpus.py"
    done = subprocess.run(
        [sys.executable, str(script), *map(str, args), "--workers", "1"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def _lm_dir(tmp_path):
    lm = tmp_path / "lm"
    (lm / "news").mkdir(parents=True)
    (lm / "news" / "abc").mkdir()
    (lm / "books").mkdir()
    (lm / "wikipedia").mkdir()
    (lm / "news" / "abc" / "science.txt").write_text("Cells divide.\n")
    (lm / "books" / "book.txt").write_text("Call me Ishmael.\n")
    (lm / "news" / "training_00.txt").write_text("Stocks fell on Monday.\nBonds rose.\n")
    (lm / "news" / "test_00.txt").write_text("Held out news.\n")
    (lm / "wikipedia" / "wiki_00.txt").write_text("Paris is a city.\n")
    (lm / "wikipedia" / "wiki_99.txt").write_text("Held out wiki.\n")
    return lm


@pytest.mark.slow  # 20 to 50 s: in `make test-all`, out of the fast suite
def test_domains_keeps_only_the_named_domains_and_never_reads_held_out_files(tmp_path):
    lm = _lm_dir(tmp_path)
    log = _build(lm, tmp_path / "all")
    # in a log, progress is whole lines, never carriage returns
    assert "\r" not in log and "4/4 files, 5 sentences" in log, log
    _build(lm, tmp_path / "news", "--domains", "news")
    everything = (tmp_path / "all" / "train.txt").read_text().splitlines()
    news = (tmp_path / "news" / "train.txt").read_text().splitlines()
    news_sentences = ["Bonds rose .", "Cells divide .", "Stocks fell on Monday ."]
    assert sorted(everything) == sorted(news_sentences + ["Call me Ishmael .", "Paris is a city ."])
    assert sorted(news) == news_sentences
    stats = json.loads((tmp_path / "news" / "corpus_stats.json").read_text())
    assert stats["sentences_per_domain"] == {"news": 3}
