"""``allennlp coref-score KEY RESPONSE``: CoNLL-2012 coreference scores of a response file.

Scores MUC, B-cubed and CEAF-phi4 with the semantics of the official scorer.pl v8.01
(elmo_tasks/tasks/coref/metric.py) over every document of KEY (a document missing from RESPONSE
counts as having no mentions, as in the scorer). Prints recall, precision and F1 per metric as
the scorer does (percent truncated to two decimals), and as its last line
``muc F bcub F ceafe F avg F``.
"""

import argparse
import json
import logging
import sys
import time
from typing import Dict, List, Tuple

from elmo_tasks.cli_options import CommandError
from elmo_tasks.commands.registration import register_command
from elmo_tasks.counted_nouns import counted
from elmo_tasks.tasks.coref.conll import ConllDocument, read_conll_documents
from elmo_tasks.tasks.coref.metric import (
    METRICS,
    DocumentScores,
    ResponseRejected,
    percent_as_printed,
    score_corpus,
    scores_as_dict,
    summary_line,
)
from elmo_tasks.tasks.data_files import DataFileError

_fail = CommandError("coref-score")

logger = logging.getLogger(__name__)

#: Key clusters x response clusters of one document: CEAF-e aligns them through a dense matrix of
#: that size (8 bytes a pair; scorer.pl's Munkres search does the same). OntoNotes' dev and test
#: documents have at most 71 key clusters; 25 million pairs make a 200 MB matrix.
MAX_CLUSTER_PAIRS = 25_000_000


def _by_name(path: str, role: str) -> Dict[str, ConllDocument]:
    documents: Dict[str, ConllDocument] = {}
    for document in read_conll_documents(path, min_columns=1):
        if document.name in documents:
            logger.warning(
                "%s file %s has document %s twice; the later one is used, as scorer.pl does", role, path, document.name
            )
        documents[document.name] = document
    return documents


def score_files(key_path: str, response_path: str) -> DocumentScores:
    """The summed scores of RESPONSE against KEY, document by document (matched by name)."""
    key = _by_name(key_path, "key")
    response = _by_name(response_path, "response")
    missing = [name for name in key if name not in response]
    if missing:
        logger.warning(
            "%s missing from %s, scored as empty responses (first: %s)",
            counted(len(missing), "key document is", "key documents are"),
            response_path,
            missing[0],
        )
    return score_corpus(
        _within_limit(name, document.clusters, response[name].clusters if name in response else [], response_path)
        for name, document in key.items()
    )


def _within_limit(name: str, key: List, response: List, response_path: str) -> Tuple[List, List]:
    """``(key, response)`` clusters of one document, unless CEAF-e's matrix would be over MAX_CLUSTER_PAIRS."""
    pairs = len(key) * len(response)
    if pairs > MAX_CLUSTER_PAIRS:
        raise ResponseRejected(
            f"{response_path}: document {name}: {len(key):,} key x {len(response):,} response clusters, "
            f"{pairs:,} pairs for CEAF-e's alignment, more than the limit of {MAX_CLUSTER_PAIRS:,} "
            f"({MAX_CLUSTER_PAIRS * 8 // 10**6:,} MB, README 'Input limits'); check that the files do not write "
            "every mention as a cluster of its own, or split the document"
        )
    return key, response


def report(scores: DocumentScores) -> List[str]:
    """Lines like the scorer's totals, then the summary line."""
    lines = []
    for name, title in (("mentions", "mentions"),) + tuple((m, m) for m in METRICS):
        counts = getattr(scores, name)
        lines.append(
            f"{title:<9} Recall: ({counts.recall_num:g} / {counts.recall_den:g}) "
            f"{percent_as_printed(counts.recall):.2f}%"
            f"\tPrecision: ({counts.precision_num:g} / {counts.precision_den:g}) "
            f"{percent_as_printed(counts.precision):.2f}%\tF1: {percent_as_printed(counts.f1):.2f}%"
        )
    lines.append(summary_line(scores))
    return lines


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("key_file", help="the gold CoNLL-2012 file (plain or .gz)")
    parser.add_argument(
        "response_file", help="the system's CoNLL-2012 file: same documents, clusters in the last column"
    )
    parser.add_argument("--output-file", help="also write the scores (percent, unrounded) as json here")


def _run(args: argparse.Namespace) -> None:
    start = time.monotonic()
    try:
        scores = score_files(args.key_file, args.response_file)
    except (DataFileError, ResponseRejected, OSError) as error:
        _fail(str(error))
    if scores.repeated_response_mentions > 2:
        logger.warning(
            "%s repeats %d mentions (dropped, as scorer.pl does). scorer.pl counts repeats across the "
            "metrics that 'scorer.pl all' runs in turn and stops past 10, so 'all' prints no CEAF-e for "
            "this file; these numbers are those of 'scorer.pl muc|bcub|ceafe' run one at a time",
            args.response_file,
            scores.repeated_response_mentions,
        )
    if args.output_file:
        with open(args.output_file, "w", encoding="utf-8") as handle:
            json.dump(scores_as_dict(scores), handle, indent=2)
    lines = report(scores)
    print("\n".join(lines[:-1]))
    print(
        f"coref-score: scored {args.response_file} against {args.key_file} in {time.monotonic() - start:.1f} s",
        file=sys.stderr,
    )
    print(lines[-1])


CorefScore = register_command(
    "coref-score", __doc__, "Score a CoNLL-2012 coreference response against a key file.", _add_arguments, _run
)
