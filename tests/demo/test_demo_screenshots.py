"""``scripts/demo_screenshots.py`` (how docs/demo/ is made): a PNG of every page of a running demo."""

import importlib.util

from tests.conftest import ROOT
from tests.demo.conftest import BASELINE, TASK_NAMES

spec = importlib.util.spec_from_file_location("demo_screenshots", ROOT / "scripts" / "demo_screenshots.py")
screenshots = importlib.util.module_from_spec(spec)
spec.loader.exec_module(screenshots)


def test_every_page_of_the_demo_is_saved(browser, demo_url, tmp_path):
    written = screenshots.save_screenshots(browser, demo_url, tmp_path, 800)
    names = ["index"] + TASK_NAMES + [BASELINE, "bilm"]
    assert written == [tmp_path / f"{name}.png" for name in names]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
