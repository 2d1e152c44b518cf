"""A shipped model's ``MODEL_CARD.md``, written from its run record and the shipping command's measurements.

Nothing in a card is typed by hand but what this module says of each task's data (:data:`TRAINING_DATA`,
after docs/DATA.md) and of each task's use; every number, command and file name comes from the record
(elmo_tasks/reproduction/records.py) or from ``shipped.json``, so shipping again rewrites the card.
"""

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from elmo_tasks.counted_nouns import counted
from elmo_tasks.demo.task_pages import TASK_BY_PREDICTOR
from elmo_tasks.pretrained.catalogue import size_text
from elmo_tasks.reproduction.records import Record
from elmo_tasks.reproduction.shown_paths import command_with_data_root_named
from elmo_tasks.reproduction.task_table import TASKS

SMALL_BILM_CARD = "../bilm_small/MODEL_CARD.md"


@dataclass(frozen=True)
class TrainingData:
    """What a task's data is, whose text it holds, its terms, and what a model of it is good for."""

    dataset: str
    text: str
    terms: str
    good_for: str
    limits: str


_LDC_WEIGHTS = (
    "The archive holds no sentence of it, but its vocabulary files list words of the data and its weights were "
    "trained on it: we share them for research by holders of the corpus's licence; check your licence before any "
    "other use."
)
TRAINING_DATA: Dict[str, TrainingData] = {
    "ner": TrainingData(
        dataset="CoNLL-2003 English named entities (Tjong Kim Sang and De Meulder 2003)",
        text="Reuters news stories of 1996-97 from the Reuters Corpus Volume 1 (RCV1), tagged with persons, "
        "locations, organisations and miscellaneous names",
        terms="RCV1 is distributed by NIST under the Reuters/NIST agreement, for research; its text may not be "
        "redistributed, so no sentence of it is in this repository. The archive holds none either, but its "
        "vocabulary files list words of the data and its weights were trained on it: they are shared for "
        "research, under the same agreement; check it before any other use.",
        good_for="finding names of persons (PER), locations (LOC), organisations (ORG) and other names (MISC) in "
        "English news sentences, tokenized as the CoNLL files are (punctuation split off)",
        limits="news of 1996-97: other genres (social media, biomedical, legal text), later names and lowercased or "
        "untokenized text score lower; English only",
    ),
    "snli": TrainingData(
        dataset="the Stanford Natural Language Inference corpus 1.0 (Bowman et al. 2015)",
        text="image captions of Flickr30k as premises, with hypotheses written by crowd workers",
        terms="CC BY-SA 4.0: keep the attribution. How share-alike carries over to weights trained on the data is "
        "not settled here.",
        good_for="telling whether a short hypothesis follows from, contradicts or is neutral to a premise, for "
        "everyday descriptions of scenes",
        limits="the captions' world (people and things in photographs); known annotation artefacts of SNLI let "
        "models guess from the hypothesis alone; English only",
    ),
    "squad": TrainingData(
        dataset="SQuAD v1.1 (Rajpurkar et al. 2016); the mini budget's runs use XQuAD's English file (Artetxe et "
        "al. 2020), 1,190 questions of SQuAD's development set, in folds",
        text="Wikipedia paragraphs with crowd-written questions whose answers are spans of the paragraph",
        terms="CC BY-SA 4.0 (SQuAD and XQuAD): keep the attribution. How share-alike carries over to weights "
        "trained on the data is not settled here.",
        good_for="extracting the span of a paragraph that answers a factual question about it",
        limits="always answers with a span, even when the paragraph holds no answer; encyclopaedic English only",
    ),
    "srl": TrainingData(
        dataset="the CoNLL-2005 (PropBank over the Wall Street Journal) or CoNLL-2012 (OntoNotes 5.0) semantic role "
        "labelling data, as the record's ELMO_TASKS_SRL_DATASET says (default CoNLL-2005)",
        text="Wall Street Journal news (CoNLL-2005); news, conversation, web text and more (CoNLL-2012)",
        terms="both are distributed by the LDC and may not be redistributed, so no sentence of them is in this "
        "repository. " + _LDC_WEIGHTS,
        good_for="labelling who did what to whom for each verb of an English sentence (PropBank roles)",
        limits="verbs only (no nominal predicates); genres beyond the training data score lower; English only",
    ),
    "coref": TrainingData(
        dataset="the CoNLL-2012 English coreference data (Pradhan et al. 2012), built from OntoNotes 5.0",
        text="broadcast news and conversation, magazines, newswire, telephone conversation, web text and the New "
        "Testament",
        terms="OntoNotes is distributed by the LDC and may not be redistributed, so no sentence of it is in this "
        "repository. " + _LDC_WEIGHTS,
        good_for="grouping the mentions of a short English document that refer to the same entity",
        limits="documents are cut to the training's length limits; singletons are never predicted (as in "
        "OntoNotes); English only",
    ),
    "sst5": TrainingData(
        dataset="the Stanford Sentiment Treebank, five classes (Socher et al. 2013)",
        text="sentences of Rotten Tomatoes film reviews (Pang and Lee 2005), every phrase labelled very negative to "
        "very positive",
        terms="free for research, as its release says; check its terms before any other use.",
        good_for="rating the sentiment of a single English sentence about a film on five levels",
        limits="film reviews only; the five levels are hard even for people (the paper's best is 54.7% accuracy); "
        "English only",
    ),
}


def card_text(record: Record, facts: Dict[str, Any]) -> str:
    """The card of a model shipped from ``record`` (``facts``: what ``shipped.json`` holds)."""
    task = record["task"]
    spec, data = TASKS[task], TRAINING_DATA[task]
    reference = f"elmo_tasks:pretrained/{facts['name']}"
    sections = [
        f"# Model card: elmo-tasks {spec.name} model (`{reference}`)",
        f"<!-- Written by `{facts['made_by']}` from record.json beside it; do not edit by hand: ship again. -->",
        _summary(record, facts),
        _usage(reference, facts),
        _what_it_is(record, facts),
        _data_section(record, data, facts),
        _origin(record, facts),
        _scores(record, facts),
        _good_for(data),
    ]
    return "\n\n".join(sections) + "\n"


def _summary(record: Record, facts: Dict[str, Any]) -> str:
    spec = TASKS[record["task"]]
    return (
        f"**A demonstration, not a production model.** A {spec.name} model of elmo-tasks' reproduction of "
        "Peters et al. (2018), with ELMo from the small biLM that ships with the package (7M parameters trained "
        "on a 25M-token corpus: far smaller, and far more briefly trained, than the paper's), trained on a CPU "
        f"budget (the `{facts['budget']}` budget of `scripts/reproduce.py`). Its test {spec.metric_name} is "
        f"{facts['test']:.2f}, where the paper's ELMo model has {spec.paper['elmo']:.2f}: use it to try the "
        "task, the demo and the pipeline end to end, not where the quality matters."
    )


def _python_dict_lines(name: str, values: Dict[str, Any]) -> List[str]:
    """`name = {...}` one key per line with a trailing comma, the layout `ruff format` keeps, so the
    card's code block stays formatted however long the example is."""
    if not values:
        return [f"{name} = {{}}"]
    return [f"{name} = {{", *(f"    {json.dumps(key)}: {json.dumps(value)}," for key, value in values.items()), "}"]


def _usage(reference: str, facts: Dict[str, Any]) -> str:
    predictor = facts["predictor"]
    example_input = TASK_BY_PREDICTOR[predictor].example() if predictor in TASK_BY_PREDICTOR else {}
    example = json.dumps(example_input)
    return "\n".join(
        [
            "## Use",
            "",
            "```bash",
            f"echo {shlex.quote(example)} > input.jsonl",
            f"elmo-tasks predict {reference} input.jsonl --predictor {predictor}   # or allennlp predict, "
            "from the checkout",
            "elmo-tasks elmo-demo   # every shipped model in a web page",
            "```",
            "",
            "```python",
            "import elmo_tasks.plugin  # registers the models",
            "from allennlp.predictors import Predictor",
            "from elmo_tasks.command_start import start_command",
            "",
            "start_command()  # what a command does first; it makes the name loadable",
            f'predictor = Predictor.from_path("{reference}", "{predictor}")',
            *_python_dict_lines("example", example_input),
            "print(predictor.predict_json(example))",
            "```",
        ]
    )


def _what_it_is(record: Record, facts: Dict[str, Any]) -> str:
    overrides = record.get("overrides") or {}
    config = f"`{record.get('config', '?')}`" + (f" with `-o '{json.dumps(overrides)}'`" if overrides else "")
    precision = facts["precision"]
    rows = [
        ("model", f"`{facts['model_type']}` from {config} (variant `{record['variant']}`)"),
        (
            "biLM",
            "the shipped small biLM, `elmo_tasks:pretrained/bilm_small/` "
            f"([its card]({SMALL_BILM_CARD})), weights sha256 `{record.get('bilm_weights_sha256', 'none')}`: named by "
            "package reference in the archive's config and read from the installed package, not copied into the "
            "archive"
            if facts.get("bilm_weights_sha256")
            else "none (a model without ELMo)",
        ),
        (
            "files",
            f"`model.tar.gz` ({size_text(facts['archive_bytes'])}, weights in {precision}), `record.json` (the "
            "run record it comes from), `shipped.json` (what `elmo-tasks pretrained-models` lists), this card",
        ),
        ("predictor", f'`{facts["predictor"]}` (its input and output: docs/REFERENCE.md, "Registered names")'),
    ]
    return "## What it is\n\n" + _table(rows)


def _data_section(record: Record, data: TrainingData, facts: Dict[str, Any]) -> str:
    config = record.get("config_resolved") or {}
    files = [
        ("trained on", config.get("train_data_path")),
        ("model chosen on", config.get("validation_data_path")),
        ("tested on", facts.get("test_file")),
    ]
    used = "; ".join(f"{what} `{_file_label(path)}`" for what, path in files if path)
    return "\n".join(
        [
            "## Training data and its terms",
            "",
            f"- **Data**: {data.dataset}: {data.text}. This run (data mode `{record.get('data', '?')}`, "
            f"docs/DATA.md): {used}.",
            f"- **Terms**: {data.terms}",
            "- **The biLM's text**: Wikipedia, public-domain books, the Brown corpus (non-commercial use) and news "
            f"(research use): see [the biLM's card]({SMALL_BILM_CARD}).",
        ]
    )


def _origin(record: Record, facts: Dict[str, Any]) -> str:
    spec = TASKS[record["task"]]
    chosen_from = ", ".join(
        f"{run['run_name']} {run['validation']:.2f}" + (" (this one)" if run["run_name"] == record["run_name"] else "")
        for run in facts["chosen_from"]
    )
    commit = record.get("git_commit") or "?"
    dirty = " (with uncommitted changes)" if record.get("git_dirty") else ""
    seconds = record.get("train_seconds")
    epochs = len(record.get("validation_curve") or [])
    rows = [
        ("run", f"`{record['run_name']}` of `scripts/reproduce.py {record['task']} --budget {facts['budget']}`"),
        ("seed", f"{record.get('seed', '?')} (`ELMO_TASKS_SEED`; seed index {record['seed_index']})"),
        ("biLM weights sha256", f"`{record.get('bilm_weights_sha256') or 'none'}`"),
        ("code", f"git commit `{commit}`{dirty}"),
        (
            "training",
            f"{counted(epochs, 'epoch')} validated, the best being epoch {record.get('best_epoch')} (counted from 0)"
            + (f"; {_duration(seconds)} of training" if isinstance(seconds, (int, float)) else ""),
        ),
        (
            "chosen",
            f"the best validation {spec.metric_name} of {counted(len(facts['chosen_from']), 'run')} of this variant "
            f"and budget with the shipped biLM: {chosen_from}; test scores played no part",
        ),
    ]
    commands = "\n".join(command_with_data_root_named(c) for c in record.get("commands") or ["(not recorded)"])
    listed = (
        "Its commands, from the record (`$ELMO_TASKS_SHARED_DATA`: the data folder, docs/DATA.md):"
        f"\n\n```bash\n{commands}\n```"
    )
    return "## Where it comes from\n\n" + _table(rows) + "\n\n" + listed


def _scores(record: Record, facts: Dict[str, Any]) -> str:
    spec = TASKS[record["task"]]
    check = facts["precision_check"]
    test_file = _file_label(facts.get("test_file"))
    validation_file = _file_label((record.get("config_resolved") or {}).get("validation_data_path"))
    rows = [
        (f"validation (`{validation_file}`), best epoch", f"{facts['validation']:.2f}"),
        (f"test (`{test_file}`), as the record has it", f"{record['value']:.2f}"),
    ]
    if "float16" in check:
        rows += [
            ("test, weights in float32", f"{check['float32']:.2f}"),
            ("test, weights in float16", f"{check['float16']:.2f}"),
        ]
    paper = f"baseline {spec.paper['baseline']}, ELMo {spec.paper['elmo']}"
    rows.append(("the paper (Peters et al. 2018, Table 1)", paper))
    if "float16" in check:
        changed = abs(check["float16"] - check["float32"])
        choice = (
            f"float16 changes the test {spec.metric_name} by {changed:.3f} points, less than {check['tolerance']}: "
            "the weights ship in float16"
            if facts["precision"] == "float16"
            else f"float16 changes the test {spec.metric_name} by {changed:.3f} points, not less than "
            f"{check['tolerance']}: the weights ship in float32"
        )
    else:
        choice = f"float16 was not measured ({check.get('not_measured', '?')}): the weights ship in float32"
    return f"## Scores ({spec.metric_name})\n\n" + _table(rows) + f"\n\n{choice}."


def _good_for(data: TrainingData) -> str:
    return "\n".join(
        [
            "## Good for, and its limits",
            "",
            f"- **Good for**: {data.good_for}; trying elmo-tasks end to end (the predictors, the demo).",
            f"- **Limits**: a demonstration: a small biLM and a CPU training budget keep it well below the paper's "
            f"model, and one seed's run is no estimate of the variance. {data.limits[0].upper()}{data.limits[1:]}.",
            "- **Not for**: decisions about people, or any use where an error costs something; it was trained and "
            "tested on one benchmark's data and is not checked for biases.",
        ]
    )


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{max(seconds / 60, 1):.0f} min"


def _file_label(path: Optional[str]) -> str:
    """A data file as the card names it: its name, with any ``#`` suffix (a split or fold)."""
    if not path:
        return "?"
    file_part, hash_mark, suffix = str(path).partition("#")
    return Path(file_part).name + hash_mark + suffix


def _table(rows: List[Any]) -> str:
    return "\n".join(["| | |", "|---|---|", *(f"| {what} | {value} |" for what, value in rows)])
