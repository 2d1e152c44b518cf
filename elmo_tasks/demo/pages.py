"""The demo's HTML pages, written as plain strings: no template engine, nothing fetched from elsewhere.

Pages are small and mostly static: the server writes what it knows at start-up (the models, their
scores and learned mixing weights, the form prefilled with an example) and ``static/demo.js``
draws predictions into ``#result``. Every value from an archive or a config is escaped; data the
script needs travels as JSON in a ``<script type="application/json">`` element, with ``<``
escaped so no value can close it.
"""

import json
from html import escape
from typing import Any, List, Optional, Sequence, Tuple

from elmo_tasks.counted_nouns import counted
from elmo_tasks.demo.bilm_neighbours import BilmNeighbours
from elmo_tasks.demo.loaded_models import LoadedModel
from elmo_tasks.demo.mixing_weights import LayerMix
from elmo_tasks.demo.task_pages import FormField

#: The query the biLM page starts with: the paper's Table 4 example, with the word to look at.
BILM_EXAMPLE = ("Chico Ruiz made a spectacular play on Alusik 's grounder .", "play")


def layout(title: str, body: str, models: Sequence[LoadedModel], has_bilm: bool, data: Any = None) -> str:
    """A whole page: navigation to every model (and the biLM page), ``body``, the scripts."""
    links = [("/", "All models")] + [(f"/models/{escape(m.name)}", escape(m.name)) for m in models]
    if has_bilm:
        links.append(("/bilm", "biLM neighbours"))
    nav = " ".join(f'<a href="{href}">{text}</a>' for href, text in links)
    data_json = json.dumps(data).replace("<", "\\u003c") if data is not None else "null"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)} · ELMo demo</title><link rel="stylesheet" href="/static/demo.css"></head>'
        f"<body><header><strong>ELMo demo</strong> <nav>{nav}</nav></header><main>{body}</main>"
        f'<script type="application/json" id="page-data">{data_json}</script>'
        '<script src="/static/draw.js"></script><script src="/static/demo.js"></script></body></html>\n'
    )


def bar_rows(rows: Sequence[Tuple[str, float]], css_class: str = "bars") -> str:
    """Horizontal bars for values in [0, 1], the same markup ``draw.js`` writes for probabilities."""
    parts = []
    for label, value in rows:
        percent = f"{100 * value:.1f}%"
        parts.append(
            f'<div class="bar-row" data-label="{escape(label)}" data-value="{value:.6f}">'
            f'<span class="bar-label">{escape(label)}</span>'
            f'<span class="bar-track"><span class="bar" style="width: {percent}"></span></span>'
            f'<span class="bar-value">{percent}</span></div>'
        )
    return f'<div class="{css_class}">{"".join(parts)}</div>'


def _bilm_cell(model: LoadedModel) -> str:
    if not model.bilms:
        return "none (baseline without ELMo)"
    return "<br>".join(
        f"<code>{escape(b.options_file)}</code> + <code>{escape(b.weight_file)}</code>"
        + (" (fine-tuned)" if b.fine_tuned else "")
        for b in model.bilms
    )


def _scores_cell(model: LoadedModel) -> str:
    scores = model.scores
    if not scores.scores:
        return "none beside the archive"
    listed = ", ".join(f"{escape(where)} {value:.4f}" for where, value in scores.scores.items())
    epoch = f" (best epoch {scores.best_epoch})" if scores.best_epoch is not None else ""
    return f"{escape(scores.metric or '')}: {listed}{epoch}"


def index_page(models: Sequence[LoadedModel], bilm: Optional[BilmNeighbours]) -> str:
    """``GET /``: a row per model (task, archive, biLM, scores) with a link to its page."""
    rows = "".join(
        f'<tr data-model="{escape(m.name)}"><td><a href="/models/{escape(m.name)}">{escape(m.name)}</a></td>'
        f"<td>{escape(m.task.title)}</td><td><code>{escape(m.archive_file)}</code></td>"
        f"<td>{_bilm_cell(m)}</td><td>{_scores_cell(m)}</td></tr>"
        for m in models
    )
    bilm_part = ""
    if bilm is not None:
        bilm_part = (
            f'<h2>The biLM</h2><p><a href="/bilm">Nearest neighbours in context</a> of a word, per layer, '
            f"with <code>{escape(bilm.description)}</code> over {counted(len(bilm.sentences), 'corpus sentence')}.</p>"
        )
    body = (
        f'<h1>Models</h1><table id="models"><thead><tr><th>Page</th><th>Task</th><th>Archive</th><th>biLM</th>'
        f"<th>Scores (from the run folder)</th></tr></thead><tbody>{rows}</tbody></table>{bilm_part}"
    )
    return layout("Models", body, models, bilm is not None)


def _field_html(field: FormField) -> str:
    attributes = f'name="{escape(field.key)}" data-kind="{field.kind}" data-optional="{str(field.optional).lower()}"'
    if field.multiline:
        control = f'<textarea {attributes} rows="5">{escape(field.example)}</textarea>'
    else:
        control = f'<input type="text" {attributes} value="{escape(field.example)}">'
    return f"<label>{escape(field.label)}{control}</label>"


def mixing_weights_html(mixes: List[LayerMix]) -> str:
    """The learned softmax weights per layer of each mix (the paper's Figure 2), or why there are none."""
    if not mixes:
        return '<p class="no-elmo">This model uses no ELMo (a baseline): it has no mixing weights.</p>'
    figures = []
    for mix in mixes:
        rows = [(f"layer {j}", weight) for j, weight in enumerate(mix.weights)]
        figures.append(
            f'<figure class="mix" data-representation="{escape(mix.representation)}">'
            f"<figcaption>{escape(mix.representation)} (γ = {mix.gamma:.3f})</figcaption>{bar_rows(rows)}</figure>"
        )
    note = "Softmax of each scalar mix's parameters; layer 0 is the character CNN, layers 1 and up the biLSTMs."
    return "".join(figures) + f'<p class="note">{note}</p>'


def model_page(model: LoadedModel, models: Sequence[LoadedModel], has_bilm: bool) -> str:
    """``GET /models/NAME``: the form, the drawn prediction, and the model's mixing weights beside them."""
    task = model.task
    fields = "".join(_field_html(field) for field in task.fields)
    body = (
        f"<h1>{escape(task.title)} <small>{escape(model.name)}</small></h1>"
        f"<p>Shows {escape(task.what_it_shows)}. Archive <code>{escape(model.archive_file)}</code>.</p>"
        '<div class="columns"><section class="predict">'
        f'<form id="predict-form" data-task="{escape(task.name)}" data-api="/api/{escape(model.name)}/predict">'
        f'{fields}<button type="submit">Predict</button></form>'
        '<p id="status" role="status" aria-live="polite"></p>'
        f'<div id="result" data-task="{escape(task.name)}"></div>'
        "<details><summary>Response JSON (as <code>allennlp predict</code> writes it)</summary>"
        '<pre id="raw-json"></pre></details></section>'
        f'<aside id="mixing-weights"><h2>ELMo mixing weights</h2>{mixing_weights_html(model.mixes)}</aside></div>'
    )
    return layout(model.name, body, models, has_bilm, {"task": task.name, "model": model.name})


def bilm_page(bilm: BilmNeighbours, models: Sequence[LoadedModel]) -> str:
    """``GET /bilm``: a sentence, its words as buttons, and each layer's nearest corpus tokens."""
    sentence, word = BILM_EXAMPLE
    body = (
        "<h1>The biLM: words in context</h1>"
        "<p>Pick a word of the sentence to see the corpus tokens whose vectors are closest to it (cosine "
        "similarity), in each layer of the biLM. Layer 0 gives every occurrence of a word the same vector; "
        "the biLSTM layers see the context, and tend to group the word's senses (Peters et al. 2018, Table 4).</p>"
        f"<p>biLM <code>{escape(bilm.description)}</code>; corpus of "
        f"{counted(len(bilm.sentences), 'sentence')} bundled with the demo.</p>"
        '<form id="bilm-form" data-api="/api/bilm/neighbours">'
        f'<label>Sentence<input type="text" name="sentence" value="{escape(sentence)}"></label>'
        '<label class="inline"><input type="checkbox" name="same_word" checked> only occurrences of the same '
        'word</label><button type="submit">Show the words</button></form>'
        '<p id="status" role="status" aria-live="polite"></p>'
        '<div id="words" class="word-picker"></div><div id="neighbours" class="layers"></div>'
    )
    return layout("biLM", body, models, True, {"task": "bilm", "word": word})


def not_found_page(message: str, models: Sequence[LoadedModel], has_bilm: bool) -> str:
    return layout("Not found", f'<h1>Not found</h1><p class="error">{escape(message)}</p>', models, has_bilm)
