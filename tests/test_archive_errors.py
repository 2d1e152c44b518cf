"""A model archive that is truncated, damaged, or not a model archive ends a command with one line naming it.

Archives are crafted from one untrained SNLI archive (seconds to build): cut short, bytes flipped, a
member dropped or broken, a plain tar, an exported biLM, a folder. Each goes through
:func:`elmo_tasks.archive_errors.archive_problem`, through ``allennlp predict`` / ``allennlp evaluate``
in this process (the uncaught error handed to ``sys.excepthook`` as Python would, with
:mod:`elmo_tasks.input_errors` installed), and through our commands (exit status 2, one line).
"""

import gzip
import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Callable, Dict, Optional

import pytest
from allennlp.models.archival import load_archive

from elmo_tasks.archive_errors import ArchiveFileError, archive_problem, load_model_archive
from tests.commands.test_command_paths import _fails
from tests.conftest import FIXTURES_ROOT, OPTIONS_FILE, WEIGHT_FILE, run_allennlp, untrained_archive
from tests.uncaught_errors import uncaught_error_line

EXPECTED = "expected a model.tar.gz written by `allennlp train` (or its serialization folder)"
REMEDY = "copy or download it again, or re-create it (`allennlp train`, or archive_model on its serialization folder)"
SNLI_DEV = str(FIXTURES_ROOT / "snli" / "dev.jsonl")


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> Path:
    """An untrained SNLI baseline archive, as `allennlp train` writes one."""
    return untrained_archive("snli_baseline", tmp_path_factory.mktemp("snli"))


@pytest.fixture(scope="module")
def language_model(tmp_path_factory) -> Path:
    """An untrained biLM language model archive (no predictor)."""
    return untrained_archive("bilm_tiny", tmp_path_factory.mktemp("lm"))


def _members(archive: Path) -> Dict[str, Optional[bytes]]:
    """Member name -> contents (None for a folder), in archive order."""
    members: Dict[str, Optional[bytes]] = {}
    with tarfile.open(archive) as opened:
        for member in opened.getmembers():
            extracted = opened.extractfile(member) if member.isfile() else None
            members[member.name] = extracted.read() if extracted is not None else None
    return members


def _tar(path: Path, members: Dict[str, Optional[bytes]], compressed: bool = True) -> Path:
    with tarfile.open(path, "w:gz" if compressed else "w") as archive:
        for name, contents in members.items():
            info = tarfile.TarInfo(name)
            if contents is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(contents)
                archive.addfile(info, io.BytesIO(contents))
    return path


def _changed(sound: Path, path: Path, change: Callable[[Dict[str, Optional[bytes]]], None]) -> Path:
    members = _members(sound)
    change(members)
    return _tar(path, members)


def _vocabulary_lines(members: Dict[str, Optional[bytes]]) -> list:
    contents = members["vocabulary/tokens.txt"]
    assert contents is not None
    return contents.decode("utf-8").splitlines(keepends=True)


# --- what archive_problem says ---------------------------------------------------------------------


@pytest.mark.parametrize("kept", [0.0005, 0.3, 0.6, 0.9999])
def test_an_archive_cut_short_is_named_as_truncated_with_the_member_it_ends_in(sound, tmp_path, kept):
    whole = sound.read_bytes()
    cut = tmp_path / "model.tar.gz"
    cut.write_bytes(whole[: max(11, int(len(whole) * kept))])
    problem = archive_problem(cut)
    assert problem is not None and problem.startswith(f"{cut} is truncated: its data ends inside "), problem
    assert problem.endswith(f"(an incomplete copy or download); {EXPECTED}: {REMEDY}")


@pytest.mark.parametrize("where", [0.25, 0.5, 0.75])
def test_an_archive_with_flipped_bytes_fails_the_gzip_checksum(sound, tmp_path, where):
    damaged = bytearray(sound.read_bytes())
    start = int(len(damaged) * where)
    damaged[start : start + 4] = bytes(byte ^ 0xFF for byte in damaged[start : start + 4])
    path = tmp_path / "model.tar.gz"
    path.write_bytes(bytes(damaged))
    problem = archive_problem(path)
    assert problem is not None and problem.startswith(f"{path} is corrupt ("), problem
    assert problem.endswith(f"; {EXPECTED}: {REMEDY}")


def test_files_of_other_kinds_say_what_they_seem_to_be(sound, tmp_path):
    plain = tmp_path / "plain.tar.gz"
    plain.write_bytes(gzip.decompress(sound.read_bytes()))
    assert archive_problem(plain) == (
        f"{plain} is an uncompressed tar, where AllenNLP reads a gzip-compressed one (compress it: gzip -c FILE > "
        f"model.tar.gz); {EXPECTED}"
    )
    hdf5 = tmp_path / "weights.tar.gz"
    shutil.copy(WEIGHT_FILE, hdf5)
    assert archive_problem(hdf5) == (
        f"{hdf5} is an hdf5 file (a biLM's weights.hdf5? those go to --weight-file or ELMO_WEIGHTS), not a model "
        f"archive; {EXPECTED}"
    )
    empty = tmp_path / "empty.tar.gz"
    empty.write_bytes(b"")
    assert archive_problem(empty) == f"{empty} is empty; {EXPECTED}"
    text = tmp_path / "notes.tar.gz"
    text.write_text("notes\n" * 200)
    assert archive_problem(text) == f"{text} is neither a gzip-compressed nor a plain tar; {EXPECTED}"
    assert archive_problem(tmp_path / "none.tar.gz") == f"{tmp_path / 'none.tar.gz'} does not exist; {EXPECTED}"


def test_tars_without_config_json_say_what_they_hold(tmp_path):
    other = _tar(tmp_path / "other.tar.gz", {"README.md": b"hello", "data.txt": b"1 2 3"})
    assert archive_problem(other) == (
        f"{other} holds no config.json (it holds README.md, data.txt), so it is not a model archive; {EXPECTED}"
    )
    bilm = _tar(
        tmp_path / "elmo.tar.gz",
        {"options.json": Path(OPTIONS_FILE).read_bytes(), "weights.hdf5": Path(WEIGHT_FILE).read_bytes()},
    )
    assert archive_problem(bilm) == (
        f"{bilm} holds an exported biLM (options.json, weights.hdf5), not a trained model; {EXPECTED}; a biLM's "
        "files go to --options-file and --weight-file (or ELMO_OPTIONS and ELMO_WEIGHTS)"
    )
    nested = _tar(tmp_path / "nested.tar.gz", {"run": None, "run/config.json": b"{}", "run/weights.th": b""})
    assert archive_problem(nested) == (
        f"{nested} holds run/config.json inside the folder run/, but AllenNLP reads config.json at the top of the "
        f"archive; {EXPECTED}: archive the folder's contents, e.g. `tar -C run -czf model.tar.gz .`"
    )


def test_broken_members_of_a_model_archive_are_named(sound, tmp_path):
    def broken_config(members: Dict[str, Optional[bytes]]) -> None:
        members["config.json"] = b'{"model": {"type": "snli_model",\n'

    path = _changed(sound, tmp_path / "config.tar.gz", broken_config)
    assert archive_problem(path) == (
        f"{path}, member config.json, line 2: not valid JSON (Expecting property name enclosed in double quotes, "
        f"column 1); expected the JSON config `allennlp train` writes: {REMEDY}"
    )
    path = _changed(sound, tmp_path / "weights.tar.gz", lambda members: members.pop("weights.th"))
    assert archive_problem(path) == f"{path} holds no weights.th (the trained weights); {EXPECTED}: {REMEDY}"

    def weights_cut_short(members: Dict[str, Optional[bytes]]) -> None:
        weights = members["weights.th"]
        assert weights is not None
        members["weights.th"] = weights[: len(weights) // 2]

    path = _changed(sound, tmp_path / "short.tar.gz", weights_cut_short)
    assert archive_problem(path) == (
        f"{path}, member weights.th is not a whole torch weights file (no zip directory at its end: truncated, or "
        f"not written by torch.save); {REMEDY}"
    )


def test_a_broken_vocabulary_in_an_archive_names_the_file_and_line(sound, tmp_path):
    def latin1(members: Dict[str, Optional[bytes]]) -> None:
        members["vocabulary/tokens.txt"] = "".join(_vocabulary_lines(members)[:3]).encode() + b"caf\xe9\n"

    path = _changed(sound, tmp_path / "latin1.tar.gz", latin1)
    assert archive_problem(path) == (
        f"{path}, member vocabulary/tokens.txt, line 4: bytes that are not UTF-8 (the first at character 4); "
        "expected UTF-8 text, one token per line: re-create the vocabulary (or restore the folder from where it "
        "was written)"
    )

    def repeated(members: Dict[str, Optional[bytes]]) -> None:
        lines = _vocabulary_lines(members)
        members["vocabulary/tokens.txt"] = "".join(lines[:5] + [lines[2]] + lines[5:]).encode()

    path = _changed(sound, tmp_path / "repeated.tar.gz", repeated)
    problem = archive_problem(path)
    assert problem is not None and problem.startswith(f"{path}, member vocabulary/tokens.txt, line 6: "), problem
    assert "repeats line 3; expected each token once" in problem


def test_a_serialization_folder_is_checked_file_by_file(sound, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    assert archive_problem(folder) == (
        f"{folder} holds no config.json (it holds nothing), so it is not a model archive; {EXPECTED}"
    )
    with tarfile.open(sound) as opened:
        opened.extractall(folder, filter="data")
    (folder / "weights.th").unlink()
    assert archive_problem(folder).startswith(f"{folder} holds neither weights.th nor best.th (the trained weights")
    (folder / "best.th").write_bytes(b"PK\x03\x04 cut")
    assert archive_problem(folder).startswith(f"{folder / 'best.th'} is not a whole torch weights file")


def test_a_sound_archive_shows_no_problem_and_other_failures_keep_their_error(sound, tmp_path):
    assert archive_problem(sound) is None
    with pytest.raises(Exception) as raised:  # not the archive's fault: a bad override
        load_model_archive(str(sound), overrides=json.dumps({"model.no_such_argument": 1}))
    assert not isinstance(raised.value, ArchiveFileError)


def test_load_model_archive_gives_the_line(sound, tmp_path):
    cut = tmp_path / "model.tar.gz"
    cut.write_bytes(sound.read_bytes()[:1000])
    with pytest.raises(ArchiveFileError, match=r"model\.tar\.gz is truncated: its data ends inside "):
        load_model_archive(str(cut))


def _flipped_where_zlib_cannot_see(sound: Path, path: Path) -> Path:
    """The archive gzip'ed without compression (stored blocks), then one byte of weights.th's values flipped in
    the gzip stream: zlib decodes it without complaint and only gzip's CRC-32, at the stream's end, tells."""
    tar = gzip.decompress(sound.read_bytes())
    with tarfile.open(fileobj=io.BytesIO(tar)) as opened:
        weights = opened.getmember("weights.th")
    middle = weights.offset_data + weights.size // 2
    stored = bytearray(gzip.compress(tar, compresslevel=0))
    place = stored.index(tar[middle : middle + 64])  # stored blocks hold the bytes as they are
    stored[place] ^= 0x10
    path.write_bytes(bytes(stored))
    return path


def test_flipped_bytes_that_zlib_decodes_are_found_by_the_checksum(sound, tmp_path):
    path = _flipped_where_zlib_cannot_see(sound, tmp_path / "model.tar.gz")
    problem = archive_problem(path)
    assert problem is not None and problem.startswith(f"{path} is corrupt (BadGzipFile: CRC check failed "), problem


def test_load_archive_refuses_an_archive_with_flipped_bytes(sound, tmp_path):
    path = _flipped_where_zlib_cannot_see(sound, tmp_path / "model.tar.gz")
    with pytest.raises(Exception, match="CRC check failed"):
        load_archive(str(path))


# --- through allennlp predict and evaluate ------------------------------------------------------------


def _cut(sound: Path, tmp_path: Path) -> Path:
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(sound.read_bytes()[: len(sound.read_bytes()) // 2])
    return path


def _no_config(sound: Path, tmp_path: Path) -> Path:
    return _tar(tmp_path / "other.tar.gz", {"notes.txt": b"not a model"})


def _folder(sound: Path, tmp_path: Path) -> Path:
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.txt").write_text("not a model\n")
    return tmp_path / "folder"


def _plain(sound: Path, tmp_path: Path) -> Path:
    path = tmp_path / "plain.tar.gz"
    path.write_bytes(gzip.decompress(sound.read_bytes()))
    return path


def _vocabulary_cut_short(sound: Path, tmp_path: Path) -> Path:
    def cut(members: Dict[str, Optional[bytes]]) -> None:
        members["vocabulary/tokens.txt"] = "".join(_vocabulary_lines(members)[:-3]).encode()

    return _changed(sound, tmp_path / "vocabulary.tar.gz", cut)


ARCHIVES = {
    "truncated": (_cut, "is truncated: its data ends inside member "),
    "tar without config.json": (_no_config, "holds no config.json (it holds notes.txt), so it is not a model archive"),
    "folder without config.json": (_folder, "holds no config.json (it holds notes.txt), so it is not a model archive"),
    "uncompressed tar": (_plain, "is an uncompressed tar, where AllenNLP reads a gzip-compressed one"),
    "vocabulary cut short": (
        _vocabulary_cut_short,
        ": its weights do not fit the model its config.json and vocabulary/",
    ),
}


@pytest.mark.parametrize("kind", sorted(ARCHIVES))
@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_allennlp_predict_and_evaluate_end_with_the_archives_line(kind, command, sound, tmp_path, capsys):
    make, expected = ARCHIVES[kind]
    archive = make(sound, tmp_path)
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"premise": "A dog runs.", "hypothesis": "An animal moves."}\n', encoding="utf-8")
    arguments = {
        "predict": [str(inputs), "--output-file", str(tmp_path / "out.jsonl"), "--silent"],
        "evaluate": [SNLI_DEV],
    }[command]
    line = uncaught_error_line(capsys, lambda: run_allennlp(command, str(archive), *arguments))
    assert line.startswith(f"allennlp: error: {archive}") and expected in line, line


def test_allennlp_predict_names_an_archive_its_predictor_cannot_serve(sound, language_model, tmp_path, capsys):
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"sentence": "A dog runs ."}\n', encoding="utf-8")
    out = ["--output-file", str(tmp_path / "out.jsonl"), "--silent"]
    line = uncaught_error_line(capsys, lambda: run_allennlp("predict", str(language_model), str(inputs), *out))
    assert line == (
        f"allennlp: error: {language_model} holds `bilm_language_model`, a biLM language model: use `allennlp "
        "export-bilm` (then `allennlp bilm-perplexity`); `allennlp predict` ran it with no predictor (the model names "
        "none) and failed (NotImplementedError): give it an archive of a task model"
    )
    line = uncaught_error_line(
        capsys, lambda: run_allennlp("predict", str(sound), str(inputs), *out, "--predictor", "ner")
    )
    assert line.startswith(f"allennlp: error: {sound} holds `snli_model`, an SNLI model: "), line
    assert line.endswith(
        "ran it with the predictor 'ner', which is not this model's, and failed (TypeError): pass "
        "--predictor snli or leave --predictor out"
    ), line


# --- through our commands -------------------------------------------------------------------------------


COMMANDS = {
    "squad-predict": [str(FIXTURES_ROOT / "squad" / "dev.json"), "out.json"],
    "srl-props": [str(FIXTURES_ROOT / "coref" / "train.gold_conll"), "out.props"],
    "coref-conll": [str(FIXTURES_ROOT / "coref" / "train.gold_conll"), "out.conll"],
    "ner-conll": [str(FIXTURES_ROOT / "ner" / "test.txt"), "out.conll"],
    "export-bilm": ["out"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_our_commands_name_an_archive_cut_short(command, sound, tmp_path, capsys):
    archive = _cut(sound, tmp_path)
    *inputs, output = COMMANDS[command]
    line = _fails(capsys, command, str(archive), *inputs, str(tmp_path / output))
    assert line.startswith(f"{command}: error: {archive} is truncated: its data ends inside member "), line


def test_export_bilm_names_a_vocabulary_that_does_not_fit_the_weights(sound, tmp_path, capsys):
    """export-bilm reads nothing but config.json before it loads the model: the load's failure is named."""
    archive = _vocabulary_cut_short(sound, tmp_path)
    line = _fails(capsys, "export-bilm", str(archive), str(tmp_path / "out"))
    assert line.startswith(f"export-bilm: error: {archive}: its weights do not fit the model its config.json and "), (
        line
    )


def test_our_commands_name_a_folder_without_config_json(sound, tmp_path, capsys):
    folder = _folder(sound, tmp_path)
    line = _fails(capsys, "export-bilm", str(folder), str(tmp_path / "out"))
    assert line == (
        f"export-bilm: error: {folder} is not a model archive (a folder without a readable config.json); {EXPECTED}"
    )


def test_our_commands_name_an_archive_of_a_biLM_language_model(language_model, tmp_path, capsys):
    line = _fails(capsys, "squad-predict", str(language_model), *COMMANDS["squad-predict"][:1], str(tmp_path / "o"))
    assert line == (
        f"squad-predict: error: {language_model} holds `bilm_language_model`, a biLM language model: use `allennlp "
        "export-bilm` (then `allennlp bilm-perplexity`); `allennlp squad-predict` needs a SQuAD model archive"
    )
