"""Each task page in headless Chromium: type an input, submit, and check what is drawn against the
API's answer (spans, frames, clusters, answers, bars) and the mixing weights against the model's.
Hand-made answers (served through Playwright's request routing) pin the drawing itself: nested
coreference mentions, BIO continuations, bars in the classes' order."""

import json

import pytest

from tests.demo.conftest import TASK_NAMES
from tests.demo.drawn import (
    SNLI_ORDER,
    SST_ORDER,
    bars,
    bio_spans,
    drawable_mentions,
    expected_bars,
    marked,
    submit,
    wait_until_done,
)
from tests.demo.http_client import request

# What the test types into each form (SRL's predicates as the form takes them: comma-separated indices).
TYPED = {
    "ner": {"sentence": "Maria Lopez moved from Madrid to Chicago last year ."},
    "srl": {"sentence": "The girl gave her brother a book .", "verbs": "2, 6"},
    "coref": {"document": "Paul bought a car . He drives it to work every day ."},
    "squad": {"question": "Where did they play?", "passage": "The two teams played in Denver on a cold night ."},
    "snli": {"premise": "A woman is reading a book .", "hypothesis": "A person reads ."},
    "sst5": {"sentence": "The plot is thin but the acting is wonderful ."},
}


def _words(answer: dict, start: int, end: int, key: str = "words") -> str:
    return " ".join(answer[key][start : end + 1])


def _check_ner(page, answer):
    entities = sorted(answer["entities"], key=lambda e: e["start"])
    assert marked(page, "#result mark.entity") == [(e["type"], _words(answer, e["start"], e["end"])) for e in entities]


def _check_srl(page, answer):
    frames = answer["verbs"]
    assert page.eval_on_selector_all("#result tr.frame", "rows => rows.map(r => r.dataset.verb)") == [
        f["verb"] for f in frames
    ]
    for row, frame in enumerate(frames, start=1):
        expected = [(label, _words(answer, s, e)) for s, e, label in bio_spans(frame["tags"])]
        assert marked(page, f"#result tr.frame:nth-child({row}) mark.argument") == expected


def _check_coref(page, answer):
    drawn = page.eval_on_selector_all("#result span.mention", "els => els.map(e => +e.dataset.cluster)")
    assert sorted(drawn) == sorted(k for _, _, k in drawable_mentions(answer["clusters"]))
    items = page.eval_on_selector_all("#result li.cluster", "els => els.map(e => e.textContent)")
    assert len(items) == len(answer["clusters"])
    for item, strings in zip(items, answer["cluster_strings"], strict=True):
        assert item == " · ".join(f"“{s}”" for s in strings)
    if not answer["clusters"]:
        assert page.inner_text("#result .summary") == "No clusters found."


def _check_squad(page, answer, record):
    assert page.inner_text("#result .answer-text") == answer["answer"]
    assert page.inner_text("#result .probability") == f"(probability {100 * answer['span_probability']:.1f}%)"
    assert record["passage"][answer["answer_start"] : answer["answer_end"]] == answer["answer"]
    assert page.inner_text("#result mark.answer") == answer["answer"]
    assert page.inner_text("#result .passage") == record["passage"]


def _check_classes(page, answer, order):
    drawn = bars(page, "#result .bar-row")
    wanted = expected_bars(answer["label_probs"], order, answer["label"])
    assert [(label, flag) for label, _, flag in drawn] == [(label, flag) for label, _, flag in wanted]
    assert [value for _, value, _ in drawn] == pytest.approx([value for _, value, _ in wanted], abs=1e-6)
    assert page.inner_text("#result .summary .label") == answer["label"]


def _check_drawn(page, task, answer, record):
    checks = {
        "ner": lambda: _check_ner(page, answer),
        "srl": lambda: _check_srl(page, answer),
        "coref": lambda: _check_coref(page, answer),
        "squad": lambda: _check_squad(page, answer, record),
        "snli": lambda: _check_classes(page, answer, SNLI_ORDER),
        "sst5": lambda: _check_classes(page, answer, SST_ORDER),
    }
    checks[task]()


def _check_mixing_weights(page, model):
    captions = page.eval_on_selector_all("#mixing-weights figure.mix", "els => els.map(e => e.dataset.representation)")
    assert captions == [mix.representation for mix in model.mixes]
    drawn = [value for _, value, _ in bars(page, "#mixing-weights .bar-row")]
    assert drawn == pytest.approx([w for mix in model.mixes for w in mix.weights], abs=1e-5)


@pytest.mark.parametrize("task", TASK_NAMES)
def test_a_task_page_draws_the_answer_to_what_was_typed(page, demo_url, demo_models, task, tmp_path):
    model = next(m for m in demo_models if m.name == task)
    page.goto(f"{demo_url}models/{task}")
    wait_until_done(page)  # the prefilled example, predicted on load
    assert page.get_attribute("body", "data-state") == "done" and page.inner_text("#result")
    for key, value in TYPED[task].items():
        page.fill(f"#predict-form [name={key}]", value)
    submit(page)
    assert page.get_attribute("body", "data-state") == "done", page.inner_text("#status")
    answer = json.loads(page.text_content("#raw-json"))  # in a closed <details>
    record = dict(TYPED[task], **({"verbs": [2, 6]} if task == "srl" else {}))
    assert request(f"{demo_url}api/{task}/predict", record) == (200, answer)  # the form sent `record`
    _check_drawn(page, task, answer, record)
    _check_mixing_weights(page, model)
    page.screenshot(path=str(tmp_path / f"{task}.png"), full_page=True)
    assert (tmp_path / f"{task}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


HAND_MADE = {
    "ner": {
        "words": ["Ada", "Lovelace", "met", "Babbage", "in", "London", "."],
        "entities": [
            {"type": "PER", "start": 0, "end": 1},
            {"type": "PER", "start": 3, "end": 3},
            {"type": "LOC", "start": 5, "end": 5},
        ],
    },
    "srl": {
        "words": ["Mary", "sold", "the", "book", "to", "John", "."],
        "verbs_given": True,
        "verbs": [
            {"index": 1, "verb": "sold", "tags": ["B-ARG0", "B-V", "B-ARG1", "I-ARG1", "B-ARG2", "I-ARG2", "O"]},
            {"index": 2, "verb": "the", "tags": ["O", "O", "B-V", "I-ARG1", "I-ARG1", "O", "O"]},
        ],
    },
    "coref": {
        "document": ["Anna", "told", "her", "sister", "she", "won", "."],
        "clusters": [[[0, 0], [2, 2], [4, 4]], [[2, 3]], [[3, 4]]],
        "cluster_strings": [["Anna", "her", "she"], ["her sister"], ["sister she"]],
    },
    "snli": {"label": "entailment", "label_probs": {"contradiction": 0.1, "entailment": 0.7, "neutral": 0.2}},
}


def _answering(answer: dict):
    """A route handler that answers every request with ``answer`` (the server is never asked)."""
    return lambda route: route.fulfill(json=answer)


def test_hand_made_answers_are_drawn_exactly(page, demo_url):
    for task, answer in HAND_MADE.items():
        page.route(f"{demo_url}api/{task}/predict", _answering(answer))
    page.goto(f"{demo_url}models/ner")
    wait_until_done(page)
    assert marked(page, "#result mark.entity") == [("PER", "Ada Lovelace"), ("PER", "Babbage"), ("LOC", "London")]
    page.goto(f"{demo_url}models/srl")
    wait_until_done(page)
    assert marked(page, "#result tr.frame:nth-child(1) mark.argument") == [
        ("ARG0", "Mary"),
        ("V", "sold"),
        ("ARG1", "the book"),
        ("ARG2", "to John"),
    ]
    # an I- tag that does not continue its label (after V) starts a span of its own
    assert marked(page, "#result tr.frame:nth-child(2) mark.argument") == [("V", "the"), ("ARG1", "book to")]
    page.goto(f"{demo_url}models/coref")
    wait_until_done(page)
    # "her" (cluster 0) nests in "her sister" (cluster 1); "sister she" crosses it: listed, not marked
    assert page.text_content("#result span.mention[data-cluster='1'] > span.mention[data-cluster='0']") == "her1"
    assert page.eval_on_selector_all("#result span.mention", "els => els.map(e => +e.dataset.cluster)") == [0, 1, 0, 0]
    assert page.locator("#result li.cluster").count() == 3
    page.goto(f"{demo_url}models/snli")
    wait_until_done(page)
    assert bars(page, "#result .bar-row") == [
        ("entailment", 0.7, True),
        ("neutral", 0.2, False),
        ("contradiction", 0.1, False),
    ]
    assert page.get_attribute("#result .bar-row[data-label=entailment] .bar", "style") == "width: 70%;"
