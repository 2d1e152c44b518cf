"""The srl predictor's predicates: given ones used exactly, otherwise the shipped POS tagger's.

The tagger always runs the shipped biLM (not the tiny test biLM that tests/conftest.py sets for
task models); it is loaded once for this module.
"""

from typing import List

import pytest
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.data.token_indexers import SingleIdTokenIndexer
from allennlp.models import Model

from elmo_tasks.tasks.srl import SrlConllReader, SrlPredictor
from elmo_tasks.tasks.srl.verbs import PosVerbFinder, verbs_from_tags
from tests.conftest import FIXTURES_ROOT


@pytest.fixture(scope="module")
def finder() -> PosVerbFinder:
    return PosVerbFinder()


@pytest.fixture(scope="module")
def reader() -> SrlConllReader:
    return SrlConllReader(token_indexers={"tokens": SingleIdTokenIndexer(lowercase_tokens=True)})


@pytest.fixture(scope="module")
def model(reader) -> Model:
    """An untrained SRL model: these tests check which predicates it is asked about, not its tags."""
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "srl" / "conll2005_train.txt")))
    params = {
        "type": "srl_model",
        "predicate_embedding_dim": 4,
        "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 8}}},
        "encoder": {"type": "alternating_lstm", "hidden_size": 8, "num_layers": 2},
    }
    return Model.from_params(vocab=vocab, params=Params(params)).eval()


class NoTagger(PosVerbFinder):
    """A finder that fails if asked: proves that given verbs never reach the tagger."""

    def find(self, sentences):
        raise AssertionError("the tagger was asked although the input named the verbs")


@pytest.mark.parametrize(
    "sentence, verbs",
    [
        ("The cat chased the mouse .", ["chased"]),
        ("Mira baked a cake for her brother .", ["baked"]),
        ("The company sells cars and will open a new factory .", ["sells", "open"]),
        ("She has eaten the apple and is running home .", ["eaten", "running"]),  # auxiliaries are not
        ("They did not go to the market .", ["go"]),
        ("I have a dog .", ["have"]),  # main-verb have is a predicate
        ("He is happy .", []),  # be never is (CoNLL-2005)
    ],
)
def test_the_tagger_finds_the_verbs_of_plain_sentences(finder, sentence, verbs):
    words = sentence.split()
    [found] = finder.find([words])
    assert found.method == "pos_tagger" and len(found.pos_tags) == len(words)
    assert [words[i] for i in found.indices] == verbs, found.pos_tags


def test_auxiliary_rules_on_given_tags():
    def verbs(tagged: str) -> List[str]:
        words, tags = zip(*(pair.rsplit("/", 1) for pair in tagged.split()), strict=True)
        return [words[i] for i in verbs_from_tags(words, tags)]

    assert verbs("Did/VBD you/PRP see/VB it/PRP ?/.") == ["see"]
    assert verbs("He/PRP has/VBZ n't/RB always/RB been/VBN seen/VBN ./.") == ["seen"]
    assert verbs("They/PRP did/VBD it/PRP ./.") == ["did"]  # one pronoun skipped, then no verb
    assert verbs("It/PRP 's/VBZ raining/VBG and/CC it/PRP 's/VBZ cold/JJ ./.") == ["raining"]
    assert verbs("She/PRP will/MD leave/VB ./.") == ["leave"]


def test_without_verbs_the_predictor_labels_the_tagged_verbs_and_says_how(model, reader, finder):
    predictor = SrlPredictor(model, reader, verb_finder=finder)
    result = predictor.predict_json({"sentence": "The cat chased the mouse."})
    assert result["words"] == ["The", "cat", "chased", "the", "mouse", "."]
    assert result["verbs_given"] is False and result["verbs_found_by"] == "pos_tagger"
    assert result["pos_tags"][2] == "VBD" and len(result["pos_tags"]) == 6
    assert [(frame["index"], frame["verb"]) for frame in result["verbs"]] == [(2, "chased")]
    assert len(result["verbs"][0]["tags"]) == 6 and "verbs_note" not in result


def test_given_verbs_are_used_exactly_and_never_tagged(model, reader):
    predictor = SrlPredictor(model, reader, verb_finder=NoTagger())
    result = predictor.predict_json({"sentence": "The cat chased the mouse.", "verbs": [4, 1, 4]})
    assert result["verbs_given"] is True and result["verbs_found_by"] == "input" and "pos_tags" not in result
    assert [frame["index"] for frame in result["verbs"]] == [1, 4]
    assert predictor.predict_json({"sentence": "The cat chased the mouse.", "verbs": []})["verbs"] == []


def test_a_batch_tags_only_the_sentences_without_verbs(model, reader, finder):
    predictor = SrlPredictor(model, reader, verb_finder=finder)
    given, tagged = predictor.predict_batch_json(
        [{"sentence": "The dog chased the ball.", "verbs": [1]}, {"sentence": "Tomas sold the old boat."}]
    )
    assert given["verbs_found_by"] == "input" and [f["verb"] for f in given["verbs"]] == ["dog"]
    assert tagged["verbs_found_by"] == "pos_tagger" and [f["verb"] for f in tagged["verbs"]] == ["sold"]


def test_the_default_finder_loads_the_shipped_files_only_when_needed(model, reader):
    predictor = SrlPredictor(model, reader)
    assert predictor._verb_finder.files[1] == "elmo_tasks:pretrained/bilm_small/options.json"
    assert predictor._verb_finder.missing_files() == []
    predictor.predict_json({"sentence": "The cat chased the mouse.", "verbs": [2]})
    assert not predictor._verb_finder.loaded


def test_missing_tagger_files_fall_back_to_the_heuristic(model, reader):
    missing = "elmo_tasks:pretrained/bilm_small/no_such_tagger.npz"
    predictor = SrlPredictor(model, reader, verb_finder=PosVerbFinder(tagger_file=missing))
    result = predictor.predict_json({"sentence": "The dog chased the ball yesterday."})
    assert result["verbs_found_by"] == "heuristic" and missing in result["verbs_note"]
    assert [frame["verb"] for frame in result["verbs"]] == ["chased"] and "pos_tags" not in result
