"""Our commands given the wrong archive or a path they cannot write end with one line, no traceback."""

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_ROOT, run_allennlp, untrained_archive

SQUAD_DEV = str(FIXTURES_ROOT / "squad" / "dev.json")
COREF_TRAIN = str(FIXTURES_ROOT / "coref" / "train.gold_conll")
BILM_OPTIONS = str(FIXTURES_ROOT / "bilm_tf" / "options.json")


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """Untrained archives of a few tasks, built on first use."""
    built = {}

    def archive(experiment: str) -> str:
        if experiment not in built:
            built[experiment] = str(untrained_archive(experiment, tmp_path_factory.mktemp(experiment)))
        return built[experiment]

    return archive


def _fails(capsys, *args: str) -> str:
    """Runs the command in this process; it must exit 2 with one error line and no traceback. Returns the line."""
    with pytest.raises(SystemExit) as exit_:
        run_allennlp(*args)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert exit_.value.code == 2 and "Traceback" not in err and len(errors) == 1, err[-3000:]
    return errors[0]


@pytest.mark.parametrize(
    "command, experiment, needs, extra",
    [
        ("squad-predict", "ner_baseline", "a SQuAD model archive", [SQUAD_DEV, "out.json"]),
        ("coref-conll", "srl_baseline", "a coreference model archive", [COREF_TRAIN, "out.conll"]),
        ("srl-props", "coref_baseline", "an SRL model archive", [COREF_TRAIN, "out.props"]),
        ("ner-conll", "srl_baseline", "a NER model archive", [COREF_TRAIN, "out.conll"]),
    ],
)
def test_an_archive_of_another_task_names_its_task_and_the_command_to_use(
    command, experiment, needs, extra, archives, tmp_path, capsys
):
    archive = archives(experiment)
    *inputs, output = extra
    line = _fails(capsys, command, archive, *inputs, str(tmp_path / output))
    holds = {
        "ner_baseline": "holds `ner_model`, a NER model: use `allennlp evaluate` or `allennlp predict "
        f"{archive} INPUT --predictor ner`",
        "srl_baseline": "holds `srl_model`, an SRL model: use `allennlp srl-props`",
        "coref_baseline": "holds `coref_model`, a coreference model: use `allennlp coref-conll`",
    }[experiment]
    assert line.startswith(f"{command}: error: {archive} {holds}"), line
    assert line.endswith(f"`allennlp {command}` needs {needs}"), line
    assert not (tmp_path / output).exists()


@pytest.mark.parametrize("command", ["squad-predict", "coref-conll", "srl-props", "ner-conll", "export-bilm"])
def test_a_path_that_is_not_an_archive_is_named(command, tmp_path, capsys):
    rest = {"export-bilm": [str(tmp_path / "out")]}.get(command, [COREF_TRAIN, str(tmp_path / "out")])
    line = _fails(capsys, command, str(tmp_path / "missing.tar.gz"), *rest)
    assert line == (
        f"{command}: error: {tmp_path / 'missing.tar.gz'} does not exist; expected a model.tar.gz written by "
        "`allennlp train` (or its serialization folder)"
    )
    line = _fails(capsys, command, SQUAD_DEV, *rest)
    assert line.startswith(f"{command}: error: {SQUAD_DEV} is not a model archive (a file without a readable")


def test_squad_predict_refuses_a_folder_as_its_output_before_predicting(archives, tmp_path, capsys):
    line = _fails(capsys, "squad-predict", archives("squad_baseline"), SQUAD_DEV, str(tmp_path))
    assert line == f"squad-predict: error: {tmp_path} is a folder; expected the path of a file to write"


def test_export_bilm_to_a_file_path_or_below_a_file_is_one_line(archives, tmp_path, capsys):
    archive = archives("snli_elmo")
    taken = tmp_path / "taken.txt"
    taken.write_text("keep me\n", encoding="utf-8")
    line = _fails(capsys, "export-bilm", archive, str(taken))
    assert line == (
        f"export-bilm: error: {taken} is a file; expected a folder to write options.json and weights.hdf5 into "
        "(it is created if it does not exist)"
    )
    line = _fails(capsys, "export-bilm", archive, str(taken / "elmo"))
    assert line == f"export-bilm: error: cannot write {taken / 'elmo'}: {taken} is a file, not a folder"
    assert taken.read_text(encoding="utf-8") == "keep me\n"


def test_export_bilm_names_a_missing_checkpoint_and_a_model_without_a_bilm(archives, tmp_path, capsys):
    line = _fails(
        capsys, "export-bilm", archives("snli_elmo"), str(tmp_path / "out"), "--weights-file", str(tmp_path / "e9.th")
    )
    assert line.startswith(f"export-bilm: error: --weights-file {tmp_path / 'e9.th'} is not a file; expected")
    baseline = archives("snli_baseline")
    line = _fails(capsys, "export-bilm", baseline, str(tmp_path / "out"))
    assert line.startswith(f"export-bilm: error: {baseline}: this model contains no biLM to export;")


def test_export_bilm_writes_the_folder_it_is_given(archives, tmp_path, capsys):
    run_allennlp("export-bilm", archives("snli_elmo"), str(tmp_path / "a" / "elmo"))
    assert sorted(p.name for p in (tmp_path / "a" / "elmo").iterdir()) == ["options.json", "weights.hdf5"]
    options = json.loads((tmp_path / "a" / "elmo" / "options.json").read_text())
    assert options == json.loads(Path(BILM_OPTIONS).read_text())
    assert capsys.readouterr().out.strip() == f"wrote options.json, weights.hdf5 to {tmp_path / 'a' / 'elmo'}"


@pytest.mark.parametrize(
    "args, expected",
    [
        (["MISSING", COREF_TRAIN], "bilm-probe: error: MISSING does not exist"),
        ([COREF_TRAIN, COREF_TRAIN, "--options-file", "MISSING"], "bilm-probe: error: MISSING does not exist"),
        ([COREF_TRAIN, COREF_TRAIN, "--output-json", "TMP"], "bilm-probe: error: TMP is a folder;"),
    ],
)
def test_bilm_probe_names_a_missing_or_unwritable_path(args, expected, tmp_path, capsys):
    missing = str(tmp_path / "missing")
    args = [a.replace("MISSING", missing).replace("TMP", str(tmp_path)) for a in args]
    line = _fails(capsys, "bilm-probe", *args)
    assert line.startswith(expected.replace("MISSING", missing).replace("TMP", str(tmp_path))), line


def test_squad_predict_names_a_missing_or_malformed_dataset(archives, tmp_path, capsys):
    archive = archives("squad_baseline")
    line = _fails(capsys, "squad-predict", archive, str(tmp_path / "dev.json"), str(tmp_path / "out.json"))
    assert line == (
        f"squad-predict: error: {tmp_path / 'dev.json'}: no such file, with or without .gz; "
        "docs/DATA.md says where to get it"
    )
    (tmp_path / "dev.json").write_text("not json\n", encoding="utf-8")
    line = _fails(capsys, "squad-predict", archive, str(tmp_path / "dev.json"), str(tmp_path / "out.json"))
    assert line == (
        f"squad-predict: error: {tmp_path / 'dev.json'}, line 1: not valid JSON (Expecting value, column 1); "
        'expected a SQuAD v1.1 file {"version", "data": [articles]}'
    )
