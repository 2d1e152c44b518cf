"""``allennlp elmo-demo ARCHIVE [ARCHIVE ...]`` (also ``python -m elmo_tasks.demo``): the demo server.

The command checks every archive (path, task, page name) and binds its port before loading
anything, so mistakes cost seconds; then it loads each archive with its task's predictor and the
biLM page's biLM, and serves until Ctrl-C. Only this module is imported when ``allennlp`` starts
(to register the command): FastAPI, uvicorn and the models are imported when the command runs.
"""

import argparse
import os
import sys
import time
from typing import List

from allennlp.commands.subcommand import Subcommand

from elmo_tasks.cli_options import CommandError, add_command, add_option
from elmo_tasks.command_start import with_command_start
from elmo_tasks.stopping import stopped_with_one_line

DESCRIPTION = """Serve task models and the biLM in a web page: GET / lists the models, /models/NAME
draws a model's predictions for text you type beside the ELMo mixing weights it learned, /bilm
shows a word's nearest neighbours in context per biLM layer; POST /api/NAME/predict takes and
returns the JSON lines of `allennlp predict`, GET /api/health answers scripts. Nothing is fetched
from the network. Each ARCHIVE is a model.tar.gz from `allennlp train` (or `scripts/reproduce.py`:
runs/BUDGET/TASK/VARIANT/seedK/model.tar.gz) or a shipped model's name (elmo_tasks:pretrained/ner),
served as /models/TASK (ner, srl, coref, squad, snli, sst5), or NAME=ARCHIVE to choose the name (e.g.
two models of one task). With no ARCHIVE, every shipped model is served (`elmo-tasks pretrained-models`
lists them)."""

_fail = CommandError("elmo-demo")

SHIPPED_OPTIONS = "elmo_tasks:pretrained/bilm_small/options.json"
SHIPPED_WEIGHTS = "elmo_tasks:pretrained/bilm_small/weights.hdf5"


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The command's arguments (shared by ``allennlp elmo-demo`` and ``python -m elmo_tasks.demo``)."""
    parser.add_argument(
        "archives",
        nargs="*",
        metavar="ARCHIVE",
        help="a task model's archive or shipped name, or NAME=ARCHIVE (none: every shipped model)",
    )
    add_option(parser, "--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    add_option(parser, "--port", type=int, default=8000, help="port to listen on (0: any free port)")
    add_option(parser, "--options-file", default=SHIPPED_OPTIONS, help="the biLM page's biLM options", shown="shipped")
    add_option(parser, "--weight-file", default=SHIPPED_WEIGHTS, help="the biLM page's biLM weights", shown="shipped")
    parser.add_argument("--no-bilm", action="store_true", help="serve no biLM page (starts faster)")
    add_option(parser, "--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU")
    add_option(parser, "--max-request-bytes", type=int, default=1_000_000, help="largest request body (413 above)")
    add_option(parser, "--max-waiting", type=int, default=32, help="requests queued per model (503 above)")
    return parser


@Subcommand.register("elmo-demo")
class ElmoDemo(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        summary = "Serve the task models and the biLM."
        return add_arguments(add_command(parser, self.name, DESCRIPTION, summary, with_command_start(run)))


def _check_numbers(args: argparse.Namespace) -> None:
    if not 0 <= args.port <= 65535:
        _fail(f"--port must be from 0 to 65535, got {args.port}")
    for option, value in (("--max-request-bytes", args.max_request_bytes), ("--max-waiting", args.max_waiting)):
        if value < 1:
            _fail(f"{option} must be at least 1, got {value}")


def _check_bilm_files(args: argparse.Namespace) -> None:
    """The biLM page's files exist (checked before the models load); none are needed with --no-bilm."""
    from elmo_tasks.bilm.references import BilmReferenceError, resolve_bilm_file

    if args.no_bilm:
        return
    for option, value in (("--options-file", args.options_file), ("--weight-file", args.weight_file)):
        try:
            path = resolve_bilm_file(value)
        except BilmReferenceError as error:
            _fail(f"{option}: {error}")
        if not os.path.isfile(path):
            _fail(f"{option}: {value} is not a file; give the biLM's options.json and weights.hdf5, or --no-bilm")


def _shipped_archives() -> List[str]:
    """``NAME=elmo_tasks:pretrained/NAME`` for every shipped model; the command's one-line error when none is."""
    from elmo_tasks.pretrained.catalogue import SHIP_COMMAND, shipped_models

    shipped = [f"{model.name}={model.reference}" for model in shipped_models()]
    if not shipped:
        _fail(
            "no ARCHIVE given and no task model is shipped yet: give a model.tar.gz (e.g. runs/BUDGET/TASK/"
            f"VARIANT/seedK/model.tar.gz), or ship one first with `{SHIP_COMMAND}` (docs/PRETRAINED.md)"
        )
    return shipped


def run(args: argparse.Namespace) -> None:
    """Check, bind, load, serve (see the module docstring)."""
    from elmo_tasks.bilm.errors import BilmError
    from elmo_tasks.demo.app import create_app
    from elmo_tasks.demo.bilm_neighbours import load_neighbours, spacy_tokenizer
    from elmo_tasks.demo.loaded_models import DemoSetupError, check_archives, load_models
    from elmo_tasks.demo.server import DemoServer

    _check_numbers(args)
    _check_bilm_files(args)
    if not args.archives:
        args.archives = _shipped_archives()
    try:
        check_archives(args.archives)
    except DemoSetupError as error:
        _fail(str(error))
    try:
        server = DemoServer(args.host, args.port)
    except OSError as error:
        _fail(f"cannot listen on {args.host}:{args.port} ({error.strerror or error}); choose another --port or --host")
    # On SIGINT/SIGTERM uvicorn stops accepting, answers the requests in flight, then raises the signal
    # again for its caller: here that ends the command with one line and status 0 (before, AllenNLP's
    # SIGTERM handler made it a traceback). A signal while the models load ends it the same way. Either
    # way server.close() answers 503 to the connections still queued (they were reset before).
    try:
        with stopped_with_one_line("elmo-demo", "nothing is served any more (start it again to serve)", 0):
            started = time.time()
            models = load_models(args.archives, args.cuda_device)
            neighbours = None
            if not args.no_bilm:
                device = f"cuda:{args.cuda_device}" if args.cuda_device >= 0 else "cpu"
                try:
                    neighbours = load_neighbours(args.options_file, args.weight_file, device=device)
                except (BilmError, OSError, ValueError) as error:
                    _fail(f"the biLM page's biLM ({args.options_file}, {args.weight_file}) did not load: {error}")
            app = create_app(models, neighbours, spacy_tokenizer(), args.max_request_bytes, args.max_waiting)
            served = ", ".join(model.name for model in models) + ("" if neighbours is None else " and the biLM page")
            loaded = f"loaded in {time.time() - started:.1f} s"
            print(f"elmo-demo: serving {served} at {server.url} ({loaded}; Ctrl-C stops it)")
            sys.stdout.flush()
            server.serve(app)
    finally:
        server.close()
    print("elmo-demo: stopped", file=sys.stderr)
