"""The shared data-path suffixes: parsing, errors, the pinned crc32 rules, and the SNLI reader combining them."""

import json
import zlib

import pytest
from allennlp.common.checks import ConfigurationError

from elmo_tasks.tasks.coref.reader import Conll2012CorefReader
from elmo_tasks.tasks.data_selection import (
    DataPathError,
    DataSelection,
    in_holdout,
    in_sample,
    split_path,
)
from elmo_tasks.tasks.snli.reader import SnliJsonlReader
from elmo_tasks.tasks.squad.articles import load_articles
from elmo_tasks.tasks.srl.reader import read_srl_sentences
from tests.conftest import FIXTURES_ROOT

SNLI_DEV = FIXTURES_ROOT / "snli" / "dev.jsonl"

# crc32 of the UTF-8 bytes, worked out once; the residues below follow from these numbers.
SLEEPING = "A man is sleeping."  # 2062902152: % 10 == 2 (train), % 10000 == 2152
EMBRACING = "Two women are embracing while holding to go packages."  # 1068782080: % 10 == 0, % 10000 == 2080
CAFE = "café"  # 2561491637: % 10 == 7, % 3 == 2, % 10000 == 1637 (non-ASCII: hashed as UTF-8)
LETTER_A = "a"  # 3904355907: % 3 == 0, % 10 == 7, % 10000 == 5907
AT_HALF = "sentence 3813"  # 82035000: % 10 == 0, % 10000 == 5000 (exactly on the #sample=0.5 bound)


def test_pinned_crc32_values():
    assert [zlib.crc32(key.encode("utf-8")) for key in (SLEEPING, EMBRACING, CAFE, LETTER_A, AT_HALF)] == [
        2062902152,
        1068782080,
        2561491637,
        3904355907,
        82035000,
    ]


@pytest.mark.parametrize(
    "path, expected",
    [
        ("dev.jsonl.gz", ("dev.jsonl.gz", DataSelection())),
        ("a/dev.gz#train", ("a/dev.gz", DataSelection(split="train"))),
        ("a/dev.gz#holdout", ("a/dev.gz", DataSelection(split="holdout"))),
        ("train-set.gz#sample=0.01", ("train-set.gz", DataSelection(sample=0.01))),
        ("x#sample=1", ("x", DataSelection(sample=1.0))),
        ("x#sample=1e-3", ("x", DataSelection(sample=0.001))),
        ("dev.jsonl.gz#train#sample=0.1", ("dev.jsonl.gz", DataSelection("train", 0.1))),
        ("dev.jsonl.gz#sample=0.1#train", ("dev.jsonl.gz", DataSelection("train", 0.1))),
        ("dev.gz#holdout#sample=0.5", ("dev.gz", DataSelection("holdout", 0.5))),
    ],
)
def test_parses_each_suffix_and_both_in_either_order(path, expected):
    assert split_path(path) == expected


def test_suffix_writes_back_in_canonical_order():
    assert DataSelection().suffix == "" and DataSelection().everything
    assert split_path("x#sample=0.1#train")[1].suffix == "#train#sample=0.1"
    assert not DataSelection(split="holdout").everything


@pytest.mark.parametrize(
    "path, expected",
    [
        ("dev.gz#sample=2", "'#sample=2' is not a valid sample; #sample=P needs 0 < P <= 1, e.g. '#sample=0.01'"),
        ("dev.gz#sample=0", "#sample=P needs 0 < P <= 1"),
        ("dev.gz#sample=-0.5", "#sample=P needs 0 < P <= 1"),
        ("dev.gz#sample=nan", "#sample=P needs 0 < P <= 1"),
        ("dev.gz#sample=", "#sample=P needs 0 < P <= 1"),
        ("dev.gz#sample=ten%", "'#sample=ten%' is not a valid sample"),
        ("dev.gz#train#train", "'#train' after '#train'; a path takes at most one split suffix"),
        ("dev.gz#train#holdout", "'#holdout' after '#train'; a path takes at most one split suffix"),
        ("dev.gz#sample=0.1#sample=0.2", "'#sample=0.2' repeats '#sample'"),
        ("dev.gz#dev", "unknown suffix '#dev'"),
        ("dev.gz#train#", "unknown suffix '#'"),
        ("dev.gz#Train", "unknown suffix '#Train'"),
        ("#train", "has suffixes but no file before them"),
    ],
)
def test_errors_name_the_path_the_suffix_and_the_accepted_ones(path, expected):
    with pytest.raises(DataPathError) as error:
        split_path(path, "SNLI")
    message = str(error.value)
    assert message.startswith(f"SNLI data path {path!r}")
    assert expected in message
    assert "accepted suffixes: '#train', '#holdout', '#sample=P' (0 < P <= 1)" in message
    assert "'dev.jsonl.gz#train#sample=0.1'" in message


@pytest.mark.parametrize(
    "read, message",
    [
        (lambda: SnliJsonlReader().read("x#test"), "SNLI data path 'x#test': unknown suffix '#test'"),
        (lambda: Conll2012CorefReader().read("x#dev"), "CoNLL-2012 data path 'x#dev': unknown suffix '#dev'"),
        (lambda: read_srl_sentences("x#sample=2"), "SRL data path 'x#sample=2': '#sample=2' is not a valid sample"),
        (lambda: load_articles("x.json#fold=5/4"), "'x.json#fold=5/4': '5/4' is not a valid fold"),
    ],
    ids=["snli", "coref", "srl", "squad"],
)
def test_every_reader_reports_a_bad_suffix_as_a_config_error_naming_its_data(read, message):
    """One error for a data path's suffixes, whatever the reader: a ConfigurationError (still a ValueError)."""
    with pytest.raises(DataPathError, match=message) as error:
        list(read())
    assert isinstance(error.value, ConfigurationError) and isinstance(error.value, ValueError)


def test_holdout_and_sample_rules_by_hand():
    assert not in_holdout(SLEEPING, 10) and in_holdout(SLEEPING, 2)  # 2062902152 % 10 == 2
    assert in_holdout(EMBRACING, 10) and not in_holdout(EMBRACING, 3)  # % 10 == 0, % 3 == 1
    assert in_holdout(LETTER_A, 3) and not in_holdout(CAFE, 3)
    assert in_sample(SLEEPING, 0.25) and not in_sample(SLEEPING, 0.2)  # 2152 < 2500, 2152 >= 2000
    assert in_sample(EMBRACING, 0.21) and not in_sample(EMBRACING, 0.2)  # 2080 < 2100, 2080 >= 2000
    assert not in_sample(AT_HALF, 0.5) and in_sample(AT_HALF, 0.5001)  # 5000 < 5000 is false
    assert all(in_sample(key, 1.0) for key in (SLEEPING, EMBRACING, CAFE, LETTER_A, AT_HALF))


def test_keeps_combines_the_split_key_and_the_sample_key():
    train, holdout = DataSelection(split="train"), DataSelection(split="holdout")
    assert train.keeps(SLEEPING, "any", 10) and not holdout.keeps(SLEEPING, "any", 10)
    assert holdout.keeps(EMBRACING, "any", 10) and not train.keeps(EMBRACING, "any", 10)
    # the modulus matters only for a split: 'a' is on the holdout side with 3, on the train side with 10
    assert holdout.keeps(LETTER_A, "", 3) and train.keeps(LETTER_A, "", 10)
    assert DataSelection(sample=0.25).keeps("ignored", SLEEPING, 10)
    assert not DataSelection(sample=0.2).keeps("ignored", SLEEPING, 10)
    # both: train side by the split key (CAFE % 10 == 7), then the sample by the sample key
    both = DataSelection("train", 0.25)
    assert both.keeps(CAFE, SLEEPING, 10)  # train side, 2152 < 2500
    assert not both.keeps(CAFE, AT_HALF, 10)  # train side, 5000 >= 2500
    assert not both.keeps(EMBRACING, SLEEPING, 10)  # in the sample, but on the holdout side
    assert DataSelection().keeps(EMBRACING, AT_HALF, 10)
    everything = [SLEEPING, EMBRACING, CAFE, LETTER_A, AT_HALF]
    kept = [key for key in everything if DataSelection("holdout", 0.5).keeps(key, key, 10)]
    assert kept == [EMBRACING]  # AT_HALF is on the holdout side but exactly on the sample bound


def test_selection_rejects_impossible_values():
    with pytest.raises(DataPathError, match="unknown split 'dev'"):
        DataSelection(split="dev")
    with pytest.raises(DataPathError, match="not in \\(0, 1\\]"):
        DataSelection(sample=0.0)


def test_snli_reader_train_sample_is_the_train_pairs_whose_premise_is_sampled():
    reader = SnliJsonlReader()
    expected_train, expected_both = [], []
    for line in SNLI_DEV.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["gold_label"] == "-":
            continue
        crc = zlib.crc32(record["sentence1"].encode("utf-8"))
        if crc % 10 != 0:
            expected_train.append(record["pairID"])
            if crc % 10000 < 5000:
                expected_both.append(record["pairID"])

    def pair_ids(suffix):
        return [instance["metadata"]["pair_id"] for instance in reader.read(f"{SNLI_DEV}{suffix}")]

    train = pair_ids("#train")
    both = pair_ids("#train#sample=0.5")
    assert train == expected_train
    assert both == expected_both
    assert set(both) < set(train) and 0 < len(both) < len(train)
    assert pair_ids("#sample=0.5#train") == both
    assert set(both) <= set(pair_ids("#sample=0.5"))
    assert pair_ids("#sample=1#train") == train


def test_srl_and_coref_combined_suffix_is_the_intersection_of_split_and_sample():
    srl = str(FIXTURES_ROOT / "srl" / "conll2012_dev.gold_conll")

    def sentences(suffix):
        return [sentence.where for sentence in read_srl_sentences(srl + suffix, "conll2012")]

    train, sample = sentences("#train"), set(sentences("#sample=0.5"))
    both = sentences("#train#sample=0.5")
    assert both == sentences("#sample=0.5#train") == [w for w in train if w in sample]
    assert 0 < len(both) < len(train)  # 7 of the 10 train-side sentences
    coref = Conll2012CorefReader(holdout_modulus=3)

    def documents(suffix):
        return [i["metadata"]["name"] for i in coref.read(str(FIXTURES_ROOT / "coref" / "train.gold_conll") + suffix)]

    holdout, sample = documents("#holdout"), set(documents("#sample=0.5"))
    both = documents("#holdout#sample=0.5")
    assert both == [name for name in holdout if name in sample]
    assert 0 < len(both) < len(holdout)  # 1 of the 2 held-out documents
