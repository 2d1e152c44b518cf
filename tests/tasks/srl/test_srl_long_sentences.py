"""Long sentences: predicates go through the model in bounded passes with the outputs of one pass,
sentences over the limit are refused, and a 3,000-token sentence predicts in bounded memory."""

import json
import subprocess
import sys

import pytest
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from elmo_tasks.modules.elmo_token_embedder import find_elmo_embedder
from elmo_tasks.modules.layer_cache import LayerCache
from elmo_tasks.tasks.input_limits import InputTooLong
from elmo_tasks.tasks.srl.sentence_prediction import predict_predicates
from tests.conftest import ROOT, untrained_archive
from tests.tasks.command_runs import PREDICT_REPORTING_PEAK_MEMORY

SENTENCE = "The company sells cars , buys parts , hires workers and opens new factories ."
VERBS = [2, 5, 8, 11]  # sells, buys, hires, opens
LENGTH = 15


@pytest.fixture(scope="module")
def archive_file(tmp_path_factory) -> str:
    """The srl_elmo experiment's model with the tiny test biLM, untrained: these tests compare its
    outputs across batchings, not its quality."""
    return str(untrained_archive("srl_elmo", tmp_path_factory.mktemp("srl_elmo")))


@pytest.fixture(scope="module")
def archive(archive_file):
    return load_archive(archive_file)


def _predictor(archive, **limits) -> Predictor:
    return Predictor.from_archive(archive, "srl", extra_args=limits)


def _passes(predictor: Predictor, monkeypatch) -> list:
    """Records the size of every batch the model runs (until the test ends)."""
    sizes = []
    model = predictor._model
    run = model.forward_on_instances
    monkeypatch.setattr(model, "forward_on_instances", lambda instances: sizes.append(len(instances)) or run(instances))
    return sizes


def test_predicates_in_several_passes_give_the_outputs_of_one_pass_and_one_bilm_run(archive, monkeypatch):
    item = {"sentence": SENTENCE, "verbs": VERBS}
    one_at_a_time = _predictor(archive, tokens_per_batch=LENGTH)
    elmo = find_elmo_embedder(one_at_a_time._model)
    monkeypatch.setattr(elmo, "cache", LayerCache(64))  # empty: other tests may have predicted the sentence
    runs_before = elmo.sentences_run
    sizes = _passes(one_at_a_time, monkeypatch)
    separate = one_at_a_time.predict_json(item)
    assert sizes == [1, 1, 1, 1]
    # the biLM saw the sentence once; the three later passes took its layers from the cache
    assert elmo.sentences_run - runs_before == 1 and elmo.cache.hits == 3
    in_pairs = _predictor(archive, tokens_per_batch=2 * LENGTH + 1)
    sizes = _passes(in_pairs, monkeypatch)
    paired = in_pairs.predict_json(item)
    assert sizes == [2, 2]
    whole = _predictor(archive).predict_json(item)  # the default: one pass for an ordinary sentence
    assert len(whole["words"]) == LENGTH and [frame["index"] for frame in whole["verbs"]] == VERBS
    assert separate == whole and paired == whole


def test_predicate_instances_are_built_one_pass_at_a_time(archive, monkeypatch):
    """A predicate's instance holds its sentence's character ids (about 2 KB a token): built all
    at once, a long sentence's instances alone took memory growing with its square."""
    predictor = _predictor(archive)
    reader, model = predictor._dataset_reader, predictor._model
    built, seen_at_each_pass = [], []
    make = reader.text_to_instance
    monkeypatch.setattr(reader, "text_to_instance", lambda *args: built.append(args) or make(*args))
    run = model.forward_on_instances
    monkeypatch.setattr(
        model, "forward_on_instances", lambda instances: seen_at_each_pass.append(len(built)) or run(instances)
    )
    words = SENTENCE.split()
    outputs = list(predict_predicates(model, reader, [(words, verb) for verb in VERBS], tokens_per_batch=LENGTH))
    assert seen_at_each_pass == [1, 2, 3, 4]
    assert [output["predicate_index"] for output in outputs] == VERBS


def test_a_sentence_over_the_limit_is_refused_with_the_limit_and_what_to_do(archive):
    predictor = _predictor(archive, max_sentence_tokens=14)
    with pytest.raises(InputTooLong) as error:
        predictor.predict_json({"sentence": SENTENCE, "verbs": VERBS})
    message = str(error.value)
    assert message.startswith("input: 15 tokens in the sentence, more than the srl predictor's limit of 14")
    assert "split it into sentences" in message and """--predictor-args '{"max_sentence_tokens": 15}'""" in message
    assert _predictor(archive, max_sentence_tokens=15).predict_json({"sentence": SENTENCE, "verbs": VERBS})


def test_limits_must_be_positive_integers(archive):
    with pytest.raises(ConfigurationError, match="tokens_per_batch must be a positive integer, got -1"):
        _predictor(archive, tokens_per_batch=-1)


@pytest.mark.slow  # about three minutes: 375 predicates x 3,000 tokens of Viterbi decoding
def test_a_3000_token_sentence_with_375_predicates_predicts_in_bounded_memory(archive_file, tmp_path):
    """``allennlp predict`` in a fresh process, so its peak resident memory is its own.

    Measured with this tiny model: 1.1 GB (the same as a 15-token sentence); with the predicate
    instances built all at once 3.4 GB, and more with all predicates in one pass. The issue's
    ceiling is 4 GB; the test holds it to 2 GB. (The full-size model with the shipped biLM:
    README, "Input limits".)"""
    base = ["the", "old", "cat", "chased", "a", "small", "mouse", "and"]
    words = [base[i % len(base)] for i in range(2999)] + ["."]
    verbs = [i for i, word in enumerate(words) if word == "chased"]
    assert len(verbs) == 375
    inputs = tmp_path / "sentence.jsonl"
    inputs.write_text(json.dumps({"sentence": " ".join(words), "verbs": verbs}) + "\n")
    output = tmp_path / "roles.jsonl"
    arguments = [archive_file, str(inputs), "--output-file", str(output), "--silent"]
    result = subprocess.run(
        [sys.executable, "-c", PREDICT_REPORTING_PEAK_MEMORY, *arguments], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    peak_mb = json.loads(result.stderr.strip().splitlines()[-1])["peak_mb"]
    print(f"peak {peak_mb:.0f} MB")
    [prediction] = [json.loads(line) for line in output.read_text().splitlines()]
    assert [frame["index"] for frame in prediction["verbs"]] == verbs
    assert all(len(frame["tags"]) == 3000 for frame in prediction["verbs"])
    assert peak_mb < 2 * 1024
