"""Reading what a demo page drew (through Playwright), and what it should have drawn for an answer.

The expected drawing is worked out here in Python from the API's answer, independently of the
page's script: BIO tags to spans, nested coreference mentions, bars in the classes' order.
"""

from typing import Any, Dict, List, Tuple

SNLI_ORDER = ["entailment", "neutral", "contradiction"]
SST_ORDER = ["very negative", "negative", "neutral", "positive", "very positive"]


def wait_until_done(page, timeout: float = 60_000) -> None:
    """Waits for the page's request to be answered (drawn or refused): body[data-state] done or error."""
    page.wait_for_selector("body[data-state=done], body[data-state=error]", timeout=timeout)


def submit(page, button: str = "#predict-form button[type=submit]") -> None:
    """Submits the form and waits for its answer (the click sets data-state to busy at once)."""
    page.click(button)
    wait_until_done(page)


def marked(page, selector: str) -> List[Tuple[str, str]]:
    """(label, words) of every marked span matched, in page order (the label's tag left out)."""
    script = "els => els.map(e => [e.dataset.label, e.firstChild.textContent])"
    return [tuple(pair) for pair in page.eval_on_selector_all(selector, script)]


def bars(page, selector: str) -> List[Tuple[str, float, bool]]:
    """(label, value, drawn as the prediction) of every bar row matched."""
    script = "els => els.map(e => [e.dataset.label, +e.dataset.value, e.classList.contains('predicted')])"
    return [tuple(row) for row in page.eval_on_selector_all(selector, script)]


def bio_spans(tags: List[str]) -> List[Tuple[int, int, str]]:
    """(start, end inclusive, label) of BIO tags; an I- that does not continue its label starts a span."""
    spans: List[List[Any]] = []
    for i, tag in enumerate(tags):
        label = tag[2:]
        if tag.startswith("I-") and spans and spans[-1][2] == label and spans[-1][1] == i - 1:
            spans[-1][1] = i
        elif tag != "O":
            spans.append([i, i, label])
    return [tuple(span) for span in spans]


def drawable_mentions(clusters: List[List[List[int]]]) -> List[Tuple[int, int, int]]:
    """(start, end, cluster) of the mentions that nest (a mention crossing an open one is not drawn)."""
    mentions = sorted(
        ((s, e, k) for k, cluster in enumerate(clusters) for s, e in cluster), key=lambda m: (m[0], -m[1])
    )
    kept, open_ends = [], []
    for start, end, cluster in mentions:
        while open_ends and open_ends[-1] < start:
            open_ends.pop()
        if open_ends and end > open_ends[-1]:
            continue
        open_ends.append(end)
        kept.append((start, end, cluster))
    return kept


def expected_bars(probs: Dict[str, float], order: List[str], predicted: str) -> List[Tuple[str, float, bool]]:
    names = [n for n in order if n in probs] + [n for n in probs if n not in order]
    return [(name, probs[name], name == predicted) for name in names]
