"""The record of a build, a JSON file beside the vectors: how they were made, from what, and their hash.

``OUTPUT.record.json`` holds the command line that rebuilds the vectors, the options, the corpus path
and sha256, the output's sha256, the vocabulary size, the dimension, the algorithm, the gensim
version and the seconds taken. A build is reused when its record says it was made from a corpus with
the same sha256 with the same options, and the output still has the recorded sha256 (so a file
that was cut short or edited since is rebuilt).
"""

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, Optional

from elmo_tasks.atomic_files import WholeFile
from elmo_tasks.word_vectors.options import WordVectorOptions

RECORD_SUFFIX = ".record.json"
# The version of the record's layout; a record of another version is never reused.
RECORD_FORMAT = 1
_HASH_CHUNK_BYTES = 1 << 20


def record_path(output: Path) -> Path:
    """Where the record of the vectors at ``output`` is written: ``OUTPUT.record.json``."""
    output = Path(output)
    return output.with_name(output.name + RECORD_SUFFIX)


def file_sha256(path: Path) -> str:
    """The sha256 of the file's bytes (read in 1 MiB pieces)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_HASH_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_record(output: Path) -> Optional[Dict[str, Any]]:
    """The record beside ``output``, or None when there is none or it is not a JSON object."""
    try:
        with open(record_path(output), encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def write_record(output: Path, record: Dict[str, Any]) -> Path:
    """Writes ``record`` beside ``output`` (complete or not at all: under a temporary name, then renamed)."""
    path = record_path(output)
    with WholeFile(path) as partial:
        partial.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def mismatch(record: Optional[Dict[str, Any]], corpus_sha256: str, options: WordVectorOptions, output: Path) -> str:
    """Why the record does not describe vectors built from this corpus with these options at ``output``;
    empty when it does (the output file is hashed only when everything else agrees)."""
    if record is None:
        return f"no record {record_path(output).name} beside it"
    if record.get("record_format") != RECORD_FORMAT:
        return f"its record has format {record.get('record_format')!r}, not {RECORD_FORMAT}"
    if record.get("corpus_sha256") != corpus_sha256:
        return "the corpus changed (another sha256)"
    if record.get("options") != options.as_dict():
        recorded_options = record.get("options")
        recorded = recorded_options if isinstance(recorded_options, dict) else {}
        changed = sorted(
            name for name, value in options.as_dict().items() if recorded.get(name, object()) != value
        ) or sorted(recorded)
        return f"the options changed ({', '.join(changed)})"
    if not output.is_file():
        return "the vectors file is missing"
    if record.get("output_sha256") != file_sha256(output):
        return "the vectors file changed since it was built (another sha256)"
    return ""
