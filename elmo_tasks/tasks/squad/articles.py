"""The articles of a SQuAD v1.1 json file, and the fold of them a path suffix selects.

Article-level folds. A path may end in ``#fold=K/N`` (fold K of N, 1-based) or
``#folds-except=K/N`` (every article not in fold K; ``K`` may be a comma-separated list, e.g.
``#folds-except=2,3/4``). Article i of the file (0-based, in file order) is in fold
``i % N + 1``, so folds are balanced and no article is in two folds: for K-fold
cross-validation train on ``#folds-except=K/N`` and test on ``#fold=K/N``.
"""

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from allennlp.common.file_utils import open_compressed

from elmo_tasks.counted_nouns import counted
from elmo_tasks.tasks.data_files import DataFileError, not_utf8
from elmo_tasks.tasks.data_selection import DataPathError
from elmo_tasks.tasks.official_files import data_file_parts


@dataclass(frozen=True)
class FoldSelection:
    """Which articles of a file a ``#fold=`` / ``#folds-except=`` suffix selects."""

    folds: Tuple[int, ...]
    num_folds: int
    keep_selected: bool  # True: the articles of ``folds``; False: every other article

    def keeps(self, article_index: int) -> bool:
        return ((article_index % self.num_folds + 1) in self.folds) == self.keep_selected


def split_path(file_path: str) -> Tuple[str, Optional[FoldSelection]]:
    """``"x.json#fold=2/4"`` -> ``("x.json", FoldSelection((2,), 4, True))``; no suffix -> ``(path, None)``.

    A suffix that cannot be read is a DataPathError (a ConfigurationError), as for the other readers'
    ``#train``/``#holdout``/``#sample=P`` suffixes (:mod:`elmo_tasks.tasks.data_selection`)."""
    path, sep, suffix = str(file_path).rpartition("#")
    if not sep:
        return str(file_path), None
    usage = (
        "a SQuAD data path may end in '#fold=K/N' (fold K of N) or '#folds-except=K/N' "
        "(all other folds; K may be a list such as 2,3), with 1 <= K <= N"
    )
    name, eq, spec = suffix.partition("=")
    if name not in ("fold", "folds-except") or not eq:
        raise DataPathError(f"{file_path!r}: unknown suffix '#{suffix}'; {usage}")
    folds_text, slash, total_text = spec.partition("/")
    try:
        folds = tuple(int(k) for k in folds_text.split(","))
        num_folds = int(total_text)
    except ValueError:
        raise DataPathError(f"{file_path!r}: cannot read '{spec}'; {usage}") from None
    if not slash or num_folds < 2 or any(not 1 <= k <= num_folds for k in folds):
        raise DataPathError(f"{file_path!r}: '{spec}' is not a valid fold; {usage}")
    if name == "fold" and len(folds) != 1:
        raise DataPathError(f"{file_path!r}: '#fold=' takes one fold; {usage}")
    return path, FoldSelection(folds, num_folds, keep_selected=name == "fold")


def load_articles(file_path: str) -> List[Dict[str, Any]]:
    """The articles of a SQuAD v1.1 json file (plain or .gz), restricted to the fold its path suffix names."""
    path, selection = split_path(file_path)
    found = path if "://" in path else data_file_parts(path)[0]  # a URL goes through AllenNLP's cache
    with open_compressed(found, "rb", encoding=None) as handle:
        data = handle.read()
    try:
        dataset = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        before = data[data.rfind(b"\n", 0, error.start) + 1 : error.start].decode("utf-8", errors="replace")
        raise DataFileError(f"{path}, line {line}: {not_utf8(len(before))}") from None
    except json.JSONDecodeError as error:
        raise DataFileError(
            f"{path}, line {error.lineno}: not valid JSON ({error.msg}, column {error.colno}); "
            'expected a SQuAD v1.1 file {"version", "data": [articles]}'
        ) from None
    if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
        raise DataFileError(f"{path}: expected a JSON object with a 'data' list of articles (SQuAD v1.1 format)")
    articles = dataset["data"]
    if selection is None:
        return articles
    if len(articles) < selection.num_folds:
        raise DataFileError(
            f"{file_path}: {counted(len(articles), 'article')} cannot be split into {selection.num_folds} folds; "
            "use fewer folds"
        )
    return [article for index, article in enumerate(articles) if selection.keeps(index)]
