"""SRL readers: instances per predicate, CoNLL-2005 files and folders, CoNLL-2012 documents."""

import gzip

import pytest

from elmo_tasks.tasks.srl.reader import (
    SrlConllReader,
    SrlFormatError,
    read_srl_sentences,
    split_path,
)
from tests.conftest import FIXTURES_ROOT, SHARED_DATA, needs_shared

SRL = FIXTURES_ROOT / "srl"


def test_conll2005_instances_one_per_predicate_with_bio_tags():
    instances = list(SrlConllReader().read(str(SRL / "conll2005_train.txt")))
    sentences = list(read_srl_sentences(str(SRL / "conll2005_train.txt")))
    assert len(sentences) == 16  # one of them ("What a quiet evening .") has no predicate
    assert len(instances) == sum(len(s.props.columns) for s in sentences) == 19
    farmer = [i for i in instances if i["metadata"]["words"][:2] == ["The", "farmer"]]
    assert [i["metadata"]["predicate_index"] for i in farmer] == [3, 6]
    assert farmer[0]["tags"].labels == ["B-A0", "I-A0", "B-R-A0", "B-V", "B-A1", "I-A1", "O", "O", "O"]
    assert farmer[0]["predicate_indicator"].labels == [0, 0, 0, 1, 0, 0, 0, 0, 0]
    assert farmer[0]["metadata"]["target"] == "plant"
    said = next(i for i in instances if i["metadata"]["target"] == "say")
    assert said["tags"].labels[6:10] == ["B-C-A1", "I-C-A1", "I-C-A1", "I-C-A1"]


def test_conll2012_reads_documents_and_splits_them(tmp_path):
    path = str(SRL / "conll2012_dev.gold_conll")
    sentences = list(read_srl_sentences(path, "conll2012"))
    assert {s.document for s in sentences} == {"nw/fixture/00/story_0", "nw/fixture/00/story_1"}
    first = sentences[0]
    assert first.props.targets == ["-", "-", "chase", "-", "-", "-"]
    train = list(read_srl_sentences(path + "#train", "conll2012"))
    holdout = list(read_srl_sentences(path + "#holdout", "conll2012"))
    assert len(train) + len(holdout) == len(sentences)
    # whole documents go to one side
    assert not {s.document for s in train} & {s.document for s in holdout}
    instances = list(SrlConllReader(data_format="conll2012").read(path))
    assert instances[0]["tags"].labels == ["B-ARG0", "I-ARG0", "B-V", "B-ARG1", "I-ARG1", "O"]


def test_sample_suffix_keeps_whole_sentences_deterministically():
    path = str(SRL / "conll2005_train.txt")
    half = [s.words for s in read_srl_sentences(path + "#sample=0.5")]
    assert 0 < len(half) < 16
    assert half == [s.words for s in read_srl_sentences(path + "#sample=0.5")]
    assert len(list(read_srl_sentences(path + "#sample=1.0"))) == 16
    with pytest.raises(ValueError, match="0 < P <= 1"):
        split_path(path + "#sample=2")
    with pytest.raises(ValueError, match="suffixes"):
        split_path(path + "#dev")


def test_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("The DT * * - - (A0*\ncat NN * * - go *)\n\nA DT * * - -\nB NN * * - - extra\n")
    with pytest.raises(SrlFormatError, match="bad.txt, line 5: 7 columns, but the sentence starting at line 4 has 6"):
        list(read_srl_sentences(str(bad)))
    targets = tmp_path / "targets.txt"
    targets.write_text("The DT * * - go (A0*)\ncat NN * * - go *\n\n")
    with pytest.raises(SrlFormatError, match="targets.txt, line 1: the sentence has 2 target verb.*but 1 argument"):
        list(read_srl_sentences(str(targets)))
    unclosed = tmp_path / "unclosed.txt"
    unclosed.write_text("The DT * * - - (A0*\nran VBD * * 01 run (V*)\n\n")
    with pytest.raises(SrlFormatError, match="unclosed.txt, line 1.*never closed"):
        list(SrlConllReader().read(str(unclosed)))
    gz = tmp_path / "x_gold_conll.gz"
    with gzip.open(gz, "wt") as handle:
        handle.write("#begin document (d); part 000\nd 0 0 Hi UH * - - - - * * -\n\n#end document\n")
    with pytest.raises(SrlFormatError, match="x_gold_conll.gz, line 2: SRL column 1 has 0 V phrases"):
        list(read_srl_sentences(str(gz), "conll2012"))


@needs_shared
def test_release_folder_equals_the_assembled_file():
    data = SHARED_DATA / "conll2005"
    folder = list(read_srl_sentences(str(data / "test.brown")))
    assert len(folder) == 426 and sum(len(s.props.columns) for s in folder) == 804
    whole = list(read_srl_sentences(str(data / "dev-set.gz")))
    sections = list(read_srl_sentences(str(data / "devel")))
    assert [(s.words, s.props.targets, s.props.columns) for s in whole] == [
        (s.words, s.props.targets, s.props.columns) for s in sections
    ]
