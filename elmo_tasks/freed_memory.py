"""Keep freed memory in the process for the next batch instead of handing it back to the system.

glibc's ``malloc`` serves large blocks (from 128 KB, a limit that adapts up to 32 MB) with fresh pages
from ``mmap`` and unmaps them when they are freed, so every biLM batch writes to pages the kernel must
first fault in and zero: about 40,000 page faults per batch of 64 sentences at the small size, about
a tenth of ``elmo-embed``'s CPU time (docs/BENCHMARKS.md, "Freed memory kept for reuse"). With
``mmap`` off and the heap's trimming limit raised, a freed block stays in the heap and the next batch
reuses it. Memory is not returned before the process ends, and the peak can be a little higher (a
larger block may not fit in the gaps freed blocks leave: about 50 MB for ``elmo-embed``). So this
suits the one-shot batch commands (``elmo-embed``, ``bilm-perplexity``), not a library call inside
someone else's long-lived process.

Only glibc has these settings (``mallopt``); elsewhere, or with ``ELMO_TASKS_FREED_MEMORY=return``,
nothing changes.
"""

import ctypes
import os

ENVIRONMENT_VARIABLE = "ELMO_TASKS_FREED_MEMORY"
# glibc's malloc.h
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_LARGEST_INT = 2**31 - 1


class FreedMemorySettingError(ValueError):
    """``ELMO_TASKS_FREED_MEMORY`` holds something other than ``keep`` or ``return``."""


def keep_freed_memory() -> bool:
    """Set this process's glibc ``malloc`` to keep freed memory for reuse; True when it was set.

    Forked workers inherit the setting."""
    setting = os.environ.get(ENVIRONMENT_VARIABLE, "keep")
    if setting not in ("keep", "return"):
        raise FreedMemorySettingError(
            f"{ENVIRONMENT_VARIABLE} must be 'keep' (the default: freed memory is reused) or 'return' "
            f"(glibc's defaults), got {setting!r}"
        )
    if setting == "return" or not _is_glibc():
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    # mallopt returns 1 on success, 0 on error
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, _LARGEST_INT))


def _is_glibc() -> bool:
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError, AttributeError):  # not a GNU system, or no confstr
        return False
    return bool(version and version.startswith("glibc"))
