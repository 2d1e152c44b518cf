"""The ``bilm-perplexity`` command: exact forward, backward and mean perplexity of a biLM on a text file.

``allennlp bilm-perplexity`` (elmo_tasks/commands/bilm_perplexity.py) registers these arguments
with AllenNLP; ``elmo-tasks bilm-perplexity`` (elmo_tasks/__main__.py) runs the same arguments and
the same :func:`run` without importing AllenNLP, which starts several seconds sooner. So everything
on this path, the text reading (:mod:`elmo_tasks.bilm.raw_text`) and the scoring
(:mod:`elmo_tasks.bilm.scoring`) included, imports no AllenNLP; spaCy only for its tokenizer, the
default, and not with ``--whitespace-tokenized``. The text is read and tokenized by a child process
while this one imports torch and loads the model (:mod:`elmo_tasks.bilm.reading_child`).
"""

import argparse
import os
import sys
import time
from functools import partial
from typing import Callable, Iterator, List

from elmo_tasks.bilm.raw_text import RawTextSentences, check_reading_settings
from elmo_tasks.bilm.reading_child import ReadingChildError, sentences_read_aside
from elmo_tasks.cli_options import CommandError, add_option, add_thread_options, add_word_cache_option
from elmo_tasks.counted_nouns import counted
from elmo_tasks.freed_memory import FreedMemorySettingError, keep_freed_memory
from elmo_tasks.pretrained import SMALL_BILM_DIR, SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
from elmo_tasks.stopping import stopped_with_one_line
from elmo_tasks.threads import ThreadSettingError, apply_thread_policy, chosen_threads, chosen_workers, usable_cores

_fail = CommandError("bilm-perplexity")
# How the training recipe's reader decodes a line that is not UTF-8 (experiments/bilm_small.jsonnet).
TRAINING_FALLBACK_ENCODING = "cp1252"

DESCRIPTION = """Score every token of TEXT_FILE with a biLM and its exact (full) softmax. The text is
cleaned, tokenized and cut into sentences as the `bilm_raw_text` reader of the training recipe does
(experiments/bilm_small.jsonnet: running text, spaCy's rule-based tokenizer, sentences cut at 50
tokens). Each sentence is scored on its own, wrapped in <S> and </S>: forward predicts every word
and </S>, backward every word and <S>. The last line is
`perplexity forward X backward Y mean Z tokens N` (N: scored tokens per direction; mean:
exp of the mean of both directions' mean log-losses, as `allennlp evaluate` reports ppl_exact)."""


#: ``elmo-tasks`` starts the command without importing torch (elmo_tasks/__main__.py): :func:`run` forks the
#: child that reads the text first, and imports torch while the child reads.
LOADS_TORCH_AT_START = False

#: The command's line in ``allennlp --help``.
SUMMARY = "Exact perplexity of a biLM (default: the shipped one) on a text file."


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The command's arguments, for both front-ends (AllenNLP's subcommand and ``elmo-tasks``'s own)."""
    parser.add_argument("text_file", help="UTF-8 text (a file, a folder of *.txt, or a glob)")
    parser.add_argument("--options-file", help="the biLM's options.json (default: the shipped small biLM)")
    parser.add_argument("--weight-file", help="the biLM's hdf5 weights (default: the shipped small biLM)")
    parser.add_argument(
        "--softmax-file",
        help="the softmax.npz written by `allennlp export-bilm` (default: the one beside --weight-file)",
    )
    parser.add_argument(
        "--vocab-file",
        help="the softmax's vocabulary/ folder or its lm_targets.txt (default: vocabulary/ beside the softmax file)",
    )
    add_option(parser, "--batch-size", type=int, default=64, help="sentences per batch")
    add_word_cache_option(parser)
    add_thread_options(
        parser,
        "processes that score batches side by side, one thread each (default: one per core, or 1 when "
        "--threads or OMP_NUM_THREADS is set); the result is the same for any number",
    )
    add_option(
        parser,
        "--text-format",
        choices=("running", "sentence_per_line"),
        default="running",
        help="how lines become sentences; running is how the training recipe reads its text",
    )
    add_option(
        parser,
        "--max-sentence-length",
        type=int,
        default=50,
        help="longer sentences are cut into pieces, as in training",
    )
    parser.add_argument(
        "--whitespace-tokenized",
        action="store_true",
        help="split on whitespace instead of spaCy (for text already tokenized)",
    )
    parser.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
    return parser


def run(args: argparse.Namespace) -> None:
    """Run the command; errors print one line naming what to fix and exit with status 2, and Ctrl-C or
    SIGTERM one line (:mod:`elmo_tasks.stopping`), from its first line: its imports take a moment."""
    with stopped_with_one_line("bilm-perplexity", "nothing was scored to the end; run the same command again"):
        _score(args)


def _score(args: argparse.Namespace) -> None:
    from elmo_tasks.bilm.errors import BilmError, ScoringError
    from elmo_tasks.bilm.raw_text import TextPathError, TextSettingError
    from elmo_tasks.bilm.softmax_file import SOFTMAX_FILE, VOCABULARY_DIR
    from elmo_tasks.data_file_error import DataFileError

    if args.batch_size < 1:
        _fail("--batch-size must be at least 1")
    if args.word_cache_mb < 0:
        _fail("--word-cache-mb must be 0 (no cache) or more")
    try:
        chosen_threads(args.threads)  # a bad --threads is refused before anything starts
        workers = chosen_workers(args.workers, args.threads, batches=usable_cores())
        keep_freed_memory()  # elmo_tasks.freed_memory: no page faults for each batch's fresh blocks
    except (ThreadSettingError, FreedMemorySettingError) as err:
        _fail(str(err))
    if (args.options_file is None) != (args.weight_file is None):
        _fail("give both --options-file and --weight-file, or neither (for the shipped small biLM)")
    shipped = args.options_file is None
    if shipped:
        args.options_file, args.weight_file = SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
    folder = os.path.dirname(os.path.abspath(args.weight_file))
    softmax_file = args.softmax_file or os.path.join(folder, SOFTMAX_FILE)
    vocab_file = args.vocab_file or os.path.join(os.path.dirname(os.path.abspath(softmax_file)), VOCABULARY_DIR)
    if shipped and args.softmax_file is None and not os.path.isfile(softmax_file):
        _fail(
            f"the shipped biLM folder {SMALL_BILM_DIR} has no {SOFTMAX_FILE} yet (only options.json and "
            "weights.hdf5), so its perplexity cannot be computed. Pass a biLM exported with its softmax "
            "(`allennlp export-bilm RUN/model.tar.gz OUT` writes options.json, weights.hdf5, softmax.npz and "
            "vocabulary/): --options-file OUT/options.json --weight-file OUT/weights.hdf5 "
            "[--softmax-file OUT/softmax.npz --vocab-file OUT/vocabulary]"
        )
    if not shipped and args.softmax_file is None and not os.path.isfile(softmax_file):
        _fail(
            f"no {SOFTMAX_FILE} beside {args.weight_file}; pass --softmax-file (and --vocab-file), "
            "as written by `allennlp export-bilm` for a language model"
        )
    try:
        check_reading_settings(args.text_format, args.max_sentence_length, TRAINING_FALLBACK_ENCODING)
        # a child reads and tokenizes the text from here on, while torch is imported and the model loaded
        with sentences_read_aside(partial(_read_sentences, args)) as sentences:
            apply_thread_policy(args.threads)  # imports torch
            from elmo_tasks.bilm.scoring import ExportedLanguageModel

            model = ExportedLanguageModel(args.options_file, args.weight_file, softmax_file, vocab_file)
            started, cpu_started = time.perf_counter(), time.process_time()
            bar = _progress_bar(args.text_file, not args.no_progress)
            result = model.score(
                sentences,
                batch_size=args.batch_size,
                progress=bar,
                workers=workers,
                word_cache_bytes=args.word_cache_mb * 2**20,
            )
            if bar is not None:
                bar.close()
    # data errors name the file and line; path and setting errors are AllenNLP's ConfigurationError in a config
    except (ScoringError, BilmError, TextPathError, TextSettingError, DataFileError, ReadingChildError) as err:
        _fail(str(err))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    print(
        f"bilm-perplexity: scored {counted(result.sentences, 'sentence', grouped=True)} of {args.text_file} "
        f"({counted(result.tokens, 'token', grouped=True)} per direction; "
        f"{counted(result.unknown, 'word', grouped=True)} outside the softmax's vocabulary of "
        f"{model.vocabulary_size:,} tokens, padding not counted, scored as unknown) "
        f"in {elapsed:.1f} s ({cpu:.1f} CPU s), {result.tokens / elapsed:.0f} tokens/s",
        file=sys.stderr,
    )
    print(result.line())


def _read_sentences(args: argparse.Namespace) -> Iterator[List[str]]:
    """The sentences of the text as the training recipe's ``bilm_raw_text`` reader reads them (its settings in
    experiments/bilm_small.jsonnet), with plain strings for tokens. Runs in the reading child (spaCy's import too)."""
    tokenize: Callable[[str], List[str]]
    if args.whitespace_tokenized:
        tokenize = str.split  # what AllenNLP's WhitespaceTokenizer does
    else:
        from elmo_tasks.bilm.embed import spacy_words  # the reader's default tokenizer, without AllenNLP

        tokenize = spacy_words()
    reader = RawTextSentences(
        tokenize,
        str,
        text_format=args.text_format,
        max_sentence_length=args.max_sentence_length,
        drop_wikiextractor_markup=True,
        unescape_html=True,
        fallback_encoding=TRAINING_FALLBACK_ENCODING,
    )
    return reader.sentences(args.text_file)


def _progress_bar(path: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(desc=f"scoring {os.path.basename(path)}", unit=" tokens", unit_scale=True, file=sys.stderr)
