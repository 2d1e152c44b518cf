"""The demo's other pages in headless Chromium: the model list, a baseline's page, an input error
shown on the page, the biLM's neighbours in context, and an unknown page."""

import json

from elmo_tasks.demo.pages import BILM_EXAMPLE
from tests.demo.conftest import BASELINE, TASK_NAMES
from tests.demo.drawn import submit, wait_until_done
from tests.demo.http_client import request


def _screenshot(page, path) -> None:
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_index_lists_every_model_with_its_scores_and_links_to_it(page, demo_url, demo_archives, tmp_path):
    page.goto(demo_url)
    rows = page.eval_on_selector_all("#models tbody tr", "rows => rows.map(r => r.dataset.model)")
    assert rows == TASK_NAMES + [BASELINE]
    ner = page.inner_text("#models tr[data-model=ner]")
    best = json.loads((demo_archives["ner"].parent / "metrics.json").read_text())["best_validation_f1-measure-overall"]
    assert str(demo_archives["ner"]) in ner and f"f1-measure-overall: best validation {best:.4f}" in ner
    assert "bilm_tf/options.json" in ner
    baseline = page.inner_text(f"#models tr[data-model={BASELINE}]")
    assert "none (baseline without ELMo)" in baseline and "none beside the archive" in baseline
    _screenshot(page, tmp_path / "index.png")
    page.click("#models a[href='/models/srl']")
    page.wait_for_url(f"{demo_url}models/srl")
    assert page.inner_text("h1").startswith("Semantic role labelling")


def test_a_baseline_page_says_it_has_no_mixing_weights(page, demo_url):
    page.goto(f"{demo_url}models/{BASELINE}")
    wait_until_done(page)
    assert "uses no ELMo" in page.inner_text("#mixing-weights")
    assert page.locator("#result .bar-row").count() == 5


def test_an_input_error_is_shown_on_the_page_and_the_page_keeps_working(page, demo_url, tmp_path):
    page.goto(f"{demo_url}models/ner")
    wait_until_done(page)
    page.fill("[name=sentence]", "")
    submit(page)
    assert page.get_attribute("body", "data-state") == "error"
    assert '"sentence" is empty' in page.inner_text("#status.error")
    assert page.inner_text("#result") == ""
    _screenshot(page, tmp_path / "error.png")
    page.fill("[name=sentence]", "Anna lives in Oslo .")
    submit(page)
    assert page.get_attribute("body", "data-state") == "done" and page.inner_text("#status") == ""
    assert page.inner_text("#result .summary")


def _layers(page):
    """Per drawn layer: (layer, [(similarity, marked word, sentence)])."""
    script = """sections => sections.map(s => [+s.dataset.layer, [...s.querySelectorAll('li.neighbour')].map(li =>
        [+li.dataset.similarity, li.querySelector('mark').textContent, li.querySelector('.sentence').textContent])])"""
    return page.eval_on_selector_all("#neighbours section.layer", script)


def test_the_bilm_page_shows_a_words_neighbours_per_layer(page, demo_url, tmp_path):
    page.goto(f"{demo_url}bilm")
    wait_until_done(page)  # the example sentence, split, with its word picked
    sentence, word = BILM_EXAMPLE
    words = page.eval_on_selector_all("#words .word", "els => els.map(e => e.textContent)")
    assert words == sentence.split() and page.inner_text("#words .word.chosen") == word
    query = {"sentence": sentence, "word": words.index(word), "same_word": True, "top": 5}
    status, answer = request(f"{demo_url}api/bilm/neighbours", query)
    assert status == 200
    drawn = _layers(page)
    assert [layer for layer, _ in drawn] == [0, 1, 2]
    for (_layer, rows), expected in zip(drawn, answer["layers"], strict=True):
        assert [(similarity, mark) for similarity, mark, _ in rows] == [
            (n["similarity"], n["sentence"][n["index"]]) for n in expected["neighbours"]
        ]
        assert [text.split() for _, _, text in rows] == [n["sentence"] for n in expected["neighbours"]]
    assert {similarity for similarity, _, _ in drawn[0][1]} == {1.0}  # layer 0 sees no context
    _screenshot(page, tmp_path / "bilm.png")
    page.fill("#bilm-form [name=sentence]", "They sat on the bank of the river .")
    submit(page, "#bilm-form button[type=submit]")
    assert page.inner_text("#status") == "Pick a word." and page.inner_text("#neighbours") == ""
    page.get_by_role("button", name="bank", exact=True).click()
    wait_until_done(page)
    for _, rows in _layers(page):
        assert len(rows) == 5 and {mark for _, mark, _ in rows} == {"bank"}
        assert [s for s, _, _ in rows] == sorted((s for s, _, _ in rows), reverse=True)


def test_an_unknown_page_is_a_404_page_with_the_way_back(page, demo_url):
    response = page.goto(f"{demo_url}models/parser")
    assert response.status == 404
    assert "No model named 'parser' is loaded" in page.inner_text("main")
    assert page.locator("header nav a[href='/']").count() == 1
