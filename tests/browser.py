"""Where the tests that draw pages (the demo's, the spaCy pictures') find the system Chromium; their one
browser per session is the ``browser`` fixture of tests/conftest.py."""

import os
import shutil

import pytest


def chromium_path() -> str:
    """The system Chromium (``ELMO_DEMO_CHROMIUM`` may name another); skips (fails on CI) when there is none."""
    found = os.environ.get("ELMO_DEMO_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "no chromium on PATH: apt-get install chromium (.ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found
