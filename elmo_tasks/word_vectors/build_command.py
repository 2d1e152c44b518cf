"""The ``build-word-vectors`` command: GloVe-format word vectors trained on a corpus of our own.

``allennlp build-word-vectors`` (elmo_tasks/commands/build_word_vectors.py) registers these arguments
with AllenNLP; ``python -m elmo_tasks.word_vectors`` runs the same command without importing AllenNLP.
Progress (the vocabulary count, then a line per epoch) goes to stderr, the one-line summary to stdout.
"""

import argparse
import contextlib
import dataclasses
import logging
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from elmo_tasks.cli_options import CommandError, add_option, option_dest
from elmo_tasks.counted_nouns import counted
from elmo_tasks.stopping import output_files_outcome, stopped_with_one_line
from elmo_tasks.word_vectors.build import build_word_vectors
from elmo_tasks.word_vectors.errors import WordVectorsError
from elmo_tasks.word_vectors.options import ALGORITHMS, ARCHITECTURES, WordVectorOptions
from elmo_tasks.word_vectors.record import RECORD_SUFFIX

NAME = "build-word-vectors"
DESCRIPTION = f"""Train word2vec or fastText vectors (gensim) on a pre-tokenized corpus (UTF-8, one sentence
per line, tokens separated by single spaces) and write them in the GloVe text format (a word and its values
per line, most frequent word first), which experiments take in place of the published GloVe files. A record,
OUTPUT{RECORD_SUFFIX}, is written beside the vectors; when it matches the corpus (sha256) and the options,
the vectors are reused instead of trained again."""

_DEFAULTS = WordVectorOptions()


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("corpus", help="the training text: one sentence per line, tokens separated by spaces")
    parser.add_argument("output", help="the vectors file to write (ending in .gz: gzip-compressed)")
    _add_build_option(parser, "--algorithm", choices=ALGORITHMS, help="what to train")
    _add_build_option(
        parser,
        "--architecture",
        choices=ARCHITECTURES,
        help="skipgram predicts the context from the word; cbow the word from its context (faster)",
    )
    _add_build_option(parser, "--dim", type=int, help="values per vector")
    _add_build_option(parser, "--window", type=int, help="context words on each side")
    _add_build_option(parser, "--min-count", type=int, help="words seen fewer times get no vector")
    _add_build_option(parser, "--epochs", type=int, help="passes over the corpus")
    _add_build_option(parser, "--seed", type=int, help="random seed")
    _add_build_option(
        parser,
        "--workers",
        type=int,
        help="training threads; with 1 the same options and corpus give the same file, with more the vectors "
        "differ from run to run (the threads' updates interleave)",
    )
    parser.add_argument(
        "--lowercase",
        action="store_true",
        help="lowercase every token first (for models whose vocabulary is lowercased)",
    )
    _add_build_option(parser, "--decimals", type=int, help="digits after the point of each value")
    parser.add_argument("--force", action="store_true", help="train again even when the record matches")
    return parser


def _add_build_option(parser: argparse.ArgumentParser, flag: str, help: str, **kwargs: Any) -> None:
    """An option that sets the WordVectorOptions field of its name (see options_from_args), with the
    field's default as its own."""
    add_option(parser, flag, default=getattr(_DEFAULTS, option_dest([flag])), help=help, **kwargs)


def options_from_args(args: argparse.Namespace) -> WordVectorOptions:
    """The build's options from parsed arguments (raises WordVectorsError for a value out of range)."""
    values: Dict[str, Any] = {field.name: getattr(args, field.name) for field in dataclasses.fields(WordVectorOptions)}
    return WordVectorOptions(**values)


def run(args: argparse.Namespace) -> None:
    """Run the command; a corpus, output or option that cannot be used prints one line and exits with status 2,
    and Ctrl-C or SIGTERM one line saying whether the output is complete (:mod:`elmo_tasks.stopping`)."""
    try:
        options = options_from_args(args)
        with stopped_with_one_line(NAME, output_files_outcome(args.output)), _gensim_warnings_only():
            record = build_word_vectors(
                Path(args.corpus), Path(args.output), options, report=_progress, force=args.force
            )
    except WordVectorsError as error:
        CommandError(NAME)(error)
    vectors = f"{counted(record['vocabulary_size'], 'vector', grouped=True)} of {record['dim']} values"
    if record["reused"]:
        print(
            f"{NAME}: reused {args.output} ({vectors}, built {record['built_at']}): its record matches the corpus "
            "and options (--force trains again)"
        )
    else:
        print(
            f"{NAME}: wrote {vectors} to {args.output} ({options.algorithm} {options.architecture}, "
            f"{counted(options.epochs, 'epoch')} over {counted(record['corpus_tokens'], 'token', grouped=True)}, "
            f"{record['training_seconds']:.1f} s training) and its record {args.output}{RECORD_SUFFIX}"
        )


def _progress(message: str) -> None:
    print(f"{NAME}: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _gensim_warnings_only() -> Iterator[None]:
    """gensim logs a progress line a second at INFO (AllenNLP's command line shows INFO); ours are enough."""
    gensim_logger = logging.getLogger("gensim")
    level = gensim_logger.level
    gensim_logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        gensim_logger.setLevel(level)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m elmo_tasks.word_vectors", description=DESCRIPTION)
    run(add_arguments(parser).parse_args(argv))
