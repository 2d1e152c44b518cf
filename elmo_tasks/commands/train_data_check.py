"""``allennlp train`` stops before any work when its config or a data file of it is missing: one line each.

Without the check, AllenNLP finds a missing file only when it reads it: the training file after
the model's setup, the validation file after the vocabulary is built from the training data (minutes
on the real data), each as a traceback. The check reads the config as ``allennlp train`` will
(the same file, overrides and environment) and looks for every local data path it names
(``train_data_path``, ``validation_data_path``, ``test_data_path``), in every form the readers accept
(:func:`elmo_tasks.tasks.official_files.found_data_path`: plain or ``.gz``, CoNLL-2012's
per-document folders; ``#`` suffixes select a part of a file and are not part of its name).
Before that, the experiment file itself: a path that is not there, a folder, or a config that jsonnet
cannot evaluate (its syntax, an undefined external variable, overrides that are not JSON) ends in a
traceback from deep inside AllenNLP's file cache or jsonnet; here it is one line that names the file,
what is wrong with it (jsonnet's own message, with line and column) and what to give instead.
"""

import argparse
import os
import sys
from typing import Any, List, Optional

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


def config_problem(prog: str, param_path: str, overrides: Any) -> Optional[str]:
    """One line if ``allennlp train`` could not read its experiment file ``param_path`` with ``overrides``;
    None if it can (or if it is a URL, which AllenNLP fetches and reports on itself)."""
    from allennlp.common import Params

    if "://" in param_path:
        return None
    where = f"{param_path} (from {os.getcwd()})" if not os.path.isabs(param_path) else param_path
    if os.path.isdir(param_path):
        return f"{prog} train: error: {where} is a folder; give the experiment file itself (.jsonnet or .json)"
    if not os.path.isfile(param_path):
        return f"{prog} train: error: {where}: no such experiment file; give the path of a .jsonnet or .json config"
    for with_overrides in (False, True):
        try:
            Params.from_file(param_path, (overrides or "") if with_overrides else "")
        except RuntimeError as failed:  # jsonnet's errors: STATIC ERROR / RUNTIME ERROR, with file:line:column
            what = "with the overrides given by -o" if with_overrides else "as written"
            reason = str(failed).strip().splitlines()[0] if str(failed).strip() else type(failed).__name__
            return f"{prog} train: error: {param_path} does not evaluate {what}: {reason}"
        except (ValueError, OSError) as failed:  # not JSON after evaluation, not UTF-8, unreadable
            return f"{prog} train: error: {param_path} cannot be read as an experiment: {failed}"
    return None


def stop_if_data_is_missing(prog: str, args: argparse.Namespace) -> None:
    """For ``train``: print :func:`config_problem`'s line or the lines of :func:`missing_data_lines` and exit
    with status 2, if there are any."""
    if getattr(args, "param_path", None) is None or not hasattr(args, "serialization_dir"):
        return
    problem = config_problem(prog, args.param_path, getattr(args, "overrides", ""))
    lines = [problem] if problem else missing_data_lines(prog, args.param_path, getattr(args, "overrides", ""))
    if lines:
        print("\n".join(lines), file=sys.stderr, flush=True)
        raise SystemExit(2)
