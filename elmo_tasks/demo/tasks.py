"""The six tasks the demo can show: which predictor each model uses, its page name and its form.

A model archive says its model type; each of our models names its ``default_predictor``, and that
predictor is the task (the same mapping ``elmo_tasks.commands.command_paths`` uses for its
messages). The form of a task page has one field per input key of the predictor, in the order of
an ``allennlp predict`` line, prefilled with an example a reader can change.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional


@dataclass(frozen=True)
class FormField:
    """One input key of a predictor, as the page's form shows it."""

    key: str
    label: str
    example: str
    #: a textarea (several lines) rather than a one-line input
    multiline: bool = False
    #: optional keys are left out of the request when empty (SRL's ``verbs``)
    optional: bool = False
    #: "text" (sent as a string) or "indices" (comma-separated integers, sent as a JSON list)
    kind: str = "text"


@dataclass(frozen=True)
class DemoTask:
    """A task: its default page name, title, predictor and form."""

    name: str
    title: str
    predictor: str
    what_it_shows: str
    fields: List[FormField]

    def example(self) -> Dict[str, str]:
        """The prefilled input, as a JSON object (optional fields left out)."""
        return {field.key: field.example for field in self.fields if not field.optional}


TASKS: List[DemoTask] = [
    DemoTask(
        "ner",
        "Named entities (CoNLL-2003)",
        "ner",
        "entity spans, coloured by type",
        [FormField("sentence", "Sentence", "John Smith flew from Berlin to Paris to meet the head of Siemens .")],
    ),
    DemoTask(
        "srl",
        "Semantic role labelling (CoNLL-2005/2012)",
        "srl",
        "one row per predicate, with its argument spans labelled",
        [
            FormField("sentence", "Sentence", "The cat chased the mouse across the kitchen ."),
            FormField(
                "verbs",
                "Predicates (token indices, comma-separated; empty: found by the POS tagger)",
                "",
                optional=True,
                kind="indices",
            ),
        ],
    ),
    DemoTask(
        "coref",
        "Coreference (CoNLL-2012)",
        "coref",
        "mentions marked by cluster colour, and the clusters",
        [
            FormField(
                "document",
                "Document",
                "Anna bought a bike last week . She rides it to work every day . Her boss says it is too fast .",
                multiline=True,
            )
        ],
    ),
    DemoTask(
        "squad",
        "Question answering (SQuAD 1.1)",
        "squad",
        "the answer highlighted in the passage, with its probability",
        [
            FormField("question", "Question", "Who won the game?"),
            FormField(
                "passage",
                "Passage",
                "The Panthers beat the Denver Broncos 24-10 in Santa Clara , California , on Sunday night .",
                multiline=True,
            ),
        ],
    ),
    DemoTask(
        "snli",
        "Textual entailment (SNLI)",
        "snli",
        "the probabilities of entailment, neutral and contradiction",
        [
            FormField("premise", "Premise", "A man plays a guitar on stage ."),
            FormField("hypothesis", "Hypothesis", "A man performs music ."),
        ],
    ),
    DemoTask(
        "sst5",
        "Sentiment (SST-5)",
        "sst5",
        "the probabilities of the five sentiment classes",
        [FormField("sentence", "Sentence", "A gorgeous , witty and moving film .")],
    ),
]

TASK_BY_PREDICTOR: Dict[str, DemoTask] = {task.predictor: task for task in TASKS}


def task_of_predictor(predictor: Optional[str]) -> Optional[DemoTask]:
    """The task whose predictor is ``predictor`` (a model's ``default_predictor``), or None."""
    return TASK_BY_PREDICTOR.get(predictor or "")
