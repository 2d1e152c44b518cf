"""``scripts/spacy_pictures.py`` (the pictures of docs/SPACY.md): displaCy's drawings of the NER, SRL and
coreference components' output, saved as PNG files by headless Chromium."""

import importlib.util

from tests.conftest import ROOT
from tests.spacy_pipes.conftest import TASKS

spec = importlib.util.spec_from_file_location("spacy_pictures", ROOT / "scripts" / "spacy_pictures.py")
assert spec is not None and spec.loader is not None
pictures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pictures)


def test_each_components_drawing_is_saved(archive, browser, tmp_path):
    experiments = {name: TASKS[component][0] for name, component in pictures.COMPONENTS.items()}
    pages = {
        name: pictures.drawing(name, str(archive(experiments[name])), pictures.TEXTS[name], 600) for name in experiments
    }
    assert 'class="entities"' in pages["ner"] and 'class="spans"' in pages["srl"] and 'class="spans"' in pages["coref"]
    written = pictures.save_pictures(browser, pages, tmp_path, 660)
    assert written == [tmp_path / f"{name}.png" for name in ("ner", "srl", "coref")]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
