import pytest

from elmo_tasks.tasks.ner.lm_text import conll2003_sentences, write_lm_text

SAMPLE = """-DOCSTART- -X- -X- O

Marta NNP I-NP I-PER
visited VBD I-VP O
Elby NNP I-NP I-LOC
. . O O

It PRP I-NP O
rained VBD I-VP O

-DOCSTART- -X- -X- O

Harrow NNP I-NP I-ORG
Mills NNP I-NP I-ORG
"""


def test_every_sentence_is_written_once_without_document_starts(tmp_path):
    source = tmp_path / "train.txt"
    source.write_text(SAMPLE)
    counts = write_lm_text(source, tmp_path / "out" / "text.txt")
    assert (tmp_path / "out" / "text.txt").read_text().splitlines() == [
        "Marta visited Elby .",
        "It rained",
        "Harrow Mills",  # the last sentence has no blank line after it
    ]
    assert counts == {"sentences": 3, "words": 8}
    assert [line for line, _ in conll2003_sentences(source)] == [3, 8, 13]


def test_a_line_with_the_wrong_number_of_columns_names_its_file_and_line(tmp_path):
    source = tmp_path / "bad.txt"
    source.write_text(SAMPLE.replace("rained VBD I-VP O", "rained O"))
    with pytest.raises(ValueError, match=r"bad.txt, line 9: expected 4 columns .* found 2"):
        write_lm_text(source, tmp_path / "text.txt")
