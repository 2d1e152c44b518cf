"""Every task predictor checks its input lines the same way (JsonLinesPredictor): from Python a
PredictorInputError, from ``allennlp predict`` one line per bad line naming the file and line, exit 2."""

import inspect
import io
import json
import sys
from pathlib import Path

import pytest
from allennlp.predictors import Predictor

import elmo_tasks.plugin  # noqa: F401
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError, predict_command_input
from tests.conftest import run_allennlp, untrained_archive

# predictor -> (experiment whose model it runs, a good input line)
TASKS = {
    "snli": ("snli_baseline", {"premise": "A man plays a guitar.", "hypothesis": "A man makes music."}),
    "ner_tagger": ("ner_baseline", {"sentence": "John lives in Berlin ."}),
    "sst5": ("sst5_baseline", {"sentence": "A fine film ."}),
    "srl": ("srl_baseline", {"sentence": "The cat chased the mouse .", "verbs": [2]}),
    "squad": ("squad_baseline", {"question": "Who won?", "passage": "The Panthers won the game."}),
    "coref": ("coref_baseline", {"document": "John said he would come. He did."}),
}
TASK_PREDICTORS = list(TASKS)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """An untrained archive per task, built on first use."""
    built = {}

    def archive(predictor: str) -> Path:
        if predictor not in built:
            experiment = TASKS[predictor][0]
            built[predictor] = untrained_archive(experiment, tmp_path_factory.mktemp(experiment))
        return built[predictor]

    return archive


def _predict(archive: Path, input_file: str, predictor: str, capsys, *extra: str):
    """``allennlp predict`` in this process: (exit code, stdout, stderr)."""
    code = 0
    try:
        run_allennlp("predict", str(archive), input_file, "--predictor", predictor, *extra)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", TASK_PREDICTORS)
def test_a_missing_key_names_the_keys_expected(name):
    cls = Predictor.by_name(name)
    assert issubclass(cls, JsonLinesPredictor) and cls.input_keys
    predictor = cls.__new__(cls)  # check_input needs no model
    with pytest.raises(PredictorInputError, match="no .* key") as error:
        predictor.check_input({"unrelated": 1})
    for key in cls.input_keys:
        assert f'no "{key}" key' in str(error.value)
    with pytest.raises(PredictorInputError, match="a JSON array, not an object"):
        predictor.check_input(["not", "an", "object"])
    first = next(iter(cls.input_keys))
    with pytest.raises(PredictorInputError, match=f'^input: "{first}" is empty'):
        predictor.check_input({**TASKS[name][1], first: ""})
    with pytest.raises(PredictorInputError, match=f'^input: "{first}" is a JSON number, not a string'):
        predictor.check_input({**TASKS[name][1], first: 7})


@pytest.mark.parametrize("name", TASK_PREDICTORS)
def test_predict_reports_every_bad_line_with_its_file_and_line_before_predicting(name, archives, tmp_path, capsys):
    good = TASKS[name][1]
    keys = list(Predictor.by_name(name).input_keys)
    first, last = keys[0], keys[-1]
    lines = [
        json.dumps(good).encode(),  # 1
        b"   ",  # 2: blank, skipped (and counted)
        json.dumps({**good, first: ""}).encode(),  # 3
        json.dumps({**good, last: " \t "}).encode(),  # 4
        json.dumps({**good, first: ["a", "list"]}).encode(),  # 5
        json.dumps({k: v for k, v in good.items() if k != last}).encode(),  # 6
        json.dumps([good]).encode(),  # 7
        b'{"' + first.encode() + b'": "unclosed',  # 8
        b'{"' + first.encode() + b'": "caf\xe9"}',  # 9: latin-1, not UTF-8
        json.dumps(good).encode(),  # 10
    ]
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    code, out, err = _predict(archives(name), str(source), name, capsys)
    expected = {
        3: f'"{first}" is empty',
        4: f'"{last}" is only whitespace',
        5: f'"{first}" is a JSON array, not a string',
        6: f'no "{last}" key',
        7: "a JSON array, not an object",
        8: "not valid JSON (Unterminated string",
        9: "bytes that are not UTF-8",
    }
    reported = [line for line in err.splitlines() if line.startswith("allennlp predict: ")]
    assert code == 2 and "Traceback" not in err, err[-3000:]
    assert len(reported) == len(expected), reported
    for line, (number, problem) in zip(reported, expected.items(), strict=True):
        assert line.startswith(f"allennlp predict: {source}, line {number}: {problem}"), line
        assert "expected" in line
    assert out == ""  # nothing was predicted


def test_more_than_ten_bad_lines_show_the_first_ten_and_the_count(archives, tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text('{"sentence": ""}\n' * 12, encoding="utf-8")
    code, _, err = _predict(archives("ner_tagger"), str(source), "ner_tagger", capsys)
    reported = [line for line in err.splitlines() if line.startswith("allennlp predict: ")]
    assert code == 2 and len(reported) == 11
    assert reported[9].startswith(f"allennlp predict: {source}, line 10: ")
    assert reported[10] == f"allennlp predict: {source}: 12 bad lines in all, the first 10 shown above"


def test_a_missing_input_file_is_one_line(archives, tmp_path, capsys):
    code, _, err = _predict(archives("ner_tagger"), str(tmp_path / "nope.jsonl"), "ner_tagger", capsys)
    assert code == 2 and "Traceback" not in err
    assert f"allennlp predict: {tmp_path / 'nope.jsonl'}: the input file does not exist" in err


def test_a_task_check_after_the_file_check_names_the_line(archives, tmp_path, capsys):
    """SRL's "verbs" are checked against the sentence's tokens as each line is read."""
    good = json.dumps(TASKS["srl"][1])
    source = tmp_path / "in.jsonl"
    source.write_text(f'{good}\n\n{{"sentence": "The cat sat .", "verbs": [9]}}\n{good}\n', encoding="utf-8")
    code, out, err = _predict(archives("srl"), str(source), "srl", capsys)
    assert code == 2 and "Traceback" not in err, err[-3000:]
    assert (
        f'allennlp predict: {source}, line 3: "verbs" must be a list of token indices between 0 and 3 for the 4 '
        "tokens ['The', 'cat', 'sat', '.']; got [9]" in err
    )
    assert out.count("prediction:") == 1  # the good first line was answered before line 3 was read


def test_bad_bytes_on_stdin_are_reported_too(archives, monkeypatch, capsys):
    good = json.dumps(TASKS["ner_tagger"][1]).encode()
    data = good + b"\n\n" + b'{"sentence": "caf\xe9"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code, out, err = _predict(archives("ner_tagger"), "-", "ner_tagger", capsys)
    assert code == 2 and "Traceback" not in err, err[-3000:]
    assert "allennlp predict: input record 2 (blank lines not counted): bytes that are not UTF-8" in err
    assert out.count("prediction:") == 1


def test_good_lines_are_predicted(archives, tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(TASKS["sst5"][1]) + "\n", encoding="utf-8")
    code, out, _ = _predict(archives("sst5"), str(source), "sst5", capsys)
    assert code == 0 and out.count("prediction:") == 1


# ---- what the input checks rely on in AllenNLP (elmo_tasks/tasks/predictor_input.py) -------------


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["allennlp", "predict", "model.tar.gz", "in.jsonl"], "in.jsonl"),
        (["elmo-tasks", "predict", "--output-file", "out.jsonl", "model.tar.gz", "in.jsonl.gz"], "in.jsonl.gz"),
        (["/x/__main__.py", "predict", "m.tar.gz", "-", "--batch-size", "4", "--predictor", "srl"], "-"),
        (["allennlp", "predict", "m.tar.gz", "in.jsonl", "--include-package", "my_pkg", "--silent"], "in.jsonl"),
        (["allennlp", "predict", "m.tar.gz", "in.jsonl", "--use-dataset-reader"], None),  # load_line is not used
        (["allennlp", "evaluate", "m.tar.gz", "in.jsonl"], None),
        (["allennlp", "predict", "m.tar.gz"], None),  # not a command AllenNLP runs
        (["allennlp", "predict", "m.tar.gz", "in.jsonl", "--no-such-option"], None),
        (["pytest", "-q", "predict"], None),
        (["allennlp"], None),
    ],
)
def test_the_input_file_is_read_from_the_command_line_as_allennlp_reads_it(argv, expected, capsys):
    assert predict_command_input(argv) == expected
    assert capsys.readouterr() == ("", "")  # a command line it does not understand prints nothing


def test_allennlp_hands_load_line_every_line_but_blank_ones_in_file_order():
    """load_line's line numbers count the lines it gets and skip blank ones: AllenNLP 2.10.1's
    ``_PredictManager`` does this, no interface promises it. Another version must be checked
    (and this test updated) before the line numbers can be trusted."""
    import allennlp.version
    from allennlp.commands.predict import _PredictManager

    assert allennlp.version.VERSION == "2.10.1"
    source = inspect.getsource(_PredictManager._get_json_data)
    assert source.count("if not line.isspace():") == 2  # stdin and the file
    assert source.count("yield self._predictor.load_line(line)") == 2
    assert "for line in file_input:" in source and "for line in sys.stdin:" in source
