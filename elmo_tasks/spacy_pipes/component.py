"""What every component shares: ``__call__`` and ``pipe`` over batches, the error handler, and pickling.

A component turns each Doc into its model's input (:meth:`DocPipe.read`, which also checks the size
limits), runs the inputs of a whole ``nlp.pipe`` batch through the model in length-sorted passes
(:meth:`DocPipe.annotate`), and writes the results onto the Docs. A Doc over a limit goes to the
error handler (``nlp.set_error_handler``; by default its one-line error is raised) before any work,
and the rest of its batch goes on.

Its settings are the factory's config, so ``nlp.to_disk`` keeps the model reference (not the model)
and ``spacy.load`` loads the archive again from it. The same settings rebuild the component where it
is unpickled (``nlp.pipe(n_process=...)`` where processes are spawned, not forked); a forked worker
runs its torch on one thread, as the project's worker processes do (elmo_tasks/threads.py).
"""

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, Iterable, Iterator, List, Optional, Tuple, TypeVar

from spacy.tokens import Doc
from spacy.util import minibatch, raise_error

if TYPE_CHECKING:
    from allennlp.models.archival import Archive
    from allennlp.predictors import Predictor

Input = TypeVar("Input")

#: Docs per batch when ``pipe`` is called without one (``nlp.pipe`` passes its own).
DEFAULT_BATCH_SIZE = 32


class DocPipe(Generic[Input]):
    """A component; subclasses set ``factory`` and implement :meth:`read` and :meth:`annotate`."""

    #: The registered factory name, e.g. ``"elmo_ner"``, which messages name.
    factory = ""

    def __init__(self, name: str, settings: Dict[str, Any]) -> None:
        self.name = name
        #: The factory's config less ``nlp`` and ``name``: what rebuilds the component.
        self.settings = dict(settings)
        self._error_handler: Callable[..., Any] = raise_error
        self._process = os.getpid()

    def load_sentence_predictor(
        self, model: Optional[str], predictor_name: str, max_sentence_tokens: int, cuda_device: int
    ) -> Tuple["Predictor", "Archive"]:
        """The task's predictor on the checked archive, limited to ``max_sentence_tokens`` a sentence (kept
        as ``self.max_sentence_tokens``, which :meth:`read` checks), and the archive."""
        from elmo_tasks.spacy_pipes.archives import task_predictor
        from elmo_tasks.spacy_pipes.limits import positive_setting

        self.max_sentence_tokens = positive_setting(max_sentence_tokens, "max_sentence_tokens", self.factory)
        return task_predictor(
            model, self.factory, predictor_name, cuda_device, max_sentence_tokens=self.max_sentence_tokens
        )

    def read(self, doc: Doc) -> Input:
        """The model's input from ``doc``, its size checked (DocTooLong)."""
        raise NotImplementedError

    def annotate(self, batch: List[Tuple[Doc, Input]]) -> None:
        """Runs the model on every input of ``batch`` and writes the results onto the Docs."""
        raise NotImplementedError

    def __call__(self, doc: Doc) -> Doc:
        self._one_thread_in_a_forked_worker()
        self.annotate([(doc, self.read(doc))])
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[Doc]:
        """The Docs of ``stream`` in order, annotated a batch of ``batch_size`` at a time."""
        self._one_thread_in_a_forked_worker()
        for docs in minibatch(stream, batch_size):
            batch: List[Tuple[Doc, Input]] = []
            for doc in docs:
                try:
                    batch.append((doc, self.read(doc)))
                except Exception as error:  # noqa: BLE001  (spaCy's error handler decides: raise or skip the Doc)
                    self._error_handler(self.name, self, [doc], error)
            try:
                self.annotate(batch)
            except Exception as error:  # noqa: BLE001  (as above, for the whole batch)
                self._error_handler(self.name, self, [doc for doc, _ in batch], error)
                continue
            yield from (doc for doc, _ in batch)

    def set_error_handler(self, error_handler: Callable[..., Any]) -> None:
        """What ``nlp.set_error_handler`` calls: ``error_handler(name, component, docs, error)`` gets the
        Docs that failed (spaCy's ``raise_error``, the default, raises; ``ignore_error`` drops them)."""
        self._error_handler = error_handler

    def get_error_handler(self) -> Callable[..., Any]:
        return self._error_handler

    def __reduce__(self) -> Tuple[Callable[..., "DocPipe[Any]"], Tuple[Any, ...]]:
        return _rebuilt, (type(self), self.name, self.settings)

    def _one_thread_in_a_forked_worker(self) -> None:
        """In a process forked from the one that loaded the model (``nlp.pipe(n_process=...)``): one torch
        thread, so that workers side by side do not oversubscribe the cores."""
        if os.getpid() != self._process:
            import torch

            torch.set_num_threads(1)
            self._process = os.getpid()


class SentenceReaderPipe(DocPipe[Input]):
    """A component whose model reads its archive's own reader's instances of the Doc's words (``elmo_ner``,
    ``elmo_sst``); its settings: the model, the longest sentence taken and the device."""

    #: ``max_sentence_tokens``'s default: the predictor's limit on a sentence's tokens.
    default_max_sentence_tokens = 0

    def __init__(
        self, name: str, model: Optional[str], max_sentence_tokens: Optional[int] = None, cuda_device: int = -1
    ) -> None:
        if max_sentence_tokens is None:
            max_sentence_tokens = self.default_max_sentence_tokens
        super().__init__(name, {"model": model, "max_sentence_tokens": max_sentence_tokens, "cuda_device": cuda_device})
        self.predictor, archive = self.load_sentence_predictor(
            model, self.predictor_name(), max_sentence_tokens, cuda_device
        )
        self.reader = archive.validation_dataset_reader

    @staticmethod
    def predictor_name() -> str:
        """The task's predictor (imported when a component is made: spaCy imports this module early)."""
        raise NotImplementedError


def _rebuilt(kind: Callable[..., "DocPipe[Any]"], name: str, settings: Dict[str, Any]) -> "DocPipe[Any]":
    """The component built again from its settings (it loads its model again)."""
    return kind(name, **settings)
