"""The ``elmo-embed`` command: ELMo vectors for a file of sentences, written to hdf5.

``allennlp elmo-embed`` (elmo_tasks/commands/elmo_embed.py) registers these arguments with
AllenNLP; ``elmo-tasks elmo-embed`` (elmo_tasks/__main__.py) and ``python -m elmo_tasks.bilm.embed``
run the same command without importing AllenNLP, which starts several seconds sooner. Nothing on
this path imports AllenNLP; spaCy only for ``--tokenize``.

Order of work, so that nothing is lost or destroyed: the arguments are checked, the input is
refused if it is the output file, the whole input is checked (every bad line reported at once),
the GPU is checked, and only then is the model loaded and the output written (under a temporary name,
renamed into place when complete).
"""

import argparse
import math
import sys
import time
from typing import Callable, List, Optional

from elmo_tasks.bilm.errors import BilmError
from elmo_tasks.bilm.sentence_file import (
    DEFAULT_MAX_TOKENS,
    check_sentence_file,
    refuse_same_file,
)
from elmo_tasks.cli_options import add_option, add_thread_options, add_word_cache_option
from elmo_tasks.command_start import start_process
from elmo_tasks.counted_nouns import counted
from elmo_tasks.freed_memory import FreedMemorySettingError, keep_freed_memory
from elmo_tasks.start_up_stops import command_starts, stopped_while_starting
from elmo_tasks.stopping import output_files_outcome, stopped_with_one_line
from elmo_tasks.threads import ThreadSettingError, apply_thread_policy, chosen_workers

#: The program's name run as a module (its usage line and its line when stopped while starting).
PROG = "python -m elmo_tasks.bilm.embed"

# Line numbers of skipped empty lines the summary shows (all of them are in the output file).
SHOWN_SKIPPED_LINES = 10

DESCRIPTION = """Embed a file with one sentence per line. The hdf5 output has one dataset per
line, named by its 0-based line number, plus 'sentence_to_index' (json: sentence -> line) and,
with --skip-empty-lines, 'skipped_empty_lines' (their 0-based line numbers). The output file is
replaced only when the whole input has been embedded."""

#: The command's line in ``allennlp --help``.
SUMMARY = "Embed a text file with ELMo (hdf5 output)."


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("input_file", help="UTF-8 text, one sentence per line")
    parser.add_argument("output_file", help="the hdf5 file to write (must not be the input file)")
    parser.add_argument("--options-file", help="the biLM's options.json (default: the shipped small biLM)")
    parser.add_argument("--weight-file", help="the biLM's hdf5 weights (default: the shipped small biLM)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--all",
        action="store_const",
        dest="mode",
        const="all",
        help="store all layers: (L+1, tokens, dim) per sentence (the default)",
    )
    what.add_argument("--top", action="store_const", dest="mode", const="top", help="store the top layer only")
    what.add_argument("--average", action="store_const", dest="mode", const="average", help="store the layer average")
    what.add_argument("--mix", type=_weights, metavar="W0,W1,...", help="store sum_j w_j * layer_j with these weights")
    parser.add_argument(
        "--tokenize",
        action="store_true",
        help="tokenize with spaCy's rule-based English tokenizer instead of splitting on whitespace",
    )
    parser.add_argument(
        "--skip-empty-lines",
        action="store_true",
        help="leave empty lines out instead of stopping; "
        "every other line keeps its 0-based line number as its name, the skipped ones are listed (0-based) in "
        "'skipped_empty_lines'",
    )
    add_option(
        parser,
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help="refuse lines of more whitespace-separated tokens than this: such a line is rarely one sentence",
    )
    add_option(parser, "--batch-size", type=int, default=64, help="sentences per batch")
    add_word_cache_option(parser)
    add_option(parser, "--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU")
    add_thread_options(
        parser,
        "processes that embed batches side by side, one thread each (default: one per core, or 1 when "
        "--threads or OMP_NUM_THREADS is set, with --stateful, or on a GPU); the output is the same for any number",
    )
    parser.add_argument(
        "--stateful",
        action="store_true",
        help="carry LSTM states like the original: keep file "
        "order, row r of each batch continues row r of the previous batch",
    )
    parser.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
    parser.set_defaults(mode=None)
    return parser


def _weights(text: str) -> List[float]:
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--mix takes comma-separated numbers, got {text!r}") from None


def run(args: argparse.Namespace) -> None:
    """Run the command; errors print one line naming what to fix and exit with status 2, and Ctrl-C or
    SIGTERM one line saying whether the output is complete (:mod:`elmo_tasks.stopping`)."""
    try:
        with stopped_with_one_line("elmo-embed", output_files_outcome(args.output_file)):
            _embed(args)
    except BilmError as err:
        print(f"elmo-embed: error: {err}", file=sys.stderr)
        sys.exit(2)


def _embed(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    if args.batch_size < 1:
        raise BilmError("--batch-size must be at least 1")
    if args.word_cache_mb < 0:
        raise BilmError("--word-cache-mb must be 0 (no cache) or more")
    if (args.options_file is None) != (args.weight_file is None):
        raise BilmError("give both --options-file and --weight-file, or neither (for the shipped small biLM)")
    refuse_same_file(args.input_file, args.output_file)
    check = check_sentence_file(args.input_file, max_tokens=args.max_tokens)
    check.raise_for_problems(args.skip_empty_lines)

    import torch

    from elmo_tasks.bilm.file_embedder import OutputMode, embed_file
    from elmo_tasks.bilm.weights import load_bilm
    from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE

    if args.cuda_device >= 0 and not torch.cuda.is_available():
        raise BilmError(
            f"--cuda-device {args.cuda_device}: no GPU is available to torch here; use --cuda-device -1 (the CPU)"
        )
    if args.cuda_device >= torch.cuda.device_count() > 0:
        raise BilmError(
            f"--cuda-device {args.cuda_device}: there are only {torch.cuda.device_count()} GPUs (ids from 0)"
        )

    workers = _threads_and_workers(args, check.num_lines - len(check.empty_lines))
    options_file, weight_file = args.options_file, args.weight_file
    if options_file is None:
        options_file, weight_file = SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
    mode = OutputMode("mix", args.mix) if args.mix is not None else OutputMode(args.mode or "all")
    device = torch.device("cpu" if args.cuda_device < 0 else f"cuda:{args.cuda_device}")
    model = load_bilm(options_file, weight_file, stateful=args.stateful).to(device)
    result = embed_file(
        model,
        args.input_file,
        args.output_file,
        mode,
        batch_size=args.batch_size,
        device=device,
        tokenize=spacy_words() if args.tokenize else None,
        progress=not args.no_progress,
        skip_empty_lines=args.skip_empty_lines,
        workers=workers,
        word_cache_bytes=args.word_cache_mb * 2**20,
    )
    seconds = time.perf_counter() - start
    skipped = skipped_lines_note(result.skipped_empty_lines) if args.skip_empty_lines else ""
    print(
        f"elmo-embed: wrote {counted(result.sentences, 'sentence', grouped=True)} "
        f"({counted(result.tokens, 'token', grouped=True)}) to {args.output_file} in {seconds:.1f} s{skipped}",
        file=sys.stderr,
    )


def skipped_lines_note(skipped: List[int]) -> str:
    """The summary's note on the empty lines left out (0-based indices, as the datasets are named): their
    line numbers 1-based, as in error messages and editors, and where the file lists them 0-based."""
    if not skipped:
        return "; skipped 0 empty lines"
    shown = ", ".join(str(index + 1) for index in skipped[:SHOWN_SKIPPED_LINES])
    more = ", ..." if len(skipped) > SHOWN_SKIPPED_LINES else ""
    return (
        f"; skipped {counted(len(skipped), 'empty line')} ({'line' if len(skipped) == 1 else 'lines'} "
        f"{shown}{more}; 'skipped_empty_lines' lists {'it' if len(skipped) == 1 else 'them'} 0-based, "
        "as the datasets are named)"
    )


def _threads_and_workers(args: argparse.Namespace, sentences: int) -> int:
    """Set torch's threads by the thread policy (:mod:`elmo_tasks.threads`) and keep freed memory for the next
    batch (:mod:`elmo_tasks.freed_memory`); the worker processes to use."""
    try:
        apply_thread_policy(args.threads)
        workers = chosen_workers(args.workers, args.threads, math.ceil(sentences / args.batch_size))
        keep_freed_memory()  # elmo_tasks.freed_memory: no page faults for each batch's fresh blocks
    except (ThreadSettingError, FreedMemorySettingError) as err:
        raise BilmError(str(err)) from None
    if args.workers is None and (args.stateful or args.cuda_device >= 0):
        return 1  # a stateful biLM carries its rows from batch to batch; a GPU is one device
    return workers


def spacy_words() -> Callable[[str], List[str]]:
    """spaCy's rule-based English tokenizer (``spacy.blank("en")``, no model download), spaces dropped."""
    import spacy

    nlp = spacy.blank("en")
    return lambda text: [token.text for token in nlp(text) if not token.is_space]


def main(argv: Optional[List[str]] = None) -> None:
    """``python -m elmo_tasks.bilm.embed``, started as ``elmo-tasks elmo-embed`` is: a stop before the
    command runs is one line (:mod:`elmo_tasks.start_up_stops`). The package and this module import no
    torch, so the handlers are in place a few milliseconds after Python starts; torch is imported under
    them, by :func:`~elmo_tasks.command_start.start_process`."""
    with stopped_while_starting(PROG):
        parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
        args = add_arguments(parser).parse_args(argv)
        start_process()
        command_starts()
        run(args)


if __name__ == "__main__":
    main()
