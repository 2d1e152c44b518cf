"""The plain-PyTorch biLM and the AllenNLP-free elmo-embed start without AllenNLP, spaCy or fairscale."""

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

HEAVY = ("allennlp", "spacy", "fairscale")


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


def test_import_elmo_tasks_bilm_needs_no_allennlp():
    imported = _imported_after("import elmo_tasks.bilm\nimport elmo_tasks.pretrained\nimport elmo_tasks.bilm.embed")
    assert imported == {name: False for name in HEAVY}


def test_allennlp_finds_the_registration_module_through_allennlp_plugins():
    from allennlp.commands.subcommand import Subcommand
    from allennlp.models import Model

    assert (ROOT / ".allennlp_plugins").read_text().split() == ["elmo_tasks.plugin"]
    # tests/conftest.py imports elmo_tasks.plugin, as `allennlp` does through that file
    assert "esim_elmo" in Model.list_available() and "elmo-embed" in Subcommand.list_available()
