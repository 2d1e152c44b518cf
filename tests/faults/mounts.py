"""Small file systems for fault tests: a size-limited tmpfs (a disk that fills) and a read-only one.

Mounting needs root (or CAP_SYS_ADMIN); where it is refused the tests that need it are skipped
with the reason, as the issue allows.
"""

import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, Optional

import pytest


def _mount(options: str, folder: Path) -> None:
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'mount failed'}): run as root to test this")


@contextmanager
def small_filesystem(
    folder: Path, kilobytes: int, read_only: bool = False, files: Optional[Dict[str, bytes]] = None
) -> Iterator[Path]:
    """A tmpfs of ``kilobytes`` at ``folder`` holding ``files``; read-only after they are written if asked."""
    folder.mkdir(parents=True, exist_ok=True)
    _mount(f"size={kilobytes}k", folder)
    try:
        for name, content in (files or {}).items():
            (folder / name).write_bytes(content)
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
