"""Ctrl-C, ``kill`` and ``kill -9`` mid-run through the real entry points of the commands that write
files from a model: ``srl-props``, ``squad-predict``, ``coref-conll``, ``export-bilm`` and
``build-word-vectors`` (issue 54). SIGINT and SIGTERM end the command within a few seconds with one
line saying what became of the output and what to run next, exit status 130 / 143; no file is left
looking complete when it is not, an earlier output keeps its bytes, and the same command run again
(in this process, to spare a second start of ``allennlp``) writes a whole output. SIGKILL runs no
clean-up: at most a hidden ``.NAME.*.partial`` is left, and the earlier output is untouched.

Each run starts ``allennlp`` afresh (about 20 s on the loaded 2-core machine), so those are slow;
``build-word-vectors`` runs without AllenNLP (``python -m elmo_tasks.word_vectors``), in about 5 s.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import FIXTURES_ROOT, ROOT, run_allennlp, untrained_archive
from tests.faults.signalled import signalled

BIN = Path(sys.executable).parent
ENV = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
EARLIER = b"an earlier output that must survive\n"
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]


def _start(command: List[str], stderr_file: Path) -> "subprocess.Popen[bytes]":
    with open(stderr_file, "wb") as stderr:
        return subprocess.Popen(command, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=stderr)


def _wait_for(process: "subprocess.Popen[bytes]", stderr_file: Path, marker: str, timeout: float = 240) -> None:
    """Until ``marker`` shows in the command's stderr (it is mid-run), or fails the test."""
    deadline = time.monotonic() + timeout
    while marker not in stderr_file.read_text(encoding="utf-8", errors="replace"):
        assert process.poll() is None, stderr_file.read_text(encoding="utf-8", errors="replace")[-3000:]
        assert time.monotonic() < deadline, f"the command never printed {marker!r}"
        time.sleep(0.1)


def _stop(process: "subprocess.Popen[bytes]", signum: int, stderr_file: Path) -> str:
    """Sends ``signum``; the command's stderr once it has ended (within 10 s, else the test fails)."""
    seconds, _ = signalled(process, signum, timeout=30)
    assert seconds < 10, "the command took more than 10 s to stop"
    return stderr_file.read_text(encoding="utf-8", errors="replace")


def _check_stopped(err: str, signum: int, returncode: int, command: str, outcome: str) -> None:
    """One line, no traceback, the shell's status; for SIGKILL only the status (nothing can run)."""
    if signum == signal.SIGKILL:
        assert returncode == -signal.SIGKILL
        return
    assert "Traceback" not in err, err[-3000:]
    name = signal.Signals(signum).name
    assert err.strip().splitlines()[-1] == f"{command}: stopped by {name}; {outcome}", err[-3000:]
    assert returncode == 128 + signum


def _left_beside(folder: Path, signum: int, expected: List[str]) -> None:
    """The folder holds ``expected``, plus (after SIGKILL only) at most one hidden partial output."""
    names = sorted(os.listdir(folder))
    partial = [name for name in names if name.startswith(".") and name.endswith(".partial")]
    assert sorted(set(names) - set(partial)) == sorted(expected), names
    assert len(partial) <= (1 if signum == signal.SIGKILL else 0), names


# --- srl-props, squad-predict, coref-conll: an untrained model of each task on a fixture repeated ------------


def _srl_input(folder: Path, copies: int) -> Path:
    text = (FIXTURES_ROOT / "srl" / "conll2005_test.txt").read_text(encoding="utf-8").rstrip("\n") + "\n\n"
    path = folder / f"srl_{copies}.txt"
    path.write_text(text * copies, encoding="utf-8")
    return path


def _squad_input(folder: Path, copies: int) -> Path:
    dataset = json.loads((FIXTURES_ROOT / "squad" / "dev.json").read_text(encoding="utf-8"))
    articles = []
    for copy in range(copies):
        for article in json.loads(json.dumps(dataset["data"])):
            for paragraph in article["paragraphs"]:
                for question in paragraph["qas"]:
                    question["id"] = f"{question['id']}_{copy}"
            articles.append(article)
    path = folder / f"squad_{copies}.json"
    path.write_text(json.dumps({"version": "1.1", "data": articles}), encoding="utf-8")
    return path


def _coref_input(folder: Path, copies: int) -> Path:
    text = (FIXTURES_ROOT / "coref" / "test.gold_conll").read_text(encoding="utf-8")
    path = folder / f"coref_{copies}.gold_conll"
    path.write_text(
        "".join(text.replace("nw/fixture/", f"nw/fixture{copy}/") for copy in range(copies)), encoding="utf-8"
    )
    return path


def _srl_whole(output: Path, source: Path) -> None:
    sentences = [block for block in source.read_text(encoding="utf-8").split("\n\n") if block.strip()]
    written = [block for block in output.read_text(encoding="utf-8").split("\n\n") if block.strip()]
    assert len(written) == len(sentences)


def _squad_whole(output: Path, source: Path) -> None:
    dataset = json.loads(source.read_text(encoding="utf-8"))
    ids = {q["id"] for article in dataset["data"] for p in article["paragraphs"] for q in p["qas"]}
    assert set(json.loads(output.read_text(encoding="utf-8"))) == ids


def _coref_whole(output: Path, source: Path) -> None:
    assert len(output.read_text(encoding="utf-8").splitlines()) == len(source.read_text(encoding="utf-8").splitlines())


# command: (experiment, input maker, copies for a long run, extra arguments, marker of mid-run, check of a whole output)
TASKS: Dict[str, tuple] = {
    "srl-props": ("srl_baseline", _srl_input, 2000, ["--batch-size", "1"], " sentences [", _srl_whole),
    "squad-predict": ("squad_baseline", _squad_input, 400, ["--batch-size", "1"], "squad-predict:", _squad_whole),
    "coref-conll": ("coref_baseline", _coref_input, 400, [], "coref-conll:", _coref_whole),
}


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> Dict[str, Path]:
    folder = tmp_path_factory.mktemp("archives")
    experiments = [task[0] for task in TASKS.values()] + ["ner_elmo"]
    return {experiment: untrained_archive(experiment, folder / experiment) for experiment in experiments}


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda signum: signal.Signals(signum).name)
@pytest.mark.parametrize("command", sorted(TASKS))
def test_a_signal_mid_run_leaves_no_partial_prediction_file_and_the_run_again_is_whole(
    archives, tmp_path, command, signum
):
    experiment, make_input, copies, extra, marker, check_whole = TASKS[command]
    if command != "srl-props" and signum == signal.SIGKILL:
        pytest.skip("these two write their output at the end: SIGKILL mid-run is the srl-props case")
    source = make_input(tmp_path, copies)
    output = tmp_path / "out" / "predicted.txt"
    output.parent.mkdir()
    output.write_bytes(EARLIER)
    stderr_file = tmp_path / "stderr.txt"
    process = _start(
        [str(BIN / "allennlp"), command, str(archives[experiment]), str(source), str(output), *extra], stderr_file
    )
    _wait_for(process, stderr_file, marker)
    time.sleep(1)  # some predictions in (srl-props: some written to its partial file)
    err = _stop(process, signum, stderr_file)
    outcome = f"{output} was not written (an earlier file there is unchanged); run the same command again"
    _check_stopped(err, signum, process.returncode, command, outcome)
    assert output.read_bytes() == EARLIER
    _left_beside(output.parent, signum, ["predicted.txt"])

    short = make_input(tmp_path, 2)
    run_allennlp(command, str(archives[experiment]), str(short), str(output), *extra)
    check_whole(output, short)


# --- export-bilm: held inside its write by a slow disk ---------------------------------------------------------

# The real `allennlp` entry point, with weights.hdf5 written as usual and then a wait, as on a slow disk:
# the export is mid-write when the test signals it (a real write of the small biLM takes a few ms).
_SLOW_EXPORT = textwrap.dedent(
    """
    import sys, time
    from elmo_tasks.bilm import weights

    real_save_weights = weights.save_weights

    def slow_save_weights(model, path, dtype="float32"):
        real_save_weights(model, path, dtype)
        print("WEIGHTS WRITTEN", path, file=sys.stderr, flush=True)
        time.sleep(120)

    weights.save_weights = slow_save_weights
    sys.argv = ["allennlp", "export-bilm", *sys.argv[1:]]
    from allennlp.__main__ import run

    run()
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda signum: signal.Signals(signum).name)
@pytest.mark.parametrize("earlier", [True, False], ids=["earlier-export", "new-folder"])
def test_a_signal_while_export_bilm_writes_leaves_an_earlier_export_whole(archives, tmp_path, signum, earlier):
    from elmo_tasks.bilm.weights import load_bilm

    output = tmp_path / "elmo"
    earlier_files = {"options.json": b'{"an": "earlier options file"}', "weights.hdf5": EARLIER}
    if earlier:
        output.mkdir()
        for name, content in earlier_files.items():
            (output / name).write_bytes(content)
    stderr_file = tmp_path / "stderr.txt"
    process = _start([sys.executable, "-c", _SLOW_EXPORT, str(archives["ner_elmo"]), str(output)], stderr_file)
    _wait_for(process, stderr_file, "WEIGHTS WRITTEN")
    err = _stop(process, signum, stderr_file)
    if earlier:
        outcome = f"nothing was written to {output} (an earlier export there is unchanged); run the same command again"
    else:
        outcome = f"nothing was written to {output} (it holds no export); run the same command again"
    _check_stopped(err, signum, process.returncode, "export-bilm", outcome)
    if earlier:
        assert {name: (output / name).read_bytes() for name in earlier_files} == earlier_files
        _left_beside(output, signum, sorted(earlier_files))
    else:
        assert not output.exists()
        _left_beside(tmp_path, signum, ["stderr.txt"])

    run_allennlp("export-bilm", str(archives["ner_elmo"]), str(output))
    load_bilm(str(output / "options.json"), str(output / "weights.hdf5"))  # a whole, matching pair


# --- build-word-vectors: SIGINT / SIGTERM while gensim trains (its threads running) ------------------------------


def _corpus(path: Path, lines: int) -> Path:
    words = [f"w{index}" for index in range(500)]
    path.write_text(
        "".join(" ".join(words[(line * 7 + k * 13) % 500] for k in range(20)) + "\n" for line in range(lines)),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda signum: signal.Signals(signum).name)
def test_a_signal_while_build_word_vectors_trains_keeps_the_earlier_vectors(tmp_path, signum):
    from elmo_tasks.word_vectors.build_command import main
    from elmo_tasks.word_vectors.glove_format import check_glove_file

    corpus = _corpus(tmp_path / "corpus.txt", 20000)
    output = tmp_path / "out" / "vectors.txt"
    output.parent.mkdir()
    output.write_bytes(EARLIER)
    stderr_file = tmp_path / "stderr.txt"
    arguments = [str(corpus), str(output), "--epochs", "200", "--dim", "20", "--workers", "1"]
    process = _start([sys.executable, "-m", "elmo_tasks.word_vectors", *arguments], stderr_file)
    _wait_for(process, stderr_file, "epoch 1/200 done")
    err = _stop(process, signum, stderr_file)
    outcome = f"{output} was not written (an earlier file there is unchanged); run the same command again"
    _check_stopped(err, signum, process.returncode, "build-word-vectors", outcome)
    assert output.read_bytes() == EARLIER
    _left_beside(output.parent, signum, ["vectors.txt", ".vectors.txt.lock"])  # the build lock stays, by design

    short = _corpus(tmp_path / "short.txt", 200)
    main([str(short), str(output), "--epochs", "1", "--dim", "20", "--workers", "1"])
    assert check_glove_file(output, dim=20).vectors > 0
