"""``allennlp train`` stops before any work when a data file of its config is missing: one line per file.

Without the check, AllenNLP finds a missing file only when it reads it: the training file after
the model's setup, the validation file after the vocabulary is built from the training data (minutes
on the real data), each as a traceback. The check reads the config as ``allennlp train`` will
(the same file, overrides and environment) and looks for every local data path it names
(``train_data_path``, ``validation_data_path``, ``test_data_path``), in every form the readers accept
(:func:`elmo_tasks.tasks.official_files.found_data_path`: plain or ``.gz``, CoNLL-2012's
per-document folders; ``#`` suffixes select a part of a file and are not part of its name).
"""

import argparse
import sys
from typing import Any, List

DATA_PATH_KEYS = ("train_data_path", "validation_data_path", "test_data_path")


def missing_data_lines(prog: str, param_path: str, overrides: Any) -> List[str]:
    """One line per missing data file of the config; none when the config cannot be read (AllenNLP then
    reports that itself)."""
    from allennlp.common import Params

    from elmo_tasks.tasks.official_files import SINGLE_FILE, found_data_path, where_to_get

    try:
        params = Params.from_file(param_path, overrides or "")
    except Exception:  # noqa: BLE001  (a config that does not load: AllenNLP's own error says why)
        return []
    lines = []
    for key in DATA_PATH_KEYS:
        value = params.get(key, None)
        if not isinstance(value, str) or not value or "://" in value:
            continue
        path = value.split("#")[0]
        if found_data_path(path) is None:
            folder = " (nor its per-document folder)" if SINGLE_FILE.match(path.rsplit("/", 1)[-1]) else ""
            lines.append(
                f"{prog} train: error: {key} {path}: no such file, with or without .gz{folder}; "
                f"how to get it: {where_to_get(path)}"
            )
    return lines


def stop_if_data_is_missing(prog: str, args: argparse.Namespace) -> None:
    """For ``train``: print the lines of :func:`missing_data_lines` and exit with status 2, if any."""
    if getattr(args, "param_path", None) is None or not hasattr(args, "serialization_dir"):
        return
    lines = missing_data_lines(prog, args.param_path, getattr(args, "overrides", ""))
    if lines:
        print("\n".join(lines), file=sys.stderr, flush=True)
        raise SystemExit(2)
