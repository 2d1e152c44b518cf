"""Training word2vec or fastText vectors with gensim on a pre-tokenized corpus, streamed from disk.

gensim reads the corpus once to count the vocabulary and once per epoch. With ``workers=1`` and a
fixed ``seed`` a run is reproducible: gensim 4.4 draws the initial vectors from ``seed`` (not from
Python's string hash, so ``PYTHONHASHSEED`` does not matter; tests/word_vectors checks it in a second
interpreter) and its one thread reads the sentences in file order. Everything not in
:class:`~elmo_tasks.word_vectors.options.WordVectorOptions` is gensim's default: negative sampling
with 5 noise words, downsampling of frequent words above 1e-3, learning rate 0.025 falling linearly
to 0.0001; fastText's subwords are the character n-grams of 3 to 6 characters, hashed into 2 million
buckets.
"""

import dataclasses
import logging
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Set

import numpy

from elmo_tasks.counted_nouns import counted
from elmo_tasks.word_vectors.corpus import TokenizedCorpus
from elmo_tasks.word_vectors.errors import CorpusError
from elmo_tasks.word_vectors.options import WordVectorOptions

# gensim trains on at most this many tokens of a sentence (MAX_WORDS_IN_BATCH of its compiled routines);
# the corpus gives longer lines in pieces of this size instead.
GENSIM_MAX_SENTENCE_TOKENS = 10000


@dataclasses.dataclass
class TrainedVectors:
    """The vocabulary (most frequent first, ties in code-point order), each word's count and vector, and
    what the training read and took."""

    words: List[str]
    counts: List[int]
    vectors: numpy.ndarray
    sentences: int
    tokens: int
    seconds: float


def train_word_vectors(
    corpus_path: Path, options: WordVectorOptions, report: Callable[[str], None] = lambda message: None
) -> TrainedVectors:
    """Trains vectors on ``corpus_path`` (one sentence per line, tokens separated by spaces).

    ``report`` gets a line after the vocabulary count and after each epoch (progress for long runs).
    Raises CorpusError when the corpus cannot be read or no word occurs ``min_count`` times.
    """
    from gensim.models import FastText, Word2Vec

    corpus = TokenizedCorpus(corpus_path, GENSIM_MAX_SENTENCE_TOKENS, lowercase=options.lowercase)
    model_class = Word2Vec if options.algorithm == "word2vec" else FastText
    model = model_class(
        vector_size=options.dim,
        window=options.window,
        min_count=options.min_count,
        sg=1 if options.architecture == "skipgram" else 0,
        epochs=options.epochs,
        seed=options.seed,
        workers=options.workers,
    )
    start = time.perf_counter()
    _build_vocabulary(model, corpus, corpus_path, options.min_count, report)
    _train_in_a_thread(model, corpus, options.epochs, report)
    seconds = time.perf_counter() - start
    keyed = model.wv
    counts = [int(keyed.get_vecattr(word, "count")) for word in keyed.index_to_key]
    order = sorted(range(len(counts)), key=lambda index: (-counts[index], keyed.index_to_key[index]))
    return TrainedVectors(
        words=[keyed.index_to_key[index] for index in order],
        counts=[counts[index] for index in order],
        vectors=numpy.asarray(keyed.vectors[order], dtype=numpy.float32),
        sentences=int(model.corpus_count),
        tokens=int(model.corpus_total_words),
        seconds=seconds,
    )


def _train_in_a_thread(model: Any, corpus: TokenizedCorpus, epochs: int, report: Callable[[str], None]) -> None:
    """``model.train`` over ``corpus``, in a thread of its own while this one waits, so that a stop ends gensim's.

    gensim trains in daemon threads running compiled code; a Ctrl-C or SIGTERM raised in the thread that
    called ``train`` would leave them running into the interpreter's exit, which then crashes
    (a segmentation fault after the command's last line). Here the exception reaches the waiting thread
    instead: the corpus ends at its next sentence, gensim runs out its remaining epochs (now empty)
    and its threads end, and only then does the exception go on.
    """
    stopping = threading.Event()
    failure: Dict[str, BaseException] = {}
    threads_before = set(threading.enumerate())

    def train() -> None:
        try:
            model.train(
                corpus_iterable=_EndsWhenSet(corpus, stopping),
                total_examples=model.corpus_count,
                epochs=epochs,
                callbacks=[_epoch_reporter(epochs, lambda message: None if stopping.is_set() else report(message))],
            )
        except BaseException as error:  # why: re-raised in the waiting thread, whatever it is
            failure["error"] = error

    trainer = threading.Thread(target=train, name="word-vector training", daemon=True)
    trainer.start()
    try:
        while trainer.is_alive():
            trainer.join(timeout=0.2)  # the signal handlers run in this thread between waits
    except BaseException:
        stopping.set()
        gensim_logger = logging.getLogger("gensim")
        level = gensim_logger.level
        gensim_logger.setLevel(logging.ERROR)  # the short epochs' "expected count" warnings say nothing here
        try:
            trainer.join(timeout=_STOP_WAIT_SECONDS)
            _join_threads_started_since(threads_before, _STOP_WAIT_SECONDS)
        finally:
            gensim_logger.setLevel(level)
        raise
    _join_threads_started_since(threads_before, _STOP_WAIT_SECONDS)
    if "error" in failure:
        raise failure["error"]


def _join_threads_started_since(threads_before: Set[threading.Thread], seconds: float) -> None:
    """Waits (``seconds`` at most in all) for the threads started since ``threads_before`` was taken.

    ``model.train`` returns once each of gensim's worker threads has said it is done, a moment before
    those daemon threads have ended; an interpreter that exits in that moment can crash with a
    segmentation fault (seen about once in a few dozen stops of the command).
    """
    deadline = time.monotonic() + seconds
    for thread in set(threading.enumerate()) - threads_before:
        if thread is threading.current_thread():
            continue
        while True:
            try:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
                break
            except RuntimeError:  # started by a gensim thread this instant and not yet running: not joinable yet
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.01)


# How long a stop waits for gensim's threads: they end within one batch (10,000 words) of the corpus ending.
_STOP_WAIT_SECONDS = 30.0


class _EndsWhenSet:
    """``corpus`` read again on each iteration, ending early once ``stopping`` is set."""

    def __init__(self, corpus: Iterable[List[str]], stopping: threading.Event) -> None:
        self.corpus = corpus
        self.stopping = stopping

    def __iter__(self) -> Iterator[List[str]]:
        for sentence in self.corpus:
            if self.stopping.is_set():
                return
            yield sentence


def _build_vocabulary(
    model: Any, corpus: TokenizedCorpus, corpus_path: Path, min_count: int, report: Callable[[str], None]
) -> None:
    """Counts the corpus's words into ``model`` and reports the vocabulary; CorpusError if it is empty."""
    start = time.perf_counter()
    model.build_vocab(corpus_iterable=corpus)
    if len(model.wv) == 0:
        raise CorpusError(
            f"{corpus_path}: no word occurs at least {min_count} times in its "
            f"{counted(model.corpus_total_words, 'token', grouped=True)}; expected more text, or a lower --min-count"
        )
    report(
        f"vocabulary: {counted(len(model.wv), 'word', grouped=True)} seen at least {min_count} times, in "
        f"{counted(model.corpus_count, 'sentence', grouped=True)} of "
        f"{counted(model.corpus_total_words, 'token', grouped=True)} ({time.perf_counter() - start:.1f} s)"
    )


def _epoch_reporter(epochs: int, report: Callable[[str], None]) -> Any:
    """A gensim callback that reports each epoch's end, with the time left at the pace so far."""
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochReport(CallbackAny2Vec):
        def __init__(self) -> None:
            self.done = 0
            self.started = time.perf_counter()

        def on_epoch_end(self, model: Any) -> None:
            self.done += 1
            elapsed = time.perf_counter() - self.started
            left = elapsed / self.done * (epochs - self.done)
            report(f"epoch {self.done}/{epochs} done ({elapsed:.1f} s so far, about {left:.0f} s left)")

    return EpochReport()
