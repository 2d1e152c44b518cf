"""``ner_reader``: AllenNLP's ``conll2003`` instances on good files, a DataFileError naming the line on bad ones."""

import re

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader

from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.ner.reader import check_conll2003_file
from tests.conftest import FIXTURES_ROOT

READER = {"tag_label": "ner", "convert_to_coding_scheme": "BIOUL"}


def _fields(instances):
    return [(list(map(str, i["tokens"].tokens)), i["tags"].labels) for i in instances]


def test_same_instances_as_allennlp_conll2003_on_the_fixture():
    path = str(FIXTURES_ROOT / "ner" / "train.txt")
    ours = DatasetReader.from_params(Params({"type": "ner_reader", **READER})).read(path)
    theirs = DatasetReader.from_params(Params({"type": "conll2003", **READER})).read(path)
    ours, theirs = _fields(ours), _fields(theirs)
    assert ours == theirs and len(ours) > 10
    assert any("U-PER" in tags or "B-PER" in tags for _, tags in ours)  # converted to BIOUL, as configured


@pytest.mark.parametrize(
    "bad_line, problem",
    [
        ("Berlin NNP I-NP", "3 columns, expected 4 (word, POS tag, chunk tag, NER tag)"),
        ("Berlin NNP I-NP I-LOC extra", "5 columns, expected 4"),
        ("Berlin NNP I-NP LOC", "the NER tag 'LOC' is not 'O', 'B-TYPE' or 'I-TYPE'"),
        ("Berlin NNP NP I-LOC", "the chunk tag 'NP' is not 'O', 'B-TYPE' or 'I-TYPE'"),
    ],
)
def test_a_bad_line_names_the_file_and_line(tmp_path, bad_line, problem):
    path = tmp_path / "eng.train"
    path.write_text(f"-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\n{bad_line}\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=f"^{re.escape(str(path))}, line 4: {re.escape(problem)}"):
        check_conll2003_file(str(path))
    reader = DatasetReader.from_params(Params({"type": "ner_reader", **READER}))
    with pytest.raises(DataFileError, match=f"^{re.escape(str(path))}, line 4: "):
        list(reader.read(str(path)))


def test_counts_the_token_lines(tmp_path):
    path = tmp_path / "eng.testa"
    path.write_text("-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n\nPeter NNP I-NP I-PER\n")
    assert check_conll2003_file(str(path)) == 3
