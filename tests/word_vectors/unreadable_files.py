"""What the word-vector readers of text files (the corpus, GloVe files) both refuse, naming the file."""

from pathlib import Path
from typing import Callable, Type

import pytest


def check_unreadable_files_are_named(
    read: Callable[[Path], object], error: Type[Exception], tmp_path: Path, missing: str
) -> None:
    """``read`` refuses with ``error`` a missing file (a message matching ``missing``), a folder, and a
    file whose second line holds a byte that is not UTF-8 (naming the file, the line and the character)."""
    with pytest.raises(error, match=missing):
        read(tmp_path / "none.txt")
    with pytest.raises(error, match="is a folder"):
        read(tmp_path)
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"the 0.1 0.2\ncaf\xe9 0.3 0.4\n")
    with pytest.raises(error, match=r"latin1\.txt, line 2: bytes that are not UTF-8 \(the first at character 4\)"):
        read(path)
