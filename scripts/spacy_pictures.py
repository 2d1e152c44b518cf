#!/usr/bin/env python
"""Pictures of the spaCy components' output for docs/SPACY.md: displaCy drawings of NER, SRL and coreference.

    .venv/bin/python scripts/spacy_pictures.py --ner NER.tar.gz --srl SRL.tar.gz --coref COREF.tar.gz docs/spacy

Each archive is given to its component (``elmo_ner``, ``elmo_srl``, ``elmo_coref``: any reference
``nlp.add_pipe`` takes, e.g. a shipped model's) on ``spacy.blank("en")``, which annotates an example
text (``--ner-text`` etc. to change it); displaCy draws the result (entities; the SRL frame with the
most arguments; every coreference mention, labelled with its cluster), and headless Chromium (the
system's ``chromium``, driven by Playwright, which downloads nothing) saves each drawing as
``OUT_DIR/ner.png``, ``srl.png`` and ``coref.png``.
"""

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

TEXTS = {
    "ner": "Marta Velkin flew from Berlin to Nairobi on Monday to meet the board of Pellon Group.",
    "srl": "The committee approved the new budget after a long debate on Tuesday.",
    "coref": "Marta called her brother on Sunday. He said that she should visit him soon, and she agreed.",
}
COMPONENTS = {"ner": "elmo_ner", "srl": "elmo_srl", "coref": "elmo_coref"}

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{name}</title></head>
<body style="margin: 0; background: #ffffff; font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">
<div id="picture" style="display: inline-block; padding: 12px 24px; max-width: {width}px">{markup}</div>
</body></html>
"""


def drawing(name: str, archive: str, text: str, width: int) -> str:
    """The HTML page of displaCy's drawing of ``name``'s component (``archive``) on ``text``."""
    import spacy
    from spacy import displacy

    nlp = spacy.blank("en")
    nlp.add_pipe(COMPONENTS[name], config={"model": archive})
    doc = nlp(text)
    if name == "ner":
        markup = displacy.render(doc, style="ent", jupyter=False)
    elif name == "srl":
        frames = doc._.elmo_srl
        if not frames:
            raise SystemExit(
                f"spacy_pictures: error: {archive} found no predicate in {text!r}; pass another --srl-text"
            )
        richest = max(range(len(frames)), key=lambda k: len(frames[k]["arguments"]))
        markup = displacy.render(doc, style="span", options={"spans_key": f"srl_{richest}"}, jupyter=False)
    else:
        markup = displacy.render(doc, style="span", options={"spans_key": "coref"}, jupyter=False)
    return PAGE.format(name=name, width=width, markup=markup)


def save_pictures(browser: Any, pages: Dict[str, str], out_dir: Path, width: int) -> List[Path]:
    """``OUT_DIR/NAME.png`` for each page (``name -> HTML``), taken with a launched Playwright ``browser``."""
    written = []
    page = browser.new_page(viewport={"width": width, "height": 400})
    for name, html in pages.items():
        page.set_content(html)
        out = out_dir / f"{name}.png"
        page.locator("#picture").screenshot(path=str(out))
        written.append(out)
    page.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="folder for the PNG files (docs/spacy for docs/SPACY.md)")
    for name, component in COMPONENTS.items():
        parser.add_argument(f"--{name}", metavar="ARCHIVE", help=f"the model for {component}")
        parser.add_argument(f"--{name}-text", default=TEXTS[name], help=f"the text drawn (default: {TEXTS[name]!r})")
    parser.add_argument("--chromium", default=shutil.which("chromium"), help="Chromium (default: chromium on PATH)")
    parser.add_argument("--width", type=int, default=900, help="the drawings' width in pixels (default: 900)")
    args = parser.parse_args()
    archives = {name: getattr(args, name) for name in COMPONENTS if getattr(args, name)}
    if not archives:
        sys.exit("spacy_pictures: error: give at least one of --ner, --srl, --coref (a model archive)")
    if args.chromium is None:
        sys.exit("spacy_pictures: error: no chromium on PATH; apt-get install chromium, or pass --chromium")
    started = time.time()
    pages = {
        name: drawing(name, archive, getattr(args, f"{name}_text"), args.width) for name, archive in archives.items()
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, headless=True)
        written = save_pictures(browser, pages, args.out_dir, args.width + 60)
        browser.close()
    shown = ", ".join(str(path) for path in written)
    print(f"spacy_pictures: wrote {shown} in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
