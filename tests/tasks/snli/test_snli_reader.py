"""The SNLI reader: labels, skipped '-' pairs, gzip, split suffixes and malformed lines."""

import gzip
import json
import logging
from pathlib import Path

import pytest
from allennlp.common.checks import ConfigurationError

from elmo_tasks.tasks.data_selection import DataSelection
from elmo_tasks.tasks.snli.reader import SnliFormatError, SnliJsonlReader, in_holdout, split_path
from elmo_tasks.tokenization import SpacyBlankTokenizer
from tests.conftest import FIXTURES_ROOT, SHARED_DATA, needs_shared

TRAIN = FIXTURES_ROOT / "snli" / "train.jsonl"
DEV = FIXTURES_ROOT / "snli" / "dev.jsonl"
TEST_GZ = FIXTURES_ROOT / "snli" / "test.jsonl.gz"


def _line(premise: str = "A dog runs.", hypothesis: str = "An animal moves.", label: str = "entailment") -> str:
    return json.dumps({"sentence1": premise, "sentence2": hypothesis, "gold_label": label, "pairID": "p"})


def _write(path: Path, lines, compress: bool = False) -> str:
    opener = gzip.open if compress else open
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return str(path)


def test_tokenizer_splits_clitics_and_punctuation_without_a_model():
    tokens = SpacyBlankTokenizer().tokenize("  The dog isn't  on the U.S. road, ok? ")
    assert [t.text for t in tokens] == ["The", "dog", "is", "n't", "on", "the", "U.S.", "road", ",", "ok", "?"]
    assert tokens[1].idx == 6 and tokens[1].idx_end == 9


def test_reads_fields_and_skips_no_consensus_pairs(tmp_path, caplog):
    lines = [_line(), _line(label="-"), "", _line("A cat sleeps.", "A cat is awake.", "contradiction")]
    path = _write(tmp_path / "s.jsonl", lines)
    with caplog.at_level(logging.INFO, logger="elmo_tasks.tasks.snli.reader"):
        instances = list(SnliJsonlReader().read(path))
    assert [i["label"].label for i in instances] == ["entailment", "contradiction"]
    assert [t.text for t in instances[1]["premise"].tokens] == ["A", "cat", "sleeps", "."]
    assert [t.text for t in instances[1]["hypothesis"].tokens] == ["A", "cat", "is", "awake", "."]
    assert "read 2 pairs, skipped 1 with gold label '-'" in caplog.text


def test_fixture_counts_and_gzip_equals_plain(tmp_path):
    reader = SnliJsonlReader()
    assert len(list(reader.read(str(TRAIN)))) == 2990  # 3,024 pairs, 34 with '-' (fixtures/snli/NOTICE.md)
    plain = list(reader.read(str(DEV)))
    gz = _write(tmp_path / "dev.jsonl.gz", DEV.read_text(encoding="utf-8").splitlines(), compress=True)
    zipped = list(reader.read(gz))
    assert len(plain) == len(zipped) == 490  # 500 pairs, 10 with '-'
    train_premises = {i["metadata"]["premise_tokens"].__repr__() for i in reader.read(str(TRAIN))}
    assert not train_premises & {i["metadata"]["premise_tokens"].__repr__() for i in plain}
    assert [str(i) for i in plain] == [str(i) for i in zipped]
    assert len(list(reader.read(str(TEST_GZ)))) == 99


@pytest.mark.parametrize(
    "bad, expected",
    [
        ('{"sentence1": "A dog.", "sentence2": "x"', "not valid JSON"),
        ('["a", "b"]', "expected a JSON object"),
        (json.dumps({"sentence1": "A dog.", "gold_label": "neutral"}), "missing field(s) sentence2"),
        (_line(label="maybe"), "unknown gold_label 'maybe'"),
        (_line(hypothesis="   "), "hypothesis '   ' has no tokens"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, bad, expected):
    path = _write(tmp_path / "bad.jsonl", [_line(), _line(label="-"), bad])
    with pytest.raises(SnliFormatError) as error:
        list(SnliJsonlReader().read(path))
    assert f"{path}, line 3" in str(error.value)
    assert expected in str(error.value)


def test_split_suffix_partitions_by_premise():
    reader = SnliJsonlReader(holdout_modulus=3)
    everything = list(reader.read(str(DEV)))
    train = list(reader.read(f"{DEV}#train"))
    holdout = list(reader.read(f"{DEV}#holdout"))
    assert len(train) + len(holdout) == len(everything) and holdout and train
    premises = lambda instances: {" ".join(t.text for t in i["premise"].tokens) for i in instances}  # noqa: E731
    assert not premises(train) & premises(holdout)
    assert split_path("a/b.jsonl.gz#holdout") == ("a/b.jsonl.gz", DataSelection(split="holdout"))
    with pytest.raises(ConfigurationError, match="unknown suffix '#test'; accepted suffixes: '#train', '#holdout'"):
        list(reader.read(f"{DEV}#test"))


def test_holdout_rule_is_pinned():
    # crc32 values worked out once (1068782080 % 10 == 0, 2062902152 % 10 == 2): the split of
    # the real data must never drift between runs, machines or Python versions.
    assert in_holdout("Two women are embracing while holding to go packages.", 10)
    assert not in_holdout("A man is sleeping.", 10)
    assert in_holdout("A man is sleeping.", 2)


@needs_shared
@pytest.mark.needs_shared
def test_real_dev_split_sizes():
    dev = SHARED_DATA / "snli" / "snli_1.0_dev.jsonl.gz"
    reader = SnliJsonlReader()
    holdout = sum(1 for _ in reader.read(f"{dev}#holdout"))
    assert holdout == 908  # 918 pairs whose premise hashes to 0 mod 10, 10 of them labelled '-'


def test_lm_text_has_each_premise_once_and_every_hypothesis_of_the_selected_pairs(tmp_path):
    from elmo_tasks.tasks.snli.lm_text import write_lm_text

    lines = [
        _line("A dog runs.", "An animal moves."),
        _line("A dog runs.", "A cat  sleeps.", "contradiction"),
        _line("A dog runs.", "Nobody agreed.", "-"),  # no gold label: the reader skips it, so does the text
        _line("Two women talk.", "People speak.", "entailment"),
    ]
    path = _write(tmp_path / "s.jsonl", lines)
    counts = write_lm_text(path, tmp_path / "out" / "text.txt")
    assert (tmp_path / "out" / "text.txt").read_text().splitlines() == [
        "A dog runs.",
        "An animal moves.",
        "A cat sleeps.",
        "Two women talk.",
        "People speak.",
    ]
    assert counts == {"pairs": 3, "sentences": 5, "distinct_premises": 2}
    # A split suffix selects the same pairs as the reader, so the held-out premises stay out of the text.
    reader = SnliJsonlReader(holdout_modulus=3)
    train_premises = {" ".join(i["metadata"]["premise_tokens"]) for i in reader.read(f"{DEV}#train")}
    write_lm_text(f"{DEV}#holdout", tmp_path / "holdout.txt", holdout_modulus=3)
    holdout_text = (tmp_path / "holdout.txt").read_text().splitlines()
    assert holdout_text
    written = {" ".join(t.text for t in SpacyBlankTokenizer().tokenize(s)) for s in holdout_text}
    assert not written & train_premises
