"""The demo's routes, on FastAPI (Starlette underneath, served by uvicorn: see ``server.py``).

Pages: ``/`` (the models), ``/models/NAME`` (a task page), ``/bilm`` (nearest neighbours in
context). API: ``POST /api/NAME/predict`` takes and returns the JSON of one ``allennlp predict``
line of the model's predictor; ``POST /api/bilm/neighbours`` (``bilm_query.py``); ``GET
/api/models``; ``GET /api/health``, answered by the event loop itself, so it stays quick while
models compute. Every API error is ``{"error": "..."}`` (``request_json.py`` lists the
statuses). FastAPI's documentation pages are turned off: they load scripts from a CDN, and
nothing here may be fetched from outside. Static files (one CSS, two small scripts) ship in
``static/``.
"""

import json
import logging
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.telemetry import TelemetryConfig
from starlette.exceptions import HTTPException

from elmo_tasks.demo import pages
from elmo_tasks.demo.bilm_neighbours import BilmNeighbours
from elmo_tasks.demo.bilm_query import EXAMPLE as BILM_EXAMPLE
from elmo_tasks.demo.bilm_query import answer_query
from elmo_tasks.demo.loaded_models import LoadedModel
from elmo_tasks.demo.prediction_workers import MAX_WAITING, ModelRunner
from elmo_tasks.demo.request_json import MAX_REQUEST_BYTES, ApiError, read_json_body

STATIC_DIR = Path(__file__).resolve().parent / "static"
logger = logging.getLogger(__name__)


class Demo:
    """What the routes serve: the models with their runners, and the biLM page's neighbours."""

    def __init__(
        self,
        models: Sequence[LoadedModel],
        neighbours: Optional[BilmNeighbours],
        tokenize: Optional[Callable[[str], List[str]]],
        max_request_bytes: int,
        max_waiting: int,
    ) -> None:
        self.models = list(models)
        self.by_name: Dict[str, LoadedModel] = {model.name: model for model in models}
        self.runners = {m.name: ModelRunner(m.name, m.predictor.predict_json, max_waiting) for m in models}
        self.neighbours = neighbours
        self.bilm_runner = None
        if neighbours is not None and tokenize is not None:
            self.bilm_runner = ModelRunner(
                "biLM", lambda record: answer_query(neighbours, tokenize, record), max_waiting
            )
        self.max_request_bytes = max_request_bytes

    def model(self, name: str) -> LoadedModel:
        if name not in self.by_name:
            raise ApiError(404, f"no model named {name!r}; this demo serves {', '.join(self.by_name) or 'none'}")
        return self.by_name[name]

    def health(self) -> Dict[str, object]:
        waiting = {name: runner.waiting for name, runner in self.runners.items()}
        return {"status": "ok", "models": waiting, "bilm": self.bilm_runner is not None}


def create_app(
    models: Sequence[LoadedModel],
    neighbours: Optional[BilmNeighbours] = None,
    tokenize: Optional[Callable[[str], List[str]]] = None,
    max_request_bytes: int = MAX_REQUEST_BYTES,
    max_waiting: int = MAX_WAITING,
) -> FastAPI:
    """The demo app for loaded ``models`` and, when given, the biLM page's ``neighbours``."""
    demo = Demo(models, neighbours, tokenize, max_request_bytes, max_waiting)
    telemetry: TelemetryConfig = {
        "tracing": False,
        "metrics": False,
        "logs": False,
        "operation_spans": False,
        "auto_configure": False,
    }
    app = FastAPI(title="ELMo demo", docs_url=None, redoc_url=None, openapi_url=None, telemetry=telemetry)
    app.state.demo = demo
    _add_error_handlers(app, demo)
    _add_pages(app, demo)
    _add_api(app, demo)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def _add_pages(app: FastAPI, demo: Demo) -> None:
    has_bilm = demo.bilm_runner is not None

    @app.get("/", response_class=HTMLResponse)
    async def index() -> str:
        return pages.index_page(demo.models, demo.neighbours)

    @app.get("/models/{name}", response_class=HTMLResponse)
    async def model_page(name: str) -> Response:
        if name not in demo.by_name:
            message = f"No model named {name!r} is loaded; the models are on the first page."
            return HTMLResponse(pages.not_found_page(message, demo.models, has_bilm), status_code=404)
        return HTMLResponse(pages.model_page(demo.by_name[name], demo.models, has_bilm))

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return Response(status_code=204)  # no icon; browsers ask for one on every page

    @app.get("/bilm", response_class=HTMLResponse)
    async def bilm_page() -> Response:
        if demo.neighbours is None:
            message = "This demo was started without a biLM page (--no-bilm)."
            return HTMLResponse(pages.not_found_page(message, demo.models, False), status_code=404)
        return HTMLResponse(pages.bilm_page(demo.neighbours, demo.models))


def _add_api(app: FastAPI, demo: Demo) -> None:
    @app.get("/api/health")
    async def health() -> Dict[str, object]:
        return demo.health()

    @app.get("/api/models")
    async def models() -> List[Dict[str, object]]:
        return [model.summary() for model in demo.models]

    @app.post("/api/bilm/neighbours")
    async def neighbours(request: Request) -> JSONResponse:
        if demo.bilm_runner is None:
            raise ApiError(404, "this demo was started without a biLM (--no-bilm)")
        record = await read_json_body(request, demo.max_request_bytes, BILM_EXAMPLE)
        return JSONResponse(await demo.bilm_runner.run(record))

    @app.post("/api/{name}/predict")
    async def predict(name: str, request: Request) -> JSONResponse:
        model = demo.model(name)
        record = await read_json_body(request, demo.max_request_bytes, json.dumps(model.task.example()))
        return JSONResponse(await demo.runners[name].run(record))


def _add_error_handlers(app: FastAPI, demo: Demo) -> None:
    """Every API error as ``{"error": ...}``; pages get an HTML page; no traceback ever reaches a client."""
    has_bilm = demo.bilm_runner is not None

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, error: ApiError) -> JSONResponse:
        return JSONResponse({"error": error.message}, status_code=error.status)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": f"{request.method} {request.url.path}: {error.detail}"}, error.status_code)
        message = f"{request.url.path}: {error.detail}"
        return HTMLResponse(pages.not_found_page(message, demo.models, has_bilm), status_code=error.status_code)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": f"{request.url.path}: {error.errors()}"}, status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        logger.error("%s %s failed: %s: %s", request.method, request.url.path, type(error).__name__, error)
        return JSONResponse({"error": f"the server failed on this request ({type(error).__name__})"}, 500)
