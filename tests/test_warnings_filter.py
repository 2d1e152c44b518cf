"""elmo_tasks.warnings_filter: only the named dependency FutureWarnings are silenced, nothing else."""

import subprocess
import sys
import warnings

import pytest

from elmo_tasks.warnings_filter import silence_dependency_warnings
from tests.conftest import ROOT

FAIRSCALE_AMP = "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(...)` instead."
TRAINER_AUTOCAST = "`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', ...)`."


def _shown(message: str, category: type, module: str) -> bool:
    """Whether a warning raised from ``module`` is shown once the filters are installed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        silence_dependency_warnings()
        warnings.warn_explicit(message, category, filename=f"{module}.py", lineno=1, module=module)
    return len(caught) == 1


def test_the_named_dependency_warnings_are_silenced():
    assert not _shown(FAIRSCALE_AMP, FutureWarning, "fairscale.experimental.nn.offload")
    assert not _shown(FAIRSCALE_AMP.replace("fwd", "bwd"), FutureWarning, "fairscale.experimental.nn.offload")
    assert not _shown(
        "`torch.jit.script` is deprecated. Please switch to `torch.compile`.", FutureWarning, "torch.jit._script"
    )
    assert not _shown(TRAINER_AUTOCAST, FutureWarning, "allennlp.training.gradient_descent_trainer")


def test_every_other_warning_still_shows():
    # the same message from the user's own module, or from another module of the same package
    assert _shown(TRAINER_AUTOCAST, FutureWarning, "my_model")
    assert _shown(TRAINER_AUTOCAST, FutureWarning, "allennlp.training.gradient_descent_trainer_extra")
    assert _shown(FAIRSCALE_AMP, FutureWarning, "fairscale.nn.data_parallel")
    # another message, or another category, from a silenced module
    assert _shown("`something_else` is deprecated", FutureWarning, "fairscale.experimental.nn.offload")
    assert _shown(FAIRSCALE_AMP, DeprecationWarning, "fairscale.experimental.nn.offload")


@pytest.mark.slow
def test_importing_the_plugin_prints_no_future_warning():
    # A fresh interpreter that shows every warning once: the plugin installs its filters before AllenNLP
    # (and with it fairscale) is imported.
    result = subprocess.run(
        [sys.executable, "-W", "default", "-c", "import elmo_tasks.plugin"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "FutureWarning" not in result.stderr, result.stderr


@pytest.mark.slow
def test_the_harness_help_prints_no_future_warning():
    # scripts/reproduce.py imports AllenNLP through the harness, not through the plugin
    result = subprocess.run(
        [sys.executable, "scripts/reproduce.py", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "usage: reproduce.py" in result.stdout
    assert "FutureWarning" not in result.stderr, result.stderr
