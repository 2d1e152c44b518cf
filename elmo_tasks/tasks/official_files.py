"""Where the data files an experiment names are found: plain or gzipped, and CoNLL-2012's two layouts.

The experiments name each official file once (``snli_1.0_train.jsonl``, ``train-v1.1.json``,
``train.english.v4_gold_conll``, ...). Users hold them as released or compressed, and CoNLL-2012 in
one of two layouts: one file per split (``{train,dev,test}.english.v4_gold_conll``, as the
shared-task scripts assemble them) or the per-document ``*_gold_conll`` files of the
``conll-formatted-ontonotes-5.0`` release (``conll-formatted-ontonotes-5.0/data/{train,development,
test}/data/english/annotations/...``). :func:`data_file_parts` finds whichever is there, so that
neither needs an edit to the experiment.
"""

import os
import re
from pathlib import Path
from typing import List, Optional

# The single-file name of a CoNLL-2012 split, and its folder in the per-document release.
SINGLE_FILE = re.compile(r"^(?P<split>train|dev|development|test)\.english\.v4_gold_conll(\.gz)?$")
RELEASE_SPLITS = {"train": "train", "dev": "development", "development": "development", "test": "test"}
RELEASE_FOLDER = "conll-formatted-ontonotes-5.0"


def _twin_found(path: str) -> Optional[str]:
    """``path`` if it exists, else the same name with ``.gz`` added or removed, if that exists."""
    if os.path.exists(path):
        return path
    other = path[: -len(".gz")] if path.endswith(".gz") else path + ".gz"
    return other if os.path.exists(other) else None


def with_or_without_gz(path: str) -> str:
    """``path``, or its plain/``.gz`` twin where only that exists (``path`` itself when neither does, so
    that opening it raises FileNotFoundError naming the name asked for)."""
    return _twin_found(path) or path


def per_document_folder(path: str) -> Optional[str]:
    """For a CoNLL-2012 single-file name, the release's per-document folder of that split beside it
    (``<folder>/conll-formatted-ontonotes-5.0/data/<split>/data/english/annotations``), if it exists."""
    match = SINGLE_FILE.match(os.path.basename(path))
    if match is None:
        return None
    split = RELEASE_SPLITS[match.group("split")]
    folder = Path(os.path.dirname(path)) / RELEASE_FOLDER / "data" / split / "data" / "english" / "annotations"
    return str(folder) if folder.is_dir() else None


def found_data_path(path: str) -> Optional[str]:
    """The file or per-document folder that holds what ``path`` names, or None when nothing does."""
    return _twin_found(path) or per_document_folder(path)


def data_file_parts(path: str) -> List[str]:
    """The files to read for ``path``, in order: the file itself (or its plain/``.gz`` twin), or every
    ``*_gold_conll`` file under a per-document folder, sorted by path.

    Raises FileNotFoundError naming the path and what else was looked for.
    """
    found = found_data_path(path)
    if found is None:
        also = " (nor its per-document folder)" if SINGLE_FILE.match(os.path.basename(path)) else ""
        raise FileNotFoundError(f"{path}: no such file, with or without .gz{also}; docs/DATA.md says where to get it")
    if not os.path.isdir(found):
        return [found]
    parts = sorted(str(file) for file in Path(found).rglob("*_gold_conll") if file.is_file())
    if not parts:
        raise FileNotFoundError(f"{found}: a folder without *_gold_conll files; docs/DATA.md says where to get them")
    return parts


# The section of docs/DATA.md that says how to get the files of each data folder (a heading's start).
DATA_SECTIONS = {
    "snli": "SNLI",
    "squad": "SQuAD v1.1",
    "conll2005": "CoNLL-2005 SRL",
    "conll2012": "CoNLL-2012 (OntoNotes 5.0)",
    "conll2003": "CoNLL-2003 NER",
    "sst": "SST-5",
}


def where_to_get(path: str) -> str:
    """``docs/DATA.md, "SECTION"`` for a data file, by the data folder its path names."""
    folders = [part for part in path.replace("\\", "/").split("/") if part in DATA_SECTIONS]
    section = DATA_SECTIONS[folders[-1]] if folders else None
    return f'docs/DATA.md, "{section}"' if section else "docs/DATA.md"
