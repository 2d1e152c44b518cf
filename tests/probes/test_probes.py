import json

import numpy as np
import pytest

from elmo_tasks.probes.conll2012_words import Conll2012FormatError, read_sentences
from elmo_tasks.probes.pos import LinearPosTagger, accuracy, train_pos_tagger
from elmo_tasks.probes.wsd import (
    FALLBACK_SENSE,
    f1,
    most_frequent_sense,
    nearest_sense,
    seen_in_training,
    sense_centroids,
    sense_key,
)
from tests.conftest import FIXTURES_ROOT, OPTIONS_FILE, WEIGHT_FILE, run_allennlp

SAMPLE = str(FIXTURES_ROOT / "probes" / "sample.v4_gold_conll")


def test_reader_takes_words_tags_lemmas_and_senses():
    sentences = list(read_sentences(SAMPLE))
    assert len(sentences) == 6
    first = sentences[0]
    assert first.words == ["The", "bank", "raised", "its", "rates", "."]
    assert first.pos_tags == ["DT", "NN", "VBD", "PRP$", "NNS", "."]
    assert first.lemmas == [None, "bank", "raise", None, "rate", None]
    assert first.senses == [None, "1", "1", None, "1", None]
    assert sentences[1].senses[5] == "2"


def test_reader_names_file_and_line_of_a_short_line(tmp_path):
    bad = tmp_path / "bad.v4_gold_conll"
    bad.write_text("#begin document (x); part 000\ndoc 0 0 The DT *\n")
    with pytest.raises(Conll2012FormatError, match=r"bad.v4_gold_conll, line 2: 6 columns"):
        list(read_sentences(str(bad)))


def test_wsd_nearest_centroid_by_hand():
    # two senses of ("bank", noun): centroids (1, 0) and (0, 1) after averaging
    features = np.array([[2.0, 0.0], [1.0, 0.2], [0.0, 3.0], [0.1, 1.0]])
    keys = [("bank", "noun")] * 4
    centroids = sense_centroids(features, keys, ["1", "1", "2", "2"])
    test = np.array([[5.0, 1.0], [0.2, 2.0], [1.0, 1.0]])
    test_keys = [("bank", "noun"), ("bank", "noun"), ("river", "noun")]
    assert nearest_sense(centroids, test, test_keys) == ["1", "2", FALLBACK_SENSE]
    assert f1(["1", "2", "1"], ["1", "2", "2"]) == pytest.approx(2 / 3)


def test_seen_in_training_marks_the_words_the_centroids_decide():
    train_keys = [("bank", "noun"), ("run", "verb")]
    test_keys = [("bank", "noun"), ("bank", "verb"), ("river", "noun"), ("run", "verb")]
    assert seen_in_training(train_keys, test_keys).tolist() == [True, False, False, True]


def test_most_frequent_sense_baseline_breaks_ties_and_falls_back():
    train_keys = [("run", "verb")] * 3 + [("bank", "noun")] * 2
    train_senses = ["2", "2", "1", "3", "1"]
    assert most_frequent_sense(train_keys, train_senses, [("run", "verb"), ("bank", "noun"), ("tree", "noun")]) == [
        "2",
        "1",
        "1",
    ]
    assert sense_key("Run", "VBZ") == ("run", "verb") and sense_key("banks", "NNS") == ("banks", "noun")


def test_pos_tagger_learns_a_separable_problem_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    centers = {"NN": np.array([3.0, 0.0, 0.0]), "VB": np.array([0.0, 3.0, 0.0]), "DT": np.array([0.0, 0.0, 3.0])}
    tags = [t for t in centers for _ in range(100)]
    features = np.stack([centers[t] + 0.3 * rng.standard_normal(3) for t in tags]).astype(np.float32)
    tagger = train_pos_tagger(features, tags, layer=1, epochs=20)
    assert accuracy(tagger.predict(features), tags) == 1.0
    path = str(tmp_path / "tagger.npz")
    tagger.save(path)
    loaded = LinearPosTagger.load(path)
    assert loaded.layer == 1 and loaded.tags == ["DT", "NN", "VB"]
    assert loaded.predict(features) == tagger.predict(features)


def test_bilm_probe_command_on_the_tiny_biLM(tmp_path, capsys):
    out = tmp_path / "probe.json"
    tagger = tmp_path / "pos.npz"
    run_allennlp(
        "bilm-probe",
        SAMPLE,
        SAMPLE,
        "--options-file",
        OPTIONS_FILE,
        "--weight-file",
        WEIGHT_FILE,
        "--output-json",
        str(out),
        "--save-pos-tagger",
        str(tagger),
        "--threads",
        "1",
    )
    printed = capsys.readouterr().out
    assert "| trained |" in printed and "| random weights (control) |" in printed
    results = json.loads(out.read_text())["results"]
    trained = results["trained"]
    assert set(trained["pos"]) == {"0", "1", "2"} and trained["counts"]["test_tokens"] == 36
    # trained and tested on the same six sentences: every sense word's key was seen, and a
    # linear tagger fits 36 tokens of 9 tags from 32-d ELMo layers
    assert trained["counts"]["test_sense_words"] == 14
    assert trained["counts"]["test_sense_words_seen"] == 14
    assert trained["wsd_seen"] == trained["wsd"] and trained["wsd_mfs_seen"] == trained["wsd_mfs"]
    assert max(trained["pos"].values()) > 90.0
    best = max(trained["pos"], key=trained["pos"].get)
    assert LinearPosTagger.load(str(tagger)).layer == int(best)
