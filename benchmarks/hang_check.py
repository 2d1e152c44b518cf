"""Does ``elmo-embed`` / ``bilm-perplexity`` always return? Many whole runs at their defaults, with a timeout.

The worker-pool deadlock of issue 54 showed only through the real entry points (``allennlp``
installs a SIGTERM handler the forked workers inherited), at the default worker count (one per
core), with no thread settings, and only in some runs. So each run here is a fresh process of the
real command, with ``OMP_NUM_THREADS`` and friends removed from its environment, on the shipped
biLM, over a file of many short sentences at batch size 1 (many batches, many pool round trips),
optionally beside one busy process (``--busy``, a loaded 2-core machine). A run that has not ended
after ``--timeout`` seconds counts as hung and is killed.

    python benchmarks/hang_check.py --runs 50 --busy                 # every entry point
    python benchmarks/hang_check.py --runs 3 --entry-points elmo-tasks

Prints, per command, ``N runs, H hung, F failed`` and exits non-zero if any run hung or failed.
It runs from the repository root (``allennlp`` finds our plugin through ``.allennlp_plugins``
there); ``elmo-tasks`` and ``python -m`` run from a temporary folder, as from a user's own.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
ENTRY_POINTS = ("allennlp", "elmo-tasks", "python-m")
COMMANDS = ("elmo-embed", "bilm-perplexity")
WORDS = "the cat sat on a mat while dogs ran past quickly and birds sang over green hills".split()  # noqa: SIM905


def _commands(entry_point: str, text: Path, output: Path) -> Dict[str, List[str]]:
    """The commands an entry point offers, by name, each reading ``text``."""
    embed_args = [str(text), str(output), "--all", "--batch-size", "1", "--no-progress"]
    perplexity_args = [str(text), "--batch-size", "1", "--no-progress"]
    if entry_point == "python-m":
        return {"elmo-embed": [sys.executable, "-m", "elmo_tasks.bilm.embed", *embed_args]}
    program = str(BIN / entry_point)
    return {
        "elmo-embed": [program, "elmo-embed", *embed_args],
        "bilm-perplexity": [program, "bilm-perplexity", *perplexity_args],
    }


def _user_environment() -> Dict[str, str]:
    """The caller's environment without thread settings: the default worker processes, as for a new user."""
    return {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}


def run_once(command: List[str], cwd: Path, timeout: float) -> Tuple[str, float, str]:
    """``("ok" | "hung" | "failed", seconds, the end of stderr)`` for one fresh process of ``command``."""
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=cwd, env=_user_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        return "hung", time.monotonic() - started, err[-500:]
    outcome = "ok" if process.returncode == 0 else "failed"
    return outcome, time.monotonic() - started, err[-500:]


def _busy_process() -> "subprocess.Popen[bytes]":
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="runs of each command (default: 50)")
    parser.add_argument("--sentences", type=int, default=120, help="lines of the input file (default: 120)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds before a run counts as hung")
    parser.add_argument("--busy", action="store_true", help="keep one busy process running beside the runs")
    parser.add_argument(
        "--entry-points", nargs="+", choices=ENTRY_POINTS, default=list(ENTRY_POINTS), help="which to run"
    )
    parser.add_argument("--commands", nargs="+", choices=COMMANDS, default=list(COMMANDS), help="which commands to run")
    args = parser.parse_args()
    busy = _busy_process() if args.busy else None
    failures = 0
    try:
        with tempfile.TemporaryDirectory(prefix="hang_check_") as folder:
            work = Path(folder)
            text = work / "sentences.txt"
            lines = (" ".join(WORDS[: 1 + (i * 7) % len(WORDS)]) for i in range(args.sentences))
            text.write_text("\n".join(lines) + "\n", encoding="utf-8")
            for entry_point in args.entry_points:
                cwd = ROOT if entry_point == "allennlp" else work
                for name, command in _commands(entry_point, text, work / "out.hdf5").items():
                    if name not in args.commands:
                        continue
                    outcomes: Dict[str, int] = {"ok": 0, "hung": 0, "failed": 0}
                    seconds: List[float] = []
                    for _ in range(args.runs):
                        outcome, took, err = run_once(command, cwd, args.timeout)
                        outcomes[outcome] += 1
                        seconds.append(took)
                        if outcome != "ok":
                            print(f"  {entry_point} {name}: {outcome} after {took:.1f} s: {err.strip()}", flush=True)
                    failures += outcomes["hung"] + outcomes["failed"]
                    print(
                        f"{entry_point} {name}: {args.runs} runs, {outcomes['hung']} hung, {outcomes['failed']} failed "
                        f"(longest {max(seconds):.1f} s)",
                        flush=True,
                    )
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
