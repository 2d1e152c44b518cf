"""Static word vectors that a budget's runs start from, built by the harness before the first run that reads
them and recorded with it (the build command, the corpus's sha256 and the vectors' sha256), as the fine-tuned
biLM is.

The paper's baselines start from pretrained GloVe vectors. A budget with a :class:`WordVectorRecipe` trains
such vectors on a text of its own (the biLM's corpus) with ``allennlp build-word-vectors``, sized and cased
for each task as the task's experiment sizes and cases its word embedding, and hands their path to every run
of the task through ``ELMO_TASKS_WORD_VECTORS`` (the experiments' one switch; docs/WORD_VECTORS.md).
"""

import dataclasses
import functools
import hashlib
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

from elmo_tasks.build_lock import build_lock
from elmo_tasks.config_defaults import DEFAULTS
from elmo_tasks.config_search import dicts_with
from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.allennlp_runs import ROOT, RunFailed, run_subprocess, say
from elmo_tasks.reproduction.specs import Overrides, WordVectorRecipe
from elmo_tasks.reproduction.task_table import TASKS

VECTORS_VARIABLE = "ELMO_TASKS_WORD_VECTORS"
# Stands for the vectors file while a config is resolved to find the size and case it wants.
_PLACEHOLDER = "<the word vectors>"
CORPUS_COMMAND = "python scripts/build_bilm_corpus.py $ELMO_TASKS_SHARED_DATA/lm runs/bilm_corpus"


def vectors_settings(recipe: WordVectorRecipe, task: str, data: str, overrides: Overrides) -> Dict[str, Any]:
    """What a run's settings hold about its vectors: the corpus, the file and every build option (the
    vectors' size and case are the task's, for ``data`` and the budget's ``overrides``). Runs with equal
    settings read equal vectors while the corpus is the one the recipe names (its sha256 is in the records
    of the runs that read it)."""
    dim, lowercase = word_embedding_shape(task, data, json.dumps(dict(overrides), sort_keys=True))
    options = dataclasses.replace(recipe.options, dim=dim, lowercase=lowercase).as_dict()
    case = "lowercased" if lowercase else "cased"
    # The options' digest in the name: recipes that differ in any option never overwrite each other's file.
    digest = hashlib.sha256(json.dumps([recipe.corpus, options], sort_keys=True).encode("utf-8")).hexdigest()[:8]
    name = f"{Path(recipe.corpus).parent.name}_{options['algorithm']}_{dim}d_{case}_{digest}.txt"
    return {"corpus": recipe.corpus, "file": str(Path(recipe.directory) / name), "options": options}


@functools.cache
def word_embedding_shape(task: str, data: str, overrides: str = "{}") -> Tuple[int, bool]:
    """The size of the task's word embedding when it reads vectors, and whether its reader lowercases the
    tokens then: what the vectors must be, read from the baseline experiment resolved for ``data`` with
    ``overrides`` (a JSON object: a budget may resize the embedding)."""
    env = {VECTORS_VARIABLE: _PLACEHOLDER}
    config = configs.resolved_config(TASKS[task].configs["baseline"], data, json.loads(overrides), env)
    dims = {
        int(d["embedding_dim"])
        for d in dicts_with(config, "pretrained_file")
        if d["pretrained_file"] == _PLACEHOLDER and "embedding_dim" in d
    }
    cases = {
        indexers["tokens"].get("lowercase_tokens", False)
        for indexers in (d["token_indexers"] for d in dicts_with(config, "token_indexers"))
        if isinstance(indexers, dict) and isinstance(indexers.get("tokens"), dict)
    }
    if len(dims) != 1 or len(cases) != 1:
        raise RunFailed(
            f"{TASKS[task].configs['baseline']} does not give one word-embedding size (found {sorted(map(str, dims))}) "
            f"and one case for its `tokens` indexer (found {sorted(cases)}) when {VECTORS_VARIABLE} is set"
        )
    return dims.pop(), bool(cases.pop())


def prepare_word_vectors(settings: Dict[str, Any]) -> Dict[str, Any]:
    """Builds the vectors that ``settings`` (from :func:`vectors_settings`) describe, or reuses them when
    their record matches the corpus and options (or another process is building them: it waits, then reuses
    them); returns what the runs' records keep about them."""
    from elmo_tasks.word_vectors import WordVectorOptions, WordVectorsError, build_word_vectors

    corpus, output = _absolute(settings["corpus"]), _absolute(settings["file"])
    if not corpus.exists():
        prepare_corpus(corpus)
    options = WordVectorOptions.from_dict(settings["options"])
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        built = build_word_vectors(corpus, output, options, report=say)
    except WordVectorsError as error:
        raise RunFailed(f"building the word vectors {output} failed: {error}") from error
    say(f"{settings['file']}: {'reused' if built['reused'] else 'built'} ({built['vocabulary_size']} words)")
    kept = ("corpus_sha256", "output_sha256", "vocabulary_size", "corpus_tokens", "training_seconds", "built_at")
    return {"command": options.command_line(settings["corpus"], settings["file"]), **{k: built[k] for k in kept}}


def prepare_corpus(corpus: Path) -> None:
    """Builds the biLM's text that the vectors are trained on, ``corpus`` (a ``train.txt``), with
    scripts/build_bilm_corpus.py from the data folder's ``lm/`` (docs/DATA.md), once: another process
    building it is waited for. The script writes its folder whole or not at all, so a build that was
    stopped leaves no corpus to mistake for a finished one, and it is deterministic (its sentences
    sorted, then shuffled with a fixed seed), so every build from the same files gives the corpus
    whose sha256 the records keep."""
    shared_data = _absolute(os.environ.get("ELMO_TASKS_SHARED_DATA", DEFAULTS["ELMO_TASKS_SHARED_DATA"]))
    lm_data = shared_data / "lm"
    if corpus.name != "train.txt":  # not a folder the script writes: the user's own text
        raise RunFailed(f"the word vectors' corpus {corpus} is missing")
    if not lm_data.is_dir():
        raise RunFailed(
            f"the word vectors' corpus {corpus} is missing, and so is the biLM's text it is built from, {lm_data} "
            f"(the lm/ folder of docs/DATA.md; ELMO_TASKS_SHARED_DATA names the data folder); with it there, "
            f"the harness builds the corpus itself, or build it first: {CORPUS_COMMAND}"
        )
    with build_lock(corpus.parent.parent / f".{corpus.parent.name}.lock", f"the corpus {corpus}", report=say):
        if corpus.exists():
            return
        command = [sys.executable, str(ROOT / "scripts" / "build_bilm_corpus.py"), str(lm_data), str(corpus.parent)]
        log = corpus.parent.with_name(f"{corpus.parent.name}.log")
        say(f"building the word vectors' corpus (a few minutes; its log: {log}): {shlex.join(command)}")
        with open(log, "w", encoding="utf-8") as output:  # stopped with the harness, as its allennlp commands
            returncode = run_subprocess(command, dict(os.environ), output)
        lines = log.read_text(encoding="utf-8").strip().splitlines() or [""]
        if returncode != 0 or not corpus.exists():
            raise RunFailed(f"building the word vectors' corpus {corpus} failed (exit {returncode}): see {log}")
        say(lines[-1])


def _absolute(path: str) -> Path:
    return Path(path) if Path(path).is_absolute() else ROOT / path


def describe(records: List[Dict[str, Any]]) -> str:
    """The word vectors a group of runs read, as Table 1's column says them: ``none``, ours (algorithm,
    size, case) or the file's name (e.g. the paper's GloVe); ours read in more than one build (files of
    other bytes from the same corpus and options) say how many."""
    described = ", ".join(sorted({_description(record) for record in records}))
    builds = {(record.get("word_vectors_built") or {}).get("output_sha256") for record in records} - {None}
    return described + (f" ({len(builds)} builds)" if len(builds) > 1 else "")


def _description(record: Dict[str, Any]) -> str:
    settings = record.get("word_vectors")
    if settings:
        options = settings["options"]
        case = "lowercased" if options["lowercase"] else "cased"
        return f"ours: {options['algorithm']} {options['dim']}-d {case}"
    file = record.get("env", {}).get(VECTORS_VARIABLE, "")
    return Path(file).name if file else "none"
