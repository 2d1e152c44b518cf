"""The squad_v1 reader: token spans from character spans, gold answers, caps, folds, errors."""

import json
import logging
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import WhitespaceTokenizer

from elmo_tasks.tasks.squad.articles import load_articles, split_path
from elmo_tasks.tasks.squad.reader import SquadFormatError, SquadV1Reader
from tests.conftest import FIXTURES_ROOT, SHARED_DATA, needs_shared

TRAIN = FIXTURES_ROOT / "squad" / "train.json"
XQUAD = SHARED_DATA / "squad" / "xquad.en.json"


def _write(tmp_path: Path, articles: List[Dict[str, Any]], name: str = "data.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"version": "1.1", "data": articles}))
    return str(path)


def _article(title: str, context: str, qas: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"title": title, "paragraphs": [{"context": context, "qas": qas}]}


def _qa(qid: str, question: str, *answers: tuple) -> Dict[str, Any]:
    return {"id": qid, "question": question, "answers": [{"text": t, "answer_start": s} for t, s in answers]}


def _write_passage(tmp_path: Path, context: str, questions: List[Tuple[str, str, List[str]]]) -> str:
    """A file of one article of one passage, ``context``; each question's gold answers, given as
    (id, question, answer texts), at the first place in ``context`` where their text stands."""
    qas = [_qa(qid, question, *((text, context.index(text)) for text in texts)) for qid, question, texts in questions]
    return _write(tmp_path, [_article("t", context, qas)])


def _span_text(instance) -> str:
    meta = instance["metadata"].metadata
    offsets = meta["token_offsets"]
    start, end = instance["span_start"].sequence_index, instance["span_end"].sequence_index
    return meta["passage_text"][offsets[start][0] : offsets[end][1]]


def test_fixture_spans_cut_the_gold_answer_out_of_the_passage():
    instances = list(SquadV1Reader().read(str(TRAIN)))
    questions = [qa for a in json.loads(TRAIN.read_text())["data"] for p in a["paragraphs"] for qa in p["qas"]]
    assert len(instances) == len(questions) == 62
    for instance, qa in zip(instances, questions, strict=True):
        meta = instance["metadata"].metadata
        assert meta["question_id"] == qa["id"]
        assert meta["answer_texts"] == [a["text"] for a in qa["answers"]]
        assert _span_text(instance) == qa["answers"][0]["text"]  # every fixture answer is token-aligned


def test_misaligned_answer_uses_the_covering_span_and_is_counted(tmp_path, caplog):
    path = _write_passage(
        tmp_path,
        "Sales rose in the 1990s and fell in 2001.",
        [("q1", "When did sales rise?", ["1990"]), ("q2", "When did they fall?", ["2001"])],
    )
    with caplog.at_level(logging.INFO):
        instances = list(SquadV1Reader().read(path))
    assert _span_text(instances[0]) == "1990s" and _span_text(instances[1]) == "2001"
    assert instances[0]["metadata"].metadata["answer_texts"] == ["1990"]
    assert "2 questions -> 2 instances; 1 gold answer not on token boundaries" in caplog.text


def test_several_gold_answers_all_kept_majority_span_is_the_target(tmp_path):
    path = _write_passage(
        tmp_path,
        "The Panthers beat the Denver Broncos in Santa Clara.",
        [("q", "Who lost?", ["Broncos", "Denver Broncos", "the Denver Broncos", "Denver Broncos"])],
    )
    instance = list(SquadV1Reader().read(path))[0]
    assert _span_text(instance) == "Denver Broncos"
    assert instance["metadata"].metadata["answer_texts"] == [
        "Broncos",
        "Denver Broncos",
        "the Denver Broncos",
        "Denver Broncos",
    ]


def test_passage_cap_truncates_and_skips_unreachable_answers(tmp_path, caplog):
    path = _write_passage(
        tmp_path,
        "one two three four five six seven eight",
        [("near", "q?", ["two"]), ("far", "q?", ["eight"]), ("both", "q?", ["seven", "three"])],
    )
    with caplog.at_level(logging.INFO):
        instances = list(SquadV1Reader(passage_length_limit=4).read(path))
    assert [i["metadata"].metadata["question_id"] for i in instances] == ["near", "both"]
    assert all(len(i["passage"].tokens) == 4 for i in instances)
    assert _span_text(instances[1]) == "three"
    assert "1 question skipped because the answer lies beyond passage_length_limit=4" in caplog.text
    assert len(list(SquadV1Reader().read(path))) == 3  # no cap: every question


@pytest.mark.parametrize(
    "qa, message",
    [
        (
            {"id": "q7", "question": "Who?", "answers": [{"text": "Bob", "answer_start": 3}]},
            "q7: answer 'Bob' is not at character 3",
        ),
        ({"id": "q8", "question": "", "answers": []}, "q8: 'question' must be a non-empty string"),
        ({"id": "q9", "question": "Who?", "answers": [{"text": "Ann"}]}, "q9: each answer needs 'text'"),
        ({"question": "Who?", "answers": []}, "a question has no string 'id'"),
    ],
)
def test_malformed_entries_name_the_question_id(tmp_path, qa, message):
    path = _write(tmp_path, [_article("t", "Ann met Bob.", [qa])])
    with pytest.raises(SquadFormatError, match=message) as error:
        list(SquadV1Reader().read(path))
    assert path in str(error.value)


def test_not_squad_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SquadFormatError, match="not valid JSON"):
        list(SquadV1Reader().read(str(bad)))
    bad.write_text("[1, 2]")
    with pytest.raises(SquadFormatError, match="'data' list of articles"):
        list(SquadV1Reader().read(str(bad)))


def test_a_tokenizer_without_character_offsets_is_named(tmp_path):
    # Answers are located by character offsets, which AllenNLP's whitespace tokenizer does not keep.
    path = _write(tmp_path, [_article("t", "Ann met Bob.", [_qa("q1", "Who?", ("Bob.", 8))])])
    with pytest.raises(
        ConfigurationError, match="squad_reader: the tokenizer gave the token 'Ann' no character offsets"
    ):
        list(SquadV1Reader(tokenizer=WhitespaceTokenizer()).read(path))


def test_folds_partition_the_articles(tmp_path):
    articles = [_article(f"a{i}", f"Text {i}.", [_qa(f"q{i}", "Which?", (str(i), 5))]) for i in range(7)]
    path = _write(tmp_path, articles)

    def ids(suffix):
        return [i["metadata"].metadata["question_id"] for i in SquadV1Reader().read(path + suffix)]

    assert ids("#fold=1/3") == ["q0", "q3", "q6"] and ids("#fold=2/3") == ["q1", "q4"]
    assert ids("#folds-except=1/3") == ["q1", "q2", "q4", "q5"]
    assert ids("#folds-except=1,2/3") == ids("#fold=3/3") == ["q2", "q5"]
    assert [a["title"] for a in load_articles(path)] == [f"a{i}" for i in range(7)]


@pytest.mark.parametrize(
    "suffix", ["#fold=0/3", "#fold=4/3", "#fold=1/1", "#fold=1,2/3", "#folds=1/3", "#fold=x/3", "#fold=1"]
)
def test_bad_fold_suffix_says_what_is_allowed(suffix):
    with pytest.raises(ValueError, match="#fold=K/N"):
        split_path("data.json" + suffix)


@needs_shared
def test_xquad_four_folds_cover_every_question_once_with_disjoint_articles():
    reader = SquadV1Reader()
    folds = [list(reader.read(f"{XQUAD}#fold={k}/4")) for k in range(1, 5)]
    ids = [i["metadata"].metadata["question_id"] for fold in folds for i in fold]
    assert len(ids) == len(set(ids)) == 1190
    passages = [{i["metadata"].metadata["passage_text"] for i in fold} for fold in folds]
    assert sum(len(p) for p in passages) == len(set().union(*passages)) == 240
    rest = [i["metadata"].metadata["question_id"] for i in reader.read(f"{XQUAD}#folds-except=1/4")]
    assert sorted(rest) == sorted(ids[len(folds[0]) :])
