"""The README stays a five-minute read and its facts stay true: its size, its links (every moved
reference section one click away), the test command CI runs, what `make lint` runs, and the numbers
of the main job that come from the bundled data and the experiment rather than from a run.

The reference tables it handed to docs/REFERENCE.md are tested there: the input limits in
tests/tasks/test_input_limits.py, the registered names below.
"""

import re
import shlex
from pathlib import Path
from typing import List, Set

import pytest

from tests.conftest import FIXTURES_ROOT, ROOT, experiment_config

README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "REFERENCE.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _without_code_blocks(text: str) -> str:
    return re.sub(r"(?s)```.*?```", "", text)


def section(path: Path, title: str) -> str:
    """The ``## title`` section of a markdown file, up to the next ``## `` heading."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> Set[str]:
    headings = re.findall(r"(?m)^#+ (.+)$", _without_code_blocks(path.read_text(encoding="utf-8")))
    return {github_anchor(heading) for heading in headings}


def test_the_readme_is_a_short_read():
    assert len(README.read_bytes()) < 12_000


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(doc):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _without_code_blocks(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{doc.relative_to(ROOT)}: {broken}"


def test_every_moved_reference_section_is_one_click_from_the_readme():
    readme = README.read_text(encoding="utf-8")
    for title in [
        "Running the commands from any directory",
        "CPU threads and worker processes",
        "Configuration switches (environment variables)",
        "Registered names",
        "Input limits",
        "Experiments",
        "Layout",
    ]:
        assert f"(docs/REFERENCE.md#{github_anchor(title)})" in readme, title
    for title in [
        "Using ELMo in your own model",
        "The biLM in plain PyTorch",
        "`allennlp elmo-embed`",
        "Trained models travel",
        "Distributed training (several GPUs or machines)",
    ]:
        assert f"(docs/USING_ELMO.md#{github_anchor(title)})" in readme, title
    for doc in ["REPRODUCING", "DEMO", "DATA", "RESULTS"]:
        assert f"(docs/{doc}.md)" in readme, doc


def _commands(text: str) -> List[str]:
    """The command lines of a shell script or code block, comments and blank lines left out."""
    lines = (line.split(" #", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_ci_runs_the_readmes_test_command():
    block = section(README, "Set up and run the tests").split("```bash", 1)[1].split("```", 1)[0]
    readme_command = _commands(block)[0]
    assert readme_command == "make test"
    ci = _commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert ci[-1] == readme_command


def test_the_readme_says_what_make_lint_runs():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    tools = [shlex.split(line)[0].removeprefix(".venv/bin/") for line in recipe]
    assert tools == ["ruff", "ruff", "mypy"]
    tests = section(README, "Set up and run the tests")
    for said in ["`ruff check .`", "`ruff format --check .`", "mypy"]:
        assert said in tests


def test_the_main_jobs_data_and_epochs_are_as_the_readme_says():
    """The numbers of the main job that do not come from a run: the bundled sample's sizes, the
    commonest label's share of the validation pairs, and the number of epochs."""
    from elmo_tasks.tasks.snli.reader import SnliJsonlReader

    reader = SnliJsonlReader()
    train = list(reader.read(str(FIXTURES_ROOT / "snli" / "train.jsonl")))
    validation = [instance["label"].label for instance in reader.read(str(FIXTURES_ROOT / "snli" / "dev.jsonl"))]
    commonest = max(validation.count(label) for label in set(validation)) / len(validation)
    config = experiment_config("snli_elmo", "fixtures")
    assert config["train_data_path"].endswith("fixtures/snli/train.jsonl")
    assert config["validation_data_path"].endswith("fixtures/snli/dev.jsonl")
    epochs = config["trainer"]["num_epochs"]
    job = section(README, "Set up and run the main job")
    assert f"{len(train):,} training and {len(validation):,} validation pairs" in job
    assert f"scores {100 * commonest:.1f}% on these validation pairs" in job
    assert f"for {epochs} epochs" in job and f"at any of the {epochs} epochs" in job


def test_every_name_our_plugin_registers_is_in_the_reference_table():
    from allennlp.common.registrable import Registrable

    table = section(REFERENCE, "Registered names")
    ours = sorted(
        name
        for names in Registrable._registry.values()
        for name, (registered, _) in names.items()
        if registered.__module__.startswith("elmo_tasks.")
    )
    assert ours and [name for name in ours if f"`{name}`" not in table] == []


def test_demo_md_quotes_the_line_that_gives_the_address():
    """``--port 0``: DEMO.md shows the line that gives the chosen port (tests/demo/test_demo_command.py
    checks that it is the first line of standard output) as elmo_tasks/demo/serve_command.py prints it."""
    source = (ROOT / "elmo_tasks" / "demo" / "serve_command.py").read_text(encoding="utf-8")
    assert 'print(f"elmo-demo: serving {served} at {server.url} ({loaded}; Ctrl-C stops it)")' in source
    assert 'loaded = f"loaded in {time.time() - started:.1f} s"' in source
    demo = (ROOT / "docs" / "DEMO.md").read_text(encoding="utf-8")
    assert "`elmo-demo: serving NAMES at http://HOST:PORT/ (loaded in S s; Ctrl-C stops it)`" in demo
    assert "first line of its standard output" in demo


def test_every_configuration_default_is_in_the_reference_table():
    from elmo_tasks.config_defaults import DEFAULTS

    table = section(REFERENCE, "Configuration switches (environment variables)")
    assert [name for name in DEFAULTS if f"`{name}`" not in table] == []
