"""The plain-PyTorch biLM and the commands that need no AllenNLP start without AllenNLP, spaCy or fairscale.

``elmo-tasks elmo-embed``, ``elmo-tasks bilm-perplexity`` and ``python -m elmo_tasks.bilm.embed`` run
without AllenNLP (elmo_tasks/__main__.py); each test checks a whole run in a fresh process, and that
it writes or prints what the AllenNLP path (``allennlp CMD``, or ``elmo-tasks`` before) does.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

import h5py
import numpy as np
import pytest

import elmo_tasks.__main__ as elmo_tasks_main
from tests.conftest import ROOT

HEAVY = ("allennlp", "spacy", "fairscale", "transformers")
ELMO_TASKS_SCRIPT = str(Path(sys.executable).parent / "elmo-tasks")
# spaCy splits "Don't" and "fine." where whitespace does not: the two tokenizers score different tokens
SENTENCE = "Don't stop, it's fine.\n"
HELP_COLUMNS = "100"


def _imported_after(code: str) -> dict:
    script = f"import json, sys\n{code}\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run_with_import_times(command: List[str], cwd: Path) -> Tuple[subprocess.CompletedProcess, Set[str]]:
    """Runs ``python -X importtime COMMAND...`` to its end; returns the process and the top-level
    packages it imported (``-X importtime`` lists every import on stderr, in any process state)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, OMP_NUM_THREADS="1", COLUMNS=HELP_COLUMNS),
    )
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert done.returncode == 0, done.stderr[-3000:]
    return done, imported


def _command_output(stderr: str) -> str:
    """stderr without the ``-X importtime`` lines."""
    return "\n".join(line for line in stderr.splitlines() if not line.startswith("import time:"))


def _run_in_process(monkeypatch, capsys, run, argv: List[str]) -> Tuple[int, str, str]:
    """``run()`` (a command line's main function) on ``sys.argv = argv``: exit status, stdout, stderr."""
    monkeypatch.setattr(sys, "argv", argv)
    code = 0
    try:
        run()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    out = capsys.readouterr()
    return code, out.out, out.err


def _allennlp_path(monkeypatch, capsys, *arguments: str) -> Tuple[int, str, str]:
    """``elmo-tasks ARGUMENTS`` as it ran before it had an AllenNLP-free path: AllenNLP's command line
    with our plugin (the path ``allennlp ARGUMENTS`` takes too, under another program name)."""
    return _run_in_process(
        monkeypatch, capsys, lambda: elmo_tasks_main.run_allennlp("elmo-tasks"), ["elmo-tasks", *arguments]
    )


@pytest.fixture()
def one_line(tmp_path) -> Path:
    path = tmp_path / "one.txt"
    path.write_text(SENTENCE, encoding="utf-8")
    return path


@pytest.mark.slow  # whole processes under -X importtime, 15 to 40 s each: in `make test-all`, out of the fast suite
def test_import_elmo_tasks_bilm_needs_no_allennlp():
    imported = _imported_after("import elmo_tasks.bilm\nimport elmo_tasks.pretrained\nimport elmo_tasks.bilm.embed")
    assert imported == {name: False for name in HEAVY}
    imported = _imported_after("import elmo_tasks.__main__\nimport elmo_tasks.bilm.perplexity")
    assert imported == {name: False for name in HEAVY}


def test_allennlp_finds_the_registration_module_through_allennlp_plugins():
    from allennlp.commands.subcommand import Subcommand
    from allennlp.models import Model

    assert (ROOT / ".allennlp_plugins").read_text().split() == ["elmo_tasks.plugin"]
    # tests/conftest.py imports elmo_tasks.plugin, as `allennlp` does through that file
    assert "esim_elmo" in Model.list_available() and "elmo-embed" in Subcommand.list_available()


def _datasets(path: Path) -> dict:
    with h5py.File(path, "r") as handle:
        return {name: handle[name][...] for name in handle}


def test_elmo_tasks_elmo_embed_imports_no_allennlp_and_writes_what_allennlp_writes(
    one_line, tmp_path, monkeypatch, capsys
):
    light = tmp_path / "light.hdf5"
    done, imported = _run_with_import_times(
        [ELMO_TASKS_SCRIPT, "elmo-embed", str(one_line), str(light), "--no-progress"], cwd=tmp_path
    )
    assert not imported & set(HEAVY), imported & set(HEAVY)
    assert "elmo-embed: wrote 1 sentence (4 tokens)" in _command_output(done.stderr)
    through_allennlp = tmp_path / "allennlp.hdf5"
    code, _, err = _allennlp_path(
        monkeypatch, capsys, "elmo-embed", str(one_line), str(through_allennlp), "--no-progress"
    )
    assert code == 0, err
    light_datasets, allennlp_datasets = _datasets(light), _datasets(through_allennlp)
    assert sorted(light_datasets) == sorted(allennlp_datasets) == ["0", "sentence_to_index"]
    assert light_datasets["0"].shape == allennlp_datasets["0"].shape
    assert np.array_equal(light_datasets["0"], allennlp_datasets["0"])
    assert light_datasets["sentence_to_index"].tolist() == allennlp_datasets["sentence_to_index"].tolist()


@pytest.mark.slow  # whole processes under -X importtime, 15 to 40 s each: in `make test-all`, out of the fast suite
def test_python_m_elmo_tasks_bilm_embed_imports_no_allennlp_to_its_end(one_line, tmp_path):
    done, imported = _run_with_import_times(
        ["-m", "elmo_tasks.bilm.embed", str(one_line), str(tmp_path / "out.hdf5"), "--no-progress"], cwd=ROOT
    )
    assert not imported & set(HEAVY), imported & set(HEAVY)
    assert "elmo-embed: wrote 1 sentence" in _command_output(done.stderr)


@pytest.mark.parametrize(
    "tokenizer, flags, allowed", [("whitespace", ["--whitespace-tokenized"], set()), ("spaCy", [], {"spacy"})]
)
@pytest.mark.slow  # whole processes under -X importtime, 15 to 40 s each: in `make test-all`, out of the fast suite
def test_elmo_tasks_bilm_perplexity_imports_no_allennlp_and_prints_what_allennlp_prints(
    one_line, tmp_path, monkeypatch, capsys, tokenizer, flags, allowed
):
    """spaCy is the default tokenizer of the text (the training recipe's): then, and only then, it is imported."""
    done, imported = _run_with_import_times(
        ["-m", "elmo_tasks", "bilm-perplexity", str(one_line), "--no-progress", *flags], cwd=tmp_path
    )
    assert imported & set(HEAVY) == allowed
    assert "bilm-perplexity: scored 1 sentence" in _command_output(done.stderr)
    code, out, err = _allennlp_path(monkeypatch, capsys, "bilm-perplexity", str(one_line), "--no-progress", *flags)
    assert code == 0, err
    assert done.stdout.strip().splitlines()[-1] == out.strip().splitlines()[-1]
    tokens = {"whitespace": 4, "spaCy": 8}[tokenizer]  # per direction: the words and one sentence boundary
    assert done.stdout.strip().endswith(f"tokens {tokens + 1}")


def _threads_and_heavy_modules(code: str, environment: Dict[str, str], cwd: Path) -> list:
    """Runs ``code`` in a fresh process whose environment has no thread settings but ``environment``;
    returns torch's thread count and which of HEAVY were imported, both at its end."""
    script = f"import json, sys\n{code}\nimport torch\n"
    script += f"print(json.dumps([torch.get_num_threads(), {{m: m in sys.modules for m in {HEAVY!r}}}]))"
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, env={**base, **environment}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "environment, flags, threads",
    [({}, [], 1), ({}, ["--threads", "2"], 2), ({"OMP_NUM_THREADS": "2"}, [], "as torch read it")],
    ids=["one thread", "--threads wins", "OMP_NUM_THREADS wins"],
)
@pytest.mark.slow  # whole processes under -X importtime, 15 to 40 s each: in `make test-all`, out of the fast suite
def test_the_thread_policy_holds_without_allennlp(one_line, tmp_path, environment, flags, threads):
    """Explicit --threads wins, else OMP_NUM_THREADS (torch read it: left as torch set it), else one thread;
    checked in the process that ran the command, whose modules show that AllenNLP was never imported."""
    argv = ["elmo-tasks", "elmo-embed", str(one_line), str(tmp_path / "out.hdf5"), "--no-progress", *flags]
    command = f"sys.argv = {argv!r}\nfrom elmo_tasks.__main__ import main\nmain()"
    used, imported = _threads_and_heavy_modules(command, environment, tmp_path)
    if threads == "as torch read it":  # torch caps OMP_NUM_THREADS at the cores it sees
        threads = _threads_and_heavy_modules("", environment, tmp_path)[0]
    assert used == threads and imported == {name: False for name in HEAVY}


def _allennlp_help(monkeypatch, capsys, name: str) -> str:
    code, out, err = _allennlp_path(monkeypatch, capsys, name, "--help")
    assert code == 0, err
    return out


@pytest.mark.parametrize("name", sorted(elmo_tasks_main.ALLENNLP_FREE_COMMANDS))
def test_both_front_ends_print_the_same_help(name, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", HELP_COLUMNS)
    allennlp_help = _allennlp_help(monkeypatch, capsys, name)
    own_help = _run_in_process(monkeypatch, capsys, elmo_tasks_main.main, ["elmo-tasks", name, "--help"])
    assert own_help == (0, allennlp_help, "")
    (subparsers,) = [
        action
        for action in elmo_tasks_main.command_parser("elmo-tasks", name)._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    option_strings = {option for action in subparsers.choices[name]._actions for option in action.option_strings}
    assert {"--options-file", "--weight-file", "--threads", "--workers", "--include-package"} <= option_strings
    assert all(option in allennlp_help for option in option_strings)


def test_elmo_tasks_elmo_embed_help_is_printed_without_allennlp(tmp_path, monkeypatch, capsys):
    done, imported = _run_with_import_times([ELMO_TASKS_SCRIPT, "elmo-embed", "--help"], cwd=tmp_path)
    assert not imported & set(HEAVY), imported & set(HEAVY)
    monkeypatch.setenv("COLUMNS", HELP_COLUMNS)
    assert done.stdout == _allennlp_help(monkeypatch, capsys, "elmo-embed")


ERROR_CASES = [
    ["elmo-embed"],  # argparse: the required arguments
    ["elmo-embed", "{missing}", "{out}"],
    ["elmo-embed", "{input}", "{input}"],
    ["elmo-embed", "{input}", "{out}", "--batch-size", "0"],
    ["elmo-embed", "{input}", "{out}", "--word-cache-mb", "-1"],
    ["elmo-embed", "{input}", "{out}", "--mix", "a,b"],  # argparse: a type's error
    ["elmo-embed", "{input}", "{out}", "--workers", "2", "--threads", "2"],
    ["elmo-embed", "{input}", "{out}", "--options-file", "{input}"],
    ["elmo-embed", "{input}", "{out}", "--no-such-option"],
    ["bilm-perplexity", "{missing}", "--no-progress"],
    ["bilm-perplexity", "{folder}", "--no-progress"],
    ["bilm-perplexity", "{input}", "--max-sentence-length", "0"],
    ["bilm-perplexity", "{input}", "--word-cache-mb", "-1"],
    ["bilm-perplexity", "{input}", "--text-format", "paragraphs"],  # argparse: choices
    ["bilm-perplexity", "{input}", "--threads", "0"],
    ["bilm-perplexity", "{input}", "--weight-file", "{input}"],
    ["bilm-perplexity", "{input}", "--options-file", "{input}", "--weight-file", "{input}"],
    ["bilm-perplexity", "{empty}", "--whitespace-tokenized", "--no-progress"],
    ["bilm-perplexity", "{input}", "--no-progress", "--version"],  # AllenNLP's program option, after the command
]


@pytest.mark.parametrize("arguments", ERROR_CASES, ids=lambda arguments: " ".join(arguments))
def test_errors_are_the_same_one_line_and_exit_status(arguments, one_line, tmp_path, monkeypatch, capsys):
    (tmp_path / "folder").mkdir()
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf-8")
    places = {
        "input": one_line,
        "out": tmp_path / "out.hdf5",
        "missing": tmp_path / "missing.txt",
        "folder": tmp_path / "folder",
        "empty": tmp_path / "empty.txt",
    }
    argv = [argument.format(**places) for argument in arguments]
    light = _run_in_process(monkeypatch, capsys, elmo_tasks_main.main, ["elmo-tasks", *argv])
    through_allennlp = _allennlp_path(monkeypatch, capsys, *argv)
    assert light == through_allennlp
    code, _, err = light
    assert code == 2 and ": error: " in err.strip().splitlines()[-1], err
    assert "usage: " in err or len(err.strip().splitlines()) == 1, err  # the command's own errors: one line
    assert not (tmp_path / "out.hdf5").exists()


def test_include_package_hands_the_command_line_to_allennlp(one_line, tmp_path, monkeypatch, capsys):
    """AllenNLP imports the packages that --include-package names; the command runs as it would there."""
    handed = []
    monkeypatch.setattr(elmo_tasks_main, "run_allennlp", lambda prog: handed.append(prog))
    argv = ["elmo-tasks", "bilm-perplexity", str(one_line), "--include-package", "elmo_tasks.bilm"]
    code, _, err = _run_in_process(monkeypatch, capsys, elmo_tasks_main.main, argv)
    assert code == 0 and handed == ["elmo-tasks"], err
