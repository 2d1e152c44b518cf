"""Stand-in models for the demo's concurrency tests: predictors that block, count, or fail on demand."""

import threading
import time
from typing import Any, Dict, List

from elmo_tasks.demo.app import create_app
from elmo_tasks.demo.archive_info import ArchiveScores
from elmo_tasks.demo.loaded_models import LoadedModel
from elmo_tasks.demo.server import DemoServer
from elmo_tasks.demo.task_pages import TASK_BY_PREDICTOR


class StubPredictor:
    """``predict_json`` echoes its input after ``release`` is set; ``{"fail": true}`` raises instead.

    It records how many calls ran at once (``most_at_once``) and signals ``entered`` on each call.
    """

    def __init__(self, released: bool = False, pause: float = 0.0) -> None:
        self.release = threading.Event()
        if released:
            self.release.set()
        self.entered = threading.Event()
        self.pause = pause
        self.running = 0
        self.most_at_once = 0
        self._count_lock = threading.Lock()

    def predict_json(self, record: Dict[str, Any]) -> Dict[str, Any]:
        with self._count_lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        self.entered.set()
        try:
            if not self.release.wait(timeout=30):
                raise TimeoutError("the test never released the stub")
            time.sleep(self.pause)
            if record.get("fail"):
                raise RuntimeError("the stub model broke\nTraceback (most recent call last): not for clients")
            return {"echo": record}
        finally:
            with self._count_lock:
                self.running -= 1


def stub_model(name: str, predictor: StubPredictor) -> LoadedModel:
    """A served model (as the NER task, for its page) whose predictor is ``predictor``."""
    return LoadedModel(name, TASK_BY_PREDICTOR["ner"], "stub.tar.gz", "stub", predictor, [], ArchiveScores(None), [])  # type: ignore


def serve_stubs(predictors: Dict[str, StubPredictor], **options: Any) -> DemoServer:
    """A started demo server for the stub models (no biLM page); stop it when done."""
    models: List[LoadedModel] = [stub_model(name, predictor) for name, predictor in predictors.items()]
    return DemoServer("127.0.0.1", 0).start(create_app(models, **options))
