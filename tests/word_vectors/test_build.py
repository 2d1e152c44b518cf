"""build_word_vectors: reproducible with a seed, reused while its record matches, rebuilt when anything changes."""

import collections
import hashlib
import json
import os
import shlex
import subprocess
import sys

import numpy
import pytest

from elmo_tasks.word_vectors import (
    CorpusError,
    WordVectorOptions,
    WordVectorsError,
    build_word_vectors,
    read_glove_file,
    record_path,
)
from elmo_tasks.word_vectors import build as build_module
from elmo_tasks.word_vectors.options import ALGORITHMS
from tests.conftest import FIXTURES_ROOT, ROOT

CORPUS = FIXTURES_ROOT / "word_vectors" / "corpus.txt"
# Small and fast: the fixture has 3,271 tokens.
SMALL = WordVectorOptions(dim=10, min_count=2, epochs=3)
ANIMALS = ["cat", "dog", "horse", "rabbit", "goat", "sheep"]
VEHICLES = ["truck", "bus", "tractor", "van", "car", "lorry"]


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("algorithm", ["word2vec", "fasttext"])
def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_vectors(tmp_path, algorithm):
    options = WordVectorOptions(algorithm=algorithm, dim=10, min_count=2, epochs=2)
    first = build_word_vectors(CORPUS, tmp_path / "a.txt", options)
    second = build_word_vectors(CORPUS, tmp_path / "b.txt", options)
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert first["output_sha256"] == second["output_sha256"]
    build_word_vectors(
        CORPUS, tmp_path / "c.txt", WordVectorOptions(algorithm=algorithm, dim=10, min_count=2, epochs=2, seed=1)
    )
    words, vectors = read_glove_file(tmp_path / "a.txt")
    other_words, other_vectors = read_glove_file(tmp_path / "c.txt")
    assert words == other_words and not numpy.allclose(vectors, other_vectors, atol=1e-3)


def test_another_interpreter_with_another_hash_seed_writes_the_same_bytes_without_allennlp(tmp_path):
    calls = ""
    for algorithm in ALGORITHMS:
        options = WordVectorOptions(algorithm, dim=10, min_count=2, epochs=2)
        build_word_vectors(CORPUS, tmp_path / f"here_{algorithm}.txt", options)
        arguments = shlex.split(options.command_line(str(CORPUS), str(tmp_path / f"there_{algorithm}.txt")))[2:]
        calls += f"    main({arguments!r})\n"
    script = (
        "import sys\n"
        "from elmo_tasks.word_vectors.build_command import main\n"
        f"try:\n{calls}"
        "finally:\n"
        "    print('allennlp imported:', 'allennlp' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("allennlp imported: False")
    for algorithm in ALGORITHMS:
        here, there = tmp_path / f"here_{algorithm}.txt", tmp_path / f"there_{algorithm}.txt"
        assert here.read_bytes() == there.read_bytes(), algorithm


def test_the_record_describes_the_build(tmp_path):
    output = tmp_path / "vectors.txt"
    record = build_word_vectors(CORPUS, output, SMALL)
    assert record.pop("reused") is False
    assert json.loads(record_path(output).read_text(encoding="utf-8")) == record
    assert record_path(output).name == "vectors.txt.record.json"
    assert record["corpus_sha256"] == _sha256(CORPUS) and record["output_sha256"] == _sha256(output)
    assert record["options"] == SMALL.as_dict() and record["dim"] == 10 and record["algorithm"] == "word2vec"
    assert record["command"].startswith(f"allennlp build-word-vectors {CORPUS} {output} --algorithm word2vec")
    assert record["gensim_version"] == "4.4.0"
    counts = collections.Counter(CORPUS.read_text(encoding="utf-8").split())
    assert (record["corpus_sentences"], record["corpus_tokens"]) == (320, sum(counts.values()))
    kept = {word: count for word, count in counts.items() if count >= 2}
    words, vectors = read_glove_file(output)
    assert record["vocabulary_size"] == len(words) == len(kept) and vectors.shape == (len(kept), 10)
    # most frequent first, ties in code-point order
    assert words == sorted(kept, key=lambda word: (-kept[word], word))


def test_a_matching_record_is_reused_without_training(tmp_path, monkeypatch):
    output = tmp_path / "vectors.txt"
    built = build_word_vectors(CORPUS, output, SMALL)
    import elmo_tasks.word_vectors.train as train_module

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(train_module, "train_word_vectors", no_training)
    reused = build_word_vectors(CORPUS, output, WordVectorOptions(dim=10, min_count=2, epochs=3))
    assert reused == {**built, "reused": True}
    # a copy of the corpus elsewhere is the same corpus
    copy = tmp_path / "copy.txt"
    copy.write_bytes(CORPUS.read_bytes())
    assert build_word_vectors(copy, output, SMALL)["reused"] is True


def test_changed_options_corpus_or_output_are_built_again(tmp_path):
    output = tmp_path / "vectors.txt"
    messages = []
    build_word_vectors(CORPUS, output, SMALL)
    record = build_word_vectors(
        CORPUS, output, WordVectorOptions(dim=12, min_count=2, epochs=3), report=messages.append
    )
    assert record["reused"] is False and record["dim"] == 12 and read_glove_file(output)[1].shape[1] == 12
    assert messages[0] == f"rebuilding {output}: the options changed (dim)"

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS.read_text(encoding="utf-8") + "The cat sleeps .\n", encoding="utf-8")
    messages.clear()
    record = build_word_vectors(
        corpus, output, WordVectorOptions(dim=12, min_count=2, epochs=3), report=messages.append
    )
    assert record["reused"] is False and record["corpus_sentences"] == 321
    assert messages[0].endswith("the corpus changed (another sha256)")

    with open(output, "a", encoding="utf-8") as handle:
        handle.write("extra 0 0 0 0 0 0 0 0 0 0 0 0\n")
    messages.clear()
    build_word_vectors(corpus, output, WordVectorOptions(dim=12, min_count=2, epochs=3), report=messages.append)
    assert messages[0].endswith("the vectors file changed since it was built (another sha256)")
    assert "extra" not in output.read_text(encoding="utf-8")

    messages.clear()
    assert (
        build_word_vectors(corpus, output, WordVectorOptions(dim=12, min_count=2, epochs=3), force=True)["reused"]
        is False
    )


def test_an_interrupted_build_leaves_no_record_and_no_partial_file(tmp_path, monkeypatch):
    output = tmp_path / "vectors.txt"
    build_word_vectors(CORPUS, output, SMALL)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(build_module, "write_glove_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_word_vectors(CORPUS, output, WordVectorOptions(dim=11, min_count=2, epochs=1))
    # the old vectors, no record, no partial file; the lock file stays, unlocked (see the test below)
    assert sorted(path.name for path in tmp_path.iterdir()) == [".vectors.txt.lock", "vectors.txt"]


def test_the_vectors_learn_the_fixture_topics(tmp_path):
    output = tmp_path / "vectors.txt"
    build_word_vectors(CORPUS, output, WordVectorOptions(dim=20, min_count=2, epochs=30))
    words, vectors = read_glove_file(output)
    unit = vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)
    index = {word: row for row, word in enumerate(words)}

    def mean_similarity(group_a, group_b):
        pairs = [(a, b) for a in group_a for b in group_b if a != b]
        return numpy.mean([unit[index[a]] @ unit[index[b]] for a, b in pairs])

    within = (mean_similarity(ANIMALS, ANIMALS) + mean_similarity(VEHICLES, VEHICLES)) / 2
    assert within > mean_similarity(ANIMALS, VEHICLES) + 0.3


def test_lowercase_merges_the_cased_forms(tmp_path):
    record = build_word_vectors(
        CORPUS, tmp_path / "lower.txt", WordVectorOptions(dim=10, min_count=2, epochs=1, lowercase=True)
    )
    words, _ = read_glove_file(tmp_path / "lower.txt")
    assert "the" in words and "The" not in words and "anna" in words
    counts = collections.Counter(CORPUS.read_text(encoding="utf-8").lower().split())
    assert record["vocabulary_size"] == sum(1 for count in counts.values() if count >= 2)


def test_paths_and_corpora_that_cannot_be_used(tmp_path):
    with pytest.raises(WordVectorsError, match="is a folder; expected the path of the vectors file"):
        build_word_vectors(CORPUS, tmp_path, SMALL)
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(CORPUS.read_bytes())
    link = tmp_path / "link.txt"
    link.symlink_to(corpus)
    with pytest.raises(WordVectorsError, match="is the corpus .* writing it would destroy the corpus"):
        build_word_vectors(corpus, link, SMALL)
    (tmp_path / "file").write_text("x")
    with pytest.raises(WordVectorsError, match="is a file, not a folder"):
        build_word_vectors(corpus, tmp_path / "file" / "vectors.txt", SMALL)
    with pytest.raises(CorpusError, match=r"no word occurs at least 1000 times in its 3,271 tokens"):
        build_word_vectors(corpus, tmp_path / "v.txt", WordVectorOptions(dim=10, min_count=1000))
    assert not (tmp_path / "v.txt").exists()


def test_a_second_build_of_one_output_waits_for_the_first_and_reuses_its_vectors(tmp_path):
    """Two shells building the same vectors at once: the second does not train them again."""
    output = tmp_path / "vectors.txt"
    command = [sys.executable, "-m", "elmo_tasks.word_vectors", str(CORPUS), str(output)]
    command += ["--dim", "10", "--min-count", "2", "--epochs", "3"]
    with build_module.build_lock(build_module.lock_path(output), "the vectors"):  # this process builds first
        second = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        assert second.stderr is not None
        waiting = _first_line_with(second.stderr, "waiting for process")  # lines before it: warnings, if any
        assert f"waiting for process {os.getpid()}, which is building the word vectors {output}" in waiting
        assert not output.exists()
        first = build_module._reuse_or_build(CORPUS, output, SMALL, print, force=False)
        assert first["reused"] is False
    rest = second.communicate(timeout=120)[1]
    assert second.returncode == 0, rest
    assert f"reusing {output}" in rest and "epoch 1/3 done" not in rest  # no training of its own
    assert read_record_json(output) == {key: value for key, value in first.items() if key != "reused"}


def _first_line_with(stream, text: str) -> str:
    """The first line of ``stream`` that holds ``text``; all it read, when the stream ends without one."""
    seen = []
    for line in iter(stream.readline, ""):
        if text in line:
            return line
        seen.append(line)
    return "".join(seen)


def read_record_json(output):
    return json.loads(record_path(output).read_text(encoding="utf-8"))
