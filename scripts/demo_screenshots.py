#!/usr/bin/env python
"""Screenshots of a running ``allennlp elmo-demo``: the model list, every model's page and the biLM page.

    .venv/bin/allennlp elmo-demo runs/mini/ner/elmo/seed0/model.tar.gz ... --port 8000 &
    .venv/bin/python scripts/demo_screenshots.py http://127.0.0.1:8000/ docs/demo

Each page is opened in headless Chromium (the system's ``chromium``, driven by Playwright, which
downloads nothing), its prefilled example is predicted as it loads, and the page is saved as
``OUT_DIR/index.png``, ``OUT_DIR/NAME.png`` per model and ``OUT_DIR/bilm.png``.
"""

import argparse
import json
import shutil
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, List

DONE = "body[data-state=done], body[data-state=error]"


def page_names(url: str) -> List[str]:
    """The served models' names, from ``GET /api/models``."""
    with urllib.request.urlopen(f"{url}api/models", timeout=60) as response:
        return [model["name"] for model in json.load(response)]


def has_bilm_page(url: str) -> bool:
    with urllib.request.urlopen(f"{url}api/health", timeout=60) as response:
        return bool(json.load(response)["bilm"])


def save_screenshots(browser: Any, url: str, out_dir: Path, width: int) -> List[Path]:
    """One PNG per page, taken with a launched Playwright ``browser``; returns the files written."""
    pages = [("", "index")] + [(f"models/{name}", name) for name in page_names(url)]
    if has_bilm_page(url):
        pages.append(("bilm", "bilm"))
    written = []
    page = browser.new_page(viewport={"width": width, "height": 800})
    for path, name in pages:
        page.goto(url + path)
        if path:
            page.wait_for_selector(DONE, timeout=120_000)
        out = out_dir / f"{name}.png"
        page.screenshot(path=str(out), full_page=True)
        written.append(out)
    page.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the demo's address, e.g. http://127.0.0.1:8000/")
    parser.add_argument("out_dir", type=Path, help="folder for the PNG files")
    parser.add_argument("--chromium", default=shutil.which("chromium"), help="Chromium (default: chromium on PATH)")
    parser.add_argument("--width", type=int, default=1200, help="window width in pixels (default: 1200)")
    args = parser.parse_args()
    if args.chromium is None:
        sys.exit("demo_screenshots: error: no chromium on PATH; apt-get install chromium, or pass --chromium")
    url = args.url if args.url.endswith("/") else args.url + "/"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, headless=True)
        written = save_screenshots(browser, url, args.out_dir, args.width)
        browser.close()
    print(f"demo_screenshots: wrote {len(written)} screenshots to {args.out_dir} in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
