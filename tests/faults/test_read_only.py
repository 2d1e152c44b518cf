"""``export-bilm`` and ``build-word-vectors`` pointed at a read-only file system (issue 54): one line
naming the path, before any work (no model loaded, no vectors trained), the earlier files unchanged,
nothing left beside them. In this process: the commands' own code, without a second start."""

import os
import subprocess

import pytest

from tests.conftest import run_allennlp, untrained_archive
from tests.faults.earlier_export import EARLIER_EXPORT, earlier_export_files, write_earlier_export
from tests.faults.mounts import small_filesystem


@pytest.mark.parametrize("earlier", [False, True], ids=["new-folder", "earlier-export"])
def test_export_bilm_into_a_read_only_file_system_refuses_before_any_work(tmp_path, capsys, earlier):
    archive = untrained_archive("ner_elmo", tmp_path / "ner_elmo")
    with small_filesystem(tmp_path / "disk", kilobytes=256) as disk:
        output = disk / "elmo"
        if earlier:
            write_earlier_export(output)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        with pytest.raises(SystemExit) as ended:
            run_allennlp("export-bilm", str(archive), str(output))
        err = capsys.readouterr().err
        kept = earlier_export_files(output) if earlier else None
        left = sorted(os.listdir(disk))
    assert ended.value.code == 2
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"export-bilm: error: cannot write {output}: Read-only file system (EROFS); that file system is read-only: "
        f"write to another folder (checked in {output if earlier else disk} before any work)"
    ), err[-3000:]
    assert left == (["elmo"] if earlier else [])
    assert kept == (EARLIER_EXPORT if earlier else None)


def test_build_word_vectors_into_a_read_only_file_system_refuses_before_training(tmp_path, capsys):
    from elmo_tasks.word_vectors.build_command import main

    corpus = tmp_path / "corpus.txt"
    words = [f"word{index}" for index in range(400)]
    corpus.write_text("".join(" ".join(words[(i * 7 + k) % 400] for k in range(12)) + "\n" for i in range(200)))
    with small_filesystem(tmp_path / "disk", kilobytes=256, read_only=True, files={"vectors.txt": b"old"}) as disk:
        output = disk / "vectors.txt"
        with pytest.raises(SystemExit) as ended:
            main([str(corpus), str(output), "--dim", "10", "--epochs", "1", "--workers", "1"])
        err = capsys.readouterr().err
        kept, left = output.read_bytes(), sorted(os.listdir(disk))
    assert ended.value.code == 2
    assert err.strip().splitlines() == [
        f"build-word-vectors: error: cannot write {output}: Read-only file system (EROFS); that file system is "
        f"read-only: write to another folder (checked in {disk} before any training)"
    ]
    assert "epoch" not in err  # refused before any training
    assert kept == b"old" and left == ["vectors.txt"]
