"""`allennlp build-word-vectors` end to end: progress, the summary line, reuse, and one-line errors."""

import logging

import pytest

from elmo_tasks.word_vectors import check_glove_file, record_path
from elmo_tasks.word_vectors.build_command import main
from tests.conftest import FIXTURES_ROOT, run_allennlp

CORPUS = FIXTURES_ROOT / "word_vectors" / "corpus.txt"


def _run(capsys, *args):
    code = 0
    try:
        run_allennlp("build-word-vectors", *map(str, args))
    except SystemExit as exit_:
        code = exit_.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_writes_vectors_and_reuses_them(tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO)  # what `allennlp` shows
    output = tmp_path / "out" / "vectors.txt.gz"
    code, out, err = _run(
        capsys, CORPUS, output, "--dim", "8", "--min-count", "2", "--epochs", "2", "--algorithm", "fasttext"
    )
    assert code == 0, err
    assert "build-word-vectors: vocabulary: 87 words seen at least 2 times, in 320 sentences of 3,271 tokens" in err
    assert "build-word-vectors: epoch 1/2 done" in err and "build-word-vectors: epoch 2/2 done" in err
    assert not [
        record for record in caplog.records if record.name.startswith("gensim") and record.levelno < logging.WARNING
    ]
    assert out.startswith(f"build-word-vectors: wrote 87 vectors of 8 values to {output} (fasttext skipgram, 2 epochs")
    assert out.rstrip().endswith(f"and its record {output}.record.json")
    summary = check_glove_file(output, dim=8)
    assert (summary.vectors, summary.dim) == (87, 8)
    assert record_path(output).is_file()

    code, out, err = _run(
        capsys, CORPUS, output, "--dim", "8", "--min-count", "2", "--epochs", "2", "--algorithm", "fasttext"
    )
    assert code == 0 and "epoch" not in err
    assert out.startswith(f"build-word-vectors: reused {output} (87 vectors of 8 values, built ")
    assert out.rstrip().endswith("its record matches the corpus and options (--force trains again)")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dim", "0"], "dim (--dim) is 0; expected a whole number of at least 1"),
        (["--min-count", "5000"], "no word occurs at least 5000 times"),
    ],
)
def test_bad_options_are_one_line_and_status_2(tmp_path, capsys, args, message):
    # the function `allennlp build-word-vectors` runs, called as `python -m elmo_tasks.word_vectors` calls it
    with pytest.raises(SystemExit) as exit_:
        main([str(CORPUS), str(tmp_path / "v.txt"), *args])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("build-word-vectors: error: ") and message in err
    assert len(err.strip().splitlines()) == 1  # no traceback
    assert not (tmp_path / "v.txt").exists()


def test_a_missing_corpus_is_one_line(tmp_path, capsys):
    code, out, err = _run(capsys, tmp_path / "none.txt", tmp_path / "v.txt")
    assert code == 2
    assert err.strip() == (
        f"build-word-vectors: error: the corpus {tmp_path / 'none.txt'} does not exist; expected a UTF-8 text file "
        "with one sentence per line, tokens separated by spaces"
    )
