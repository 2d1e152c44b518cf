"""Both NER configs through the CLI: train on fixtures -> archive -> evaluate -> predict.

The commands run in-process (``allennlp.commands.main`` with ``sys.argv`` patched, from the repo
root) to save the interpreter start-up and imports of six subprocesses.
"""

import io
import json
import os
import subprocess
from contextlib import redirect_stdout
from pathlib import Path
from typing import List

import pytest
from allennlp.data.dataset_readers.dataset_utils.span_utils import iob1_tags_to_spans

from tests.conftest import FIXTURES_ROOT, run_allennlp
from tests.tasks.command_runs import evaluate_span_f1, train_span_tagger

TEST = str(FIXTURES_ROOT / "ner" / "test.txt")
SHIPPED = "elmo_tasks:pretrained/ner"
SENTENCES = ["Marta Velkin visited Port Elby on Monday.", "Shares of Pellon Group fell."]


@pytest.fixture(scope="module", params=["ner_baseline", "ner_elmo"])
def archive(request, tmp_path_factory) -> Path:
    archive, config = train_span_tagger(tmp_path_factory, request.param, json.dumps({"trainer": {"num_epochs": 1}}))
    assert ("regularizer" in config["model"]) == (request.param == "ner_elmo")
    return archive


def test_evaluate_reports_span_f1(archive, tmp_path):
    metrics = evaluate_span_f1(archive, TEST, tmp_path / "eval.json")
    # conlleval's span F1, recomputed from the predicted IOB1 tags and the file's gold tags.
    predictions = tmp_path / "predictions.jsonl"
    run_allennlp("predict", str(archive), TEST, "--use-dataset-reader", "--output-file", str(predictions), "--silent")
    lines = predictions.read_text().splitlines()
    predicted = [set(iob1_tags_to_spans(json.loads(line)["iob1_tags"])) for line in lines]
    gold = [set(iob1_tags_to_spans(tags)) for tags in _gold_iob1(TEST)]
    assert len(predicted) == len(gold) == 10
    correct = sum(len(p & g) for p, g in zip(predicted, gold, strict=True))
    n_predicted, n_gold = sum(map(len, predicted)), sum(map(len, gold))
    f1 = 2 * correct / (n_predicted + n_gold) if n_predicted + n_gold else 0.0
    assert metrics["f1-measure-overall"] == pytest.approx(f1, abs=1e-6)


def _gold_iob1(path: str):
    """The NER column of each sentence of a CoNLL-2003 file, as written (IOB1)."""
    sentences: List[List[str]] = []
    current: List[str] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("-DOCSTART-"):
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(line.split()[3])
    return sentences + ([current] if current else [])


def test_predict_tags_raw_sentences(archive, tmp_path):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"sentence": s}) + "\n" for s in SENTENCES))
    output = tmp_path / "out.jsonl"
    run_allennlp("predict", str(archive), str(inputs), "--output-file", str(output), "--silent")
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["sentence"] for r in results] == SENTENCES
    assert results[0]["words"] == ["Marta", "Velkin", "visited", "Port", "Elby", "on", "Monday", "."]
    for result in results:
        assert len(result["tags"]) == len(result["iob1_tags"]) == len(result["words"])
        for entity in result["entities"]:
            assert result["sentence"][entity["char_start"] : entity["char_end"]] == entity["text"]


def test_predict_on_a_conll_file_with_the_dataset_reader(archive, tmp_path):
    output = tmp_path / "out.jsonl"
    run_allennlp("predict", str(archive), TEST, "--use-dataset-reader", "--output-file", str(output), "--silent")
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(results) == 10
    assert results[0]["words"][:2] == ["Karl", "Ostrom"]
    assert all(len(r["iob1_tags"]) == len(r["words"]) for r in results)


def _printed(*args: str) -> List[str]:
    captured = io.StringIO()
    with redirect_stdout(captured):
        run_allennlp(*args)
    return captured.getvalue().strip().splitlines()


def test_ner_conll_writes_conlleval_input_and_evaluates_alike(tmp_path):
    """The shipped model on the fixture (it finds some entities and misses some): ner-conll's file is
    the input plus a column of the tags `predict` gives, and its numbers are `evaluate`'s."""
    output = tmp_path / "test.conlleval"
    report = _printed("ner-conll", SHIPPED, TEST, str(output))
    metrics = evaluate_span_f1(SHIPPED, TEST, tmp_path / "eval.json")
    assert 0.3 < metrics["f1-measure-overall"] < 1.0  # not a trivial case
    assert report[-1] == "precision {:.4f} recall {:.4f} f1 {:.4f}".format(
        *(metrics[f"{kind}-overall"] for kind in ("precision", "recall", "f1-measure"))
    )
    assert report[0] == "overall: precision: {:6.2f}%; recall: {:6.2f}%; FB1: {:6.2f}".format(
        *(100 * metrics[f"{kind}-overall"] for kind in ("precision", "recall", "f1-measure"))
    )
    predictions = tmp_path / "predictions.jsonl"
    run_allennlp("predict", SHIPPED, TEST, "--use-dataset-reader", "--output-file", str(predictions), "--silent")
    predicted = iter(tag for line in predictions.read_text().splitlines() for tag in json.loads(line)["iob1_tags"])
    written = output.read_text(encoding="utf-8").splitlines()
    original = Path(TEST).read_text(encoding="utf-8").splitlines()
    assert len(written) == len(original)
    for line, source in zip(written, original, strict=True):
        columns = source.split()
        if not columns:
            assert line == ""
        elif columns[0] == "-DOCSTART-":
            assert line.split() == [*columns, "O"]
        else:
            assert line == " ".join([*columns, next(predicted)])
    assert next(predicted, None) is None
    if os.environ.get("CONLLEVAL_PL"):  # the official script on the same file prints the same numbers
        with output.open() as lines:
            official = subprocess.run(
                ["perl", os.environ["CONLLEVAL_PL"]], stdin=lines, capture_output=True, text=True, check=True
            ).stdout.splitlines()
        assert official[1].endswith(report[0].removeprefix("overall: "))
        assert len(official) == len(report) and all(
            theirs.startswith(ours) for theirs, ours in zip(official[2:], report[1:-1], strict=True)
        )


@pytest.mark.parametrize(
    "text, message",
    [
        ("-DOCSTART- -X- -X- O\n\nKarl NNP I-NP I-PER\nOstrom NNP I-PER\n", "line 4: 3 columns, expected 4"),
        ("-DOCSTART- -X- -X- O\n\n", "holds no sentence; expected CoNLL-2003 lines (word, POS tag, chunk tag"),
        (
            "Karl NNP I-NP I-PER\nvisited VBD I-VP O\nOslo NNP I-NP I-GPE\n",
            "line 3: the NER tag 'I-GPE' is of a type this model was not trained on (its types: LOC, MISC, ORG, PER)",
        ),
    ],
)
def test_ner_conll_refuses_a_bad_file_in_one_line(text, message, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit):
        run_allennlp("ner-conll", SHIPPED, str(bad), str(tmp_path / "out.txt"))
    err = capsys.readouterr().err
    assert f"ner-conll: error: {bad}" in err and message in err and "Traceback" not in err, err[-2000:]
    assert not (tmp_path / "out.txt").exists()


def test_ner_conll_lines_keep_every_line_with_one_more_column():
    from elmo_tasks.commands.ner_conll import conll2003_sentences, conlleval_lines

    lines = ["-DOCSTART-\n", "\n", "Ann NNP I-NP I-PER\n", "runs VBZ I-VP O\n", "\n", "\n", "Bo  NNP\tI-NP I-PER\n"]
    sentences = conll2003_sentences(lines)
    assert [numbers for numbers, _ in sentences] == [[2, 3], [6]]
    assert conlleval_lines(lines, sentences, [["I-PER", "O"], ["I-ORG"]]) == [
        "-DOCSTART- -X- -X- O O\n",
        "\n",
        "Ann NNP I-NP I-PER I-PER\n",
        "runs VBZ I-VP O O\n",
        "\n",
        "\n",
        "Bo NNP I-NP I-PER I-ORG\n",
    ]
