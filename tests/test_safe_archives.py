"""Archives that try to get out (issue 54, item 6): every extraction of ours and AllenNLP's refuses them.

Each crafted archive is first extracted without any filter (``fully_trusted``), to show it really
writes outside the extraction folder (or creates a device); then the guarded extraction must refuse
it with one line naming the archive and the member, having written nothing. The folder they aim at
is inside the test's ``tmp_path``.
"""

import importlib
import inspect
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import pytest
from allennlp.models import archival

from elmo_tasks import safe_archives
from elmo_tasks.commands.command_paths import CommandPathError, archive_model_type
from elmo_tasks.safe_archives import (
    UnsafeArchiveError,
    extract_archive_safely,
    install_safe_extraction,
    refuse_unsafe_tarfile,
    safe_extracted_archive,
)
from tests.conftest import FIXTURES_ROOT, ROOT, run_allennlp

Member = Tuple[tarfile.TarInfo, Optional[bytes]]

HARM = b"written by the archive"
VICTIM_TEXT = "the victim's own text"
ALLENNLP = str(Path(sys.executable).parent / "allennlp")


def _regular(name: str, data: bytes = HARM) -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def _folder(name: str) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info, None


def _special(name: str, kind: bytes) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = kind, 1, 3  # /dev/null's numbers, for the device
    return info, None


def _write_archive(path: Path, members: List[Member]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


@dataclass(frozen=True)
class Escape:
    """A crafted archive aimed from ``tmp/extract/here`` at ``tmp/outside`` (which holds victim.txt)."""

    name: str
    members: Callable[[Path], List[Member]]  # given the outside folder
    offending: Callable[[Path], str]  # the member the refusal must name
    reason: str  # what the refusal must say about it
    harmed: Callable[[Path, Path], bool]  # (outside, destination): whether the unfiltered extraction did harm


def _written(name: str) -> Callable[[Path, Path], bool]:
    return lambda outside, destination: (outside / name).exists()


def _is_fifo(path: Path) -> bool:
    return path.exists() and stat.S_ISFIFO(path.lstat().st_mode)


ESCAPES = [
    Escape(
        "absolute path",
        lambda outside: [_regular(str(outside / "absolute.txt"))],
        lambda outside: str(outside / "absolute.txt"),
        "its path is absolute: it would be written outside the extraction folder",
        _written("absolute.txt"),
    ),
    Escape(
        "dot-dot",
        lambda outside: [_regular("config.json", b"{}"), _regular("../../outside/dotdot.txt")],
        lambda outside: "../../outside/dotdot.txt",
        "it would be written outside the extraction folder",
        _written("dotdot.txt"),
    ),
    Escape(
        "symbolic link out",
        lambda outside: [_link("escape", "../../outside", tarfile.SYMTYPE), _regular("escape/symlinked.txt")],
        lambda outside: "escape",
        "it is a symbolic link to '../../outside', outside the extraction folder",
        _written("symlinked.txt"),
    ),
    Escape(
        "absolute symbolic link",
        lambda outside: [_link("escape", str(outside), tarfile.SYMTYPE), _regular("escape/symlinked.txt")],
        lambda outside: "escape",
        "it is a symbolic link to",
        _written("symlinked.txt"),
    ),
    Escape(
        "hard link out",  # a link to the victim, then a file of the same name written into it
        lambda outside: [_link("victim", "../../outside/victim.txt", tarfile.LNKTYPE), _regular("victim")],
        lambda outside: "victim",
        "it is a hard link to '../../outside/victim.txt', outside the extraction folder",
        lambda outside, destination: (outside / "victim.txt").read_text() != VICTIM_TEXT,
    ),
    Escape(
        "path through a symbolic link",  # inside on paper (a/outside/...), but a/b/c/d is a/, so the .. climb out
        lambda outside: [
            _link("a/b/c/d", "../..", tarfile.SYMTYPE),
            _regular("a/b/c/d/../../../outside/through.txt"),
        ],
        lambda outside: "a/b/c/d/../../../outside/through.txt",
        "its path runs through the symbolic link 'a/b/c/d', which could lead outside the extraction folder",
        _written("through.txt"),
    ),
    Escape(
        "link through a symbolic link",  # a/l is a/outside on paper, but a/b/c is the folder itself
        lambda outside: [
            _link("a/b/c", "../..", tarfile.SYMTYPE),
            _link("a/l", "b/c/../../outside", tarfile.SYMTYPE),
            _regular("a/l/linked.txt"),
        ],
        lambda outside: "a/l",
        "it is a symbolic link whose target 'b/c/../../outside' runs through the symbolic link 'a/b/c'",
        _written("linked.txt"),
    ),
    Escape(
        "FIFO",
        lambda outside: [_special("pipe", tarfile.FIFOTYPE)],
        lambda outside: "pipe",
        "it is a FIFO (named pipe), not a file, folder or link",
        lambda outside, destination: _is_fifo(destination / "pipe"),
    ),
]


@pytest.fixture()
def places(tmp_path: Path) -> Tuple[Path, Path]:
    """(outside, destination): ``outside`` holds victim.txt; the destination is ``extract/here``, empty."""
    outside, destination = tmp_path / "outside", tmp_path / "extract" / "here"
    outside.mkdir()
    (outside / "victim.txt").write_text(VICTIM_TEXT)
    destination.mkdir(parents=True)
    return outside, destination


def _reset(outside: Path, destination: Path) -> None:
    """Back to the fixture's state after an unfiltered extraction."""
    shutil.rmtree(outside)
    shutil.rmtree(destination)
    outside.mkdir()
    (outside / "victim.txt").write_text(VICTIM_TEXT)
    destination.mkdir()


def _untouched(outside: Path) -> bool:
    return sorted(os.listdir(outside)) == ["victim.txt"] and (outside / "victim.txt").read_text() == VICTIM_TEXT


def _unfiltered_extraction_harms(archive: Path, outside: Path, destination: Path, escape: Escape) -> None:
    """The negative control: extracted without a filter, the archive does the harm it was crafted for."""
    with tarfile.open(archive) as opened:
        opened.extractall(destination, filter="fully_trusted")
    assert escape.harmed(outside, destination), f"the crafted {escape.name} archive did no harm unfiltered"
    _reset(outside, destination)


def _check_refusal(message: str, archive: Path, offending: str, reason: str) -> None:
    assert "\n" not in message, message
    assert message.startswith(f"{archive}: refusing to extract member {offending!r}: {reason}"), message
    assert "re-create it" in message, message


@pytest.mark.parametrize("escape", ESCAPES, ids=[escape.name for escape in ESCAPES])
def test_safe_extraction_refuses_each_escape_with_one_line_and_writes_nothing(escape, places, tmp_path):
    outside, destination = places
    archive = _write_archive(tmp_path / "model.tar.gz", escape.members(outside))
    _unfiltered_extraction_harms(archive, outside, destination, escape)

    with pytest.raises(UnsafeArchiveError) as refused:
        extract_archive_safely(archive, destination)

    _check_refusal(str(refused.value), archive, escape.offending(outside), escape.reason)
    if "outside" in escape.reason:  # the folder it would have got out of is named
        assert f"outside the extraction folder {destination}" in str(refused.value), refused.value
    assert _untouched(outside) and os.listdir(destination) == []  # refused before anything was written


def test_a_character_device_is_refused(places, tmp_path):
    outside, destination = places
    archive = _write_archive(tmp_path / "model.tar.gz", [_special("null", tarfile.CHRTYPE)])
    with tarfile.open(archive) as opened:  # the negative control: unfiltered, tarfile makes the device
        try:
            opened.extractall(destination, filter="fully_trusted")
        except PermissionError:  # mknod, without root: tarfile did try
            pass
        else:
            assert stat.S_ISCHR((destination / "null").lstat().st_mode)
    _reset(outside, destination)

    with pytest.raises(UnsafeArchiveError) as refused:
        extract_archive_safely(archive, destination)

    _check_refusal(str(refused.value), archive, "null", "it is a character device, not a file, folder or link")
    assert os.listdir(destination) == []


def test_a_line_break_in_a_name_keeps_the_message_one_line(places, tmp_path):
    outside, destination = places
    archive = _write_archive(tmp_path / "model.tar.gz", [_regular("../../outside/two\nlines.txt")])
    with pytest.raises(UnsafeArchiveError) as refused:
        extract_archive_safely(archive, destination)
    _check_refusal(str(refused.value), archive, "../../outside/two\nlines.txt", "it would be written outside")
    assert _untouched(outside)


def test_a_valid_archive_with_links_inside_still_extracts(places, tmp_path):
    outside, destination = places
    archive = _write_archive(
        tmp_path / "model.tar.gz",
        [
            _folder("."),  # as `tar czf model.tar.gz -C run .` writes it
            _regular("./config.json", b'{"model": {"type": "snli_model"}}'),
            _regular("weights.th", b"weights"),
            _regular("vocabulary/tokens.txt", b"@@UNKNOWN@@\nthe\n"),
            _link("vocabulary/config.json", "../config.json", tarfile.SYMTYPE),
            _link("best.th", "weights.th", tarfile.LNKTYPE),
            _regular("vocabulary/../meta.json", b"{}"),
        ],
    )

    extract_archive_safely(archive, destination)

    assert (destination / "config.json").read_bytes() == b'{"model": {"type": "snli_model"}}'
    assert (destination / "vocabulary" / "tokens.txt").read_bytes() == b"@@UNKNOWN@@\nthe\n"
    assert (destination / "vocabulary" / "config.json").resolve() == (destination / "config.json").resolve()
    assert (destination / "best.th").read_bytes() == b"weights"
    assert (destination / "meta.json").read_bytes() == b"{}"
    assert _untouched(outside)


# --- through AllenNLP, with the plugin imported (tests/conftest.py imports it) ---------------------


def test_the_plugin_installed_the_adapter_and_installing_again_changes_nothing():
    cached_path_module = importlib.import_module("cached_path._cached_path")
    assert archival.extracted_archive is safe_extracted_archive
    assert cached_path_module.check_tarfile is refuse_unsafe_tarfile
    replaced = dict(safe_archives._REPLACED)
    hook = sys.excepthook

    install_safe_extraction()

    assert archival.extracted_archive is safe_extracted_archive and replaced == safe_archives._REPLACED
    assert cached_path_module.check_tarfile is refuse_unsafe_tarfile and sys.excepthook is hook
    assert "extractall" in inspect.getsource(replaced["allennlp.models.archival.extracted_archive"])


def _sources(package: str) -> List[Path]:
    return sorted(Path(importlib.import_module(package).__file__).parent.rglob("*.py"))


def test_the_adapter_still_covers_every_extraction_of_allennlp_and_cached_path():
    """Fails when a new AllenNLP or cached-path extracts archives somewhere the adapter does not patch."""
    site = Path(importlib.import_module("allennlp").__file__).parent.parent
    extracting = {
        str(path.relative_to(site)): path.read_text(encoding="utf-8").count(".extractall(")
        for package in ("allennlp", "cached_path")
        for path in _sources(package)
        if ".extractall(" in path.read_text(encoding="utf-8")
    }
    known = {
        "allennlp/models/archival.py": 1,  # extracted_archive: replaced
        "cached_path/_cached_path.py": 2,  # zip (its extractall drops .. and /) and tar, after check_tarfile: replaced
        "allennlp/tools/archive_surgery.py": 1,  # a stand-alone script of AllenNLP's, no plugin loaded
    }
    assert extracting == known, (
        f"AllenNLP or cached-path now extract archives in {extracting} (expected {known}); "
        "elmo_tasks/safe_archives.py (install_safe_extraction) must cover the new extraction"
    )
    load_archive_source = inspect.getsource(archival.load_archive)
    assert "with extracted_archive(resolved_archive_file, cleanup=False)" in load_archive_source, (
        "allennlp.models.archival.load_archive no longer extracts through extracted_archive, "
        "which elmo_tasks/safe_archives.py replaces: update the adapter"
    )
    extraction = inspect.getsource(importlib.import_module("cached_path._cached_path"))
    assert re.search(r"check_tarfile\(tar_file\)\s*\n\s*tar_file\.extractall\(", extraction), (
        "cached_path no longer calls check_tarfile just before it extracts a tar file, "
        "which elmo_tasks/safe_archives.py replaces: update the adapter"
    )


@pytest.mark.parametrize("escape", [ESCAPES[1], ESCAPES[0], ESCAPES[5], ESCAPES[6]], ids=lambda escape: escape.name)
def test_load_archive_refuses_the_archive_and_writes_nothing_outside(escape, tmp_path, monkeypatch):
    """``load_archive`` extracts into ``tempfile.mkdtemp()``, here ``tmp/extract/tmpXXXX``, two levels below
    ``tmp``, as the crafted names expect; unguarded (AllenNLP's own extraction) the archive writes outside."""
    outside, temporary = tmp_path / "outside", tmp_path / "extract"
    outside.mkdir()
    (outside / "victim.txt").write_text(VICTIM_TEXT)
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    archive = _write_archive(tmp_path / "model.tar.gz", escape.members(outside))

    with monkeypatch.context() as unguarded:  # the negative control, with AllenNLP's own extraction
        unguarded.setattr(
            archival, "extracted_archive", safe_archives._REPLACED["allennlp.models.archival.extracted_archive"]
        )
        with pytest.raises(Exception):  # noqa: B017  # why: gets out, then fails for want of a model (any error)
            archival.load_archive(str(archive))
    assert escape.harmed(outside, temporary)
    shutil.rmtree(outside)
    outside.mkdir()
    (outside / "victim.txt").write_text(VICTIM_TEXT)
    shutil.rmtree(temporary)
    temporary.mkdir()

    with pytest.raises(UnsafeArchiveError) as refused:
        archival.load_archive(str(archive))

    _check_refusal(str(refused.value), archive, escape.offending(outside), escape.reason)
    assert _untouched(outside) and os.listdir(temporary) == []  # nothing written, the temporary folder removed


def test_cached_path_extraction_refuses_what_its_own_check_lets_through(tmp_path, monkeypatch):
    """cached-path's check compares paths as strings: ``../pathtest-x/...`` passes it (``tmp/pathtest`` is
    its stand-in folder) and lands beside the extraction folder, in the cache folder."""
    from allennlp.common.file_utils import cached_path
    from cached_path.util import check_tarfile

    archive = _write_archive(tmp_path / "data.tar.gz", [_regular("../pathtest-x/owned.txt")])
    with tarfile.open(archive) as opened:
        check_tarfile(opened)  # raises nothing
    control_cache = tmp_path / "control-cache"
    with monkeypatch.context() as unguarded:
        unguarded.setattr(importlib.import_module("cached_path._cached_path"), "check_tarfile", check_tarfile)
        cached_path(str(archive), cache_dir=control_cache, extract_archive=True)
    assert (control_cache / "pathtest-x" / "owned.txt").exists()  # the negative control

    cache = tmp_path / "cache"
    with pytest.raises(UnsafeArchiveError) as refused:
        cached_path(str(archive), cache_dir=cache, extract_archive=True)

    _check_refusal(str(refused.value), archive, "../pathtest-x/owned.txt", "it would be written outside")
    assert not (cache / "pathtest-x").exists()
    assert not [path for path in cache.rglob("*") if path.suffix != ".lock"]  # no extraction left behind


def test_our_commands_refuse_the_archive_in_one_line_before_loading_it(places, tmp_path, capsys):
    outside, _ = places
    archive = _write_archive(tmp_path / "model.tar.gz", ESCAPES[1].members(outside))
    with pytest.raises(CommandPathError) as refused:
        archive_model_type(str(archive))
    _check_refusal(str(refused.value), archive, "../../outside/dotdot.txt", "it would be written outside")

    with pytest.raises(SystemExit) as exit_:
        run_allennlp("squad-predict", str(archive), str(FIXTURES_ROOT / "squad" / "dev.json"), str(tmp_path / "o"))
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert exit_.value.code == 2 and "Traceback" not in err and len(errors) == 1, err[-3000:]
    assert errors[0].startswith(f"squad-predict: error: {archive}: refusing to extract member '../../outside/")
    assert _untouched(outside)


@pytest.mark.parametrize(
    "argv0, program",
    [
        ("/venv/bin/allennlp", "allennlp"),
        ("/venv/bin/elmo-tasks", "elmo-tasks"),
        ("/x/elmo_tasks/__main__.py", "python -m elmo_tasks"),
    ],
)
def test_an_uncaught_refusal_ends_the_program_with_its_line(argv0, program, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [argv0, "predict"])
    sys.excepthook(UnsafeArchiveError, UnsafeArchiveError("model.tar.gz: refusing ..."), None)
    assert capsys.readouterr().err == f"{program}: error: model.tar.gz: refusing ...\n"


@pytest.mark.slow  # a whole `allennlp predict`, 20 to 50 s: in `make test-all`, out of the fast suite
def test_allennlp_predict_refuses_the_archive_with_one_line(tmp_path):
    """The real command line, from the repo root (where .allennlp_plugins names our plugin); its
    extraction folder is made in ``tmp/extract`` (TMPDIR), two levels below ``tmp``."""
    outside, temporary = tmp_path / "outside", tmp_path / "extract"
    outside.mkdir()
    temporary.mkdir()
    archive = _write_archive(
        tmp_path / "model.tar.gz", [_regular("config.json", b"{}"), _regular("../../outside/x.txt")]
    )
    control = temporary / "control"
    with tarfile.open(archive) as opened:  # the negative control: unfiltered, it writes outside/x.txt
        opened.extractall(control, filter="fully_trusted")
    assert (outside / "x.txt").exists()
    (outside / "x.txt").unlink()
    shutil.rmtree(control)
    inputs = tmp_path / "input.jsonl"
    inputs.write_text('{"sentence": "a"}\n')

    done = subprocess.run(
        [ALLENNLP, "predict", str(archive), str(inputs), "--silent"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(temporary), "OMP_NUM_THREADS": "1"},
        timeout=300,
    )

    assert not (outside / "x.txt").exists() and os.listdir(outside) == []
    # the extraction folder (mkdtemp's tmpXXXX) removed; torch may leave its own cache folder there
    assert [name for name in os.listdir(temporary) if name.startswith("tmp")] == [], os.listdir(temporary)
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert done.returncode != 0 and "Traceback" not in done.stderr and len(errors) == 1, done.stderr[-3000:]
    assert errors[0].startswith(
        f"allennlp: error: {archive}: refusing to extract member '../../outside/x.txt': it would be written "
        f"outside the extraction folder {temporary}"
    ), errors[0]
