"""Reproduce the benchmarks of Peters et al. (2018): baseline vs. ELMo, several seeds, one report.

Every (task, variant, seed) is trained with ``allennlp train`` into
``<runs-dir>/<task>/<variant>/seed<k>`` (runs-dir: ``runs/<budget>``; ELMO_TASKS_SEED = seed base
+ k; ``fold<K>of<N>-seed<k>`` for SQuAD's other cross-validation folds, ``--splits``) and its
archive is scored with ``allennlp evaluate`` on every test file the task's libsonnet names
(``data.test``, and ``data.test_brown`` for CoNLL-2005 SRL). Each finished run leaves a record,
``record.json`` in its directory and a copy under ``<records-dir>/<task>/<variant>/<run>.json``
(records-dir: ``docs/results/records/<budget>`` for mini, recipe and paper): the
exact commands, the resolved config, overrides, environment, seed, git commit, wall times, test
and validation metrics, the validation curve and the learned ELMo layer weights. The report
(docs/RESULTS.md for the ``mini`` budget: a table shaped like the paper's Table 1, the analyses,
plots and a section per task) is regenerated from the records alone, never edited by hand.

    .venv/bin/python scripts/reproduce.py all --budget smoke           # every task on the fixtures
    .venv/bin/python scripts/reproduce.py squad coref --budget mini    # real data, this machine
    .venv/bin/python scripts/reproduce.py ner sst5 snli --budget mini --analyses --analysis-seeds 1   # Tables 2, 3
    .venv/bin/python scripts/reproduce.py all --budget mini --report-only          # the report alone
    .venv/bin/python scripts/reproduce.py diagnose input_output        # a few SNLI steps (diagnose --help)
    .venv/bin/python scripts/reproduce.py ner --budget recipe --ship    # ship the best run (docs/PRETRAINED.md)

Budgets (elmo_tasks/reproduction/task_table.py): ``smoke`` (fixtures, one epoch, 1 seed), ``mini`` (the
real data with substitutes where the paper's training sets were not at hand, cut to fit a 2-core CPU;
3 seeds), ``recipe`` (NER and SST-5: the experiment configs unchanged on the official data, the
mini budget's word vectors, 3 seeds; hours per run on a CPU for NER, a GPU's work for SST-5) and
``paper`` (the experiment configs unchanged on the official data, the paper's word vectors; 5 seeds;
GPUs advised). ``--analyses`` adds the paper's Table 2/3 variants, ``--sample-efficiency`` the
training-share runs (Figure 1), ``--reuse-only`` records finished runs without training.

A finished run made with the same settings is reused (for an ELMo run the settings include the
sha256 of the biLM weights it read), from its run directory or, when that is gone (``runs/`` is
scratch space), from its record in the records directory; so is the run of another variant of the task
that trained the very same model (same resolved config, biLM and seed: e.g. an analysis variant
whose overrides a config file has since adopted), whose record is copied with ``trained_as`` naming
it. Where the data folder lies is no setting: the paths under ELMO_TASKS_SHARED_DATA count from it,
so the committed records are reused wherever a reader keeps the data. Records that the current
config files or shipped biLM would not reuse are marked † in the report. A run that was interrupted
is resumed with ``allennlp train --recover``; a run that fails is reported and the others go on (exit status 1
at the end). Several processes may share a runs directory (one per core, each with
OMP_NUM_THREADS=1): a run that another process is training fails at once with that process's id,
and the word vectors or fine-tuned biLM that several runs read are built by the first process that
needs them while the others wait. Progress (which run, how many are left, elapsed and estimated time) goes to stdout,
and the last lines give each asked task's test metrics from the records, as the report's Table 1:
``ner smoke: baseline F1 5.00, ELMo F1 0.00 (test, 1 seed each)``.

Ctrl-C or ``kill`` (SIGINT, SIGTERM) ends the harness within seconds with one line, ``reproduce.py:
stopped by SIGTERM; ...``, saying which run it stopped and that running the same command again goes on
(exit status 130 / 143): the ``allennlp`` command under way is killed with it, the stopped run keeps
its folder (checkpoints, for ``--recover``) but gets no record (one being written is never left half
written), and the run's lock is freed. The runs recorded before are reused when the command is run
again, and the stopped one is resumed or trained again.

``--ship`` trains nothing: of each task's ``elmo`` runs (or the one variant ``--variants`` names) recorded
in the budget, the one with the best validation score becomes the task's shipped model,
``elmo_tasks/pretrained/TASK/``, loadable as ``elmo_tasks:pretrained/TASK`` (elmo_tasks/reproduction/shipping.py,
docs/PRETRAINED.md); run it again when a better run is recorded.
"""

import argparse
import json
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

from elmo_tasks.allennlp_internals import search_jsonnet_library
from elmo_tasks.command_start import start_command, start_process
from elmo_tasks.counted_nouns import counted
from elmo_tasks.experiments import LIBRARY
from elmo_tasks.reproduction import diagnose
from elmo_tasks.reproduction.allennlp_runs import RunFailed, env_paths_from_caller, say
from elmo_tasks.reproduction.one_run import run_one
from elmo_tasks.reproduction.plan import Job, Plan
from elmo_tasks.reproduction.progress import Progress
from elmo_tasks.reproduction.records import Record, RecordError, load_records
from elmo_tasks.reproduction.report import write_report
from elmo_tasks.reproduction.report_recipe import RECIPE_BUDGET
from elmo_tasks.reproduction.report_values import metrics_line
from elmo_tasks.reproduction.stopping_rule import reused_rule
from elmo_tasks.reproduction.task_table import BUDGETS, TASKS
from elmo_tasks.stopping import stopped_with_one_line


def json_object(text: str) -> Dict[str, Any]:
    """``--overrides``: a JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--overrides is not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--overrides must be a JSON object, e.g. '{\"trainer.num_epochs\": 3}'")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reproduce.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("tasks", nargs="+", metavar="TASK", help=f"'all' or any of {', '.join(TASKS)}")
    add(
        "--budget",
        required=True,
        choices=BUDGETS,
        help=f"{', '.join(BUDGETS)} (see elmo_tasks/reproduction/task_table.py)",
    )
    add("--seeds", type=int, help="seeds per variant (default: the budget's)")
    add("--seed-base", type=int, default=13370, help="seed k uses ELMO_TASKS_SEED = base + k")
    add("--only-seeds", type=int, nargs="+", metavar="K", help="only these seed indices (others run elsewhere)")
    add(
        "--splits",
        nargs="+",
        metavar="S",
        help="for tasks with splits (SQuAD's folds ELMO_TASKS_FOLD): these, e.g. 2/4 3/4, or 'all' (default: 1/4)",
    )
    add(
        "--variants",
        nargs="+",
        help="only these variants (default: baseline and elmo); naming an analysis variant plans it, "
        "without --analyses",
    )
    add(
        "--analysis-seeds",
        type=int,
        metavar="N",
        help="seeds of the --analyses variants (default: as many as the others); the paper's tables are single runs",
    )
    add("--analyses", action="store_true", help="also the analysis variants (Tables 2 and 3)")
    add("--sample-efficiency", action="store_true", help="also train on the budget's shares of the training data")
    add(
        "--overrides",
        type=json_object,
        default={},
        help="JSON object of config overrides for every run, on top of the budget's (dotted keys, as `allennlp "
        "train -o`); recorded with the results",
    )
    add(
        "--word-vector-algorithm",
        choices=("word2vec", "fasttext"),
        help="for a budget that builds its own word vectors (mini): this algorithm instead of the budget's",
    )
    add("--runs-dir", help="default: runs/<budget>")
    add("--records-dir", help="default: docs/results/records/<budget> for mini, recipe and paper, else in runs")
    add("--results", help="the report (default: docs/RESULTS.md for mini with committed records, else the runs dir)")
    add("--force", action="store_true", help="retrain even if a run is complete")
    add("--report-only", action="store_true", help="only regenerate the report from the records")
    add("--reuse-only", action="store_true", help="record finished runs (e.g. of another runs dir), train nothing")
    add("--in-process", action="store_true", help="run allennlp in this process (tests)")
    add(
        "--ship",
        action="store_true",
        help="train nothing: ship each task's best recorded run by validation as elmo_tasks:pretrained/TASK "
        "(the elmo variant, or the one --variants names; docs/PRETRAINED.md)",
    )
    return parser


def parse_args(argv: Optional[List[str]]) -> Tuple[argparse.Namespace, List[str]]:
    """The arguments, and the tasks they ask for (``all``: every task); unknown tasks or variants are errors."""
    parser = _parser()
    args = parser.parse_args(argv)
    budgeted = [task for task, spec in TASKS.items() if args.budget in spec.budgets]
    tasks = budgeted if args.tasks == ["all"] else args.tasks
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        parser.error(f"unknown task(s) {unknown}; choose 'all' or from {list(TASKS)}")
    unbudgeted = [t for t in tasks if t not in budgeted]
    if unbudgeted:
        parser.error(f"task(s) {unbudgeted} have no '{args.budget}' budget; it has {budgeted}")
    if args.variants:
        known = {v for t in tasks for v in TASKS[t].variants(args.budget, analyses=True, sample_efficiency=True)}
        bad = sorted(set(args.variants) - known)
        if bad:
            parser.error(f"unknown variant(s) {bad}; the tasks have {sorted(known)}")
    if args.ship and args.variants and len(args.variants) > 1:
        parser.error(f"--ship ships one model per task: give one variant, not {args.variants}")
    return args, tasks


def mark_outdated(plan: Plan, records: List[Record]) -> None:
    """Sets ``outdated`` on each record whose run the current config files or shipped biLM would not
    reuse: its config fingerprint or biLM sha256 differs from what its variant resolves to today (or the
    variant is gone), unless all that differs is a raised epoch cap or patience that would have stopped
    the run where it stopped (``stopping_rule``), so the report can say which results predate a change."""
    current: Dict[Tuple[str, str, Optional[str]], Optional[Dict[str, Any]]] = {}
    for record in records:
        key = (record["task"], record["variant"], record.get("split"))
        if key not in current:
            known = TASKS[key[0]].variants(plan.budget, analyses=True, sample_efficiency=True)
            try:
                current[key] = plan.settings(key[0], known[key[1]], key[2]) if key[1] in known else None
            except RunFailed:
                current[key] = None
        settings = current[key]
        recorded = {name: record.get(name) for name in ("config_sha256", "bilm_weights_sha256")}
        record["outdated"] = settings is None or any(value != settings.get(name) for name, value in recorded.items())
        if record["outdated"] and settings is not None:  # the same run still, if a raised rule stops it there too
            record["outdated"] = reused_rule(record, settings) is None


def current_where_rerun(records: List[Record]) -> List[Record]:
    """The records the report shows: for each task, variant and split, only the current ones once any run
    was made with today's settings (a mean over runs of two configs would describe neither); while none
    was, those made with the settings (config and biLM) of the last one evaluated, marked."""
    groups: Dict[Tuple[str, str, Optional[str]], List[Record]] = {}
    for record in records:
        groups.setdefault((record["task"], record["variant"], record.get("split")), []).append(record)
    shown: Set[int] = set()
    for runs in groups.values():
        current = [r for r in runs if not r["outdated"]]
        if not current:
            newest = _settings_of(max(runs, key=lambda r: r.get("evaluated_at") or ""))
            current = [r for r in runs if _settings_of(r) == newest]
        shown.update(id(r) for r in current)
    return [r for r in records if id(r) in shown]


def _settings_of(record: Record) -> Tuple[Optional[str], Optional[str]]:
    return record.get("config_sha256"), record.get("bilm_weights_sha256")


class Underway:
    """Where the harness is (the run under way, the runs done), for the line that a stop prints."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.run: Optional[str] = None
        self.report: Optional[str] = None

    def stop_outcome(self) -> str:
        """What became of the work and what to run next, when SIGINT or SIGTERM arrives now."""
        done = f"{self.done} of {counted(self.total, 'run')} done"
        again = "run the same command again: the runs done are reused"
        if self.run is not None:
            return (
                f"the run {self.run} was stopped before its record (its checkpoints, if any, are kept to resume "
                f"from); {done}; {again} and this one goes on"
            )
        if self.report is not None:
            return f"every run is done and recorded; {self.report} was not rewritten; {again}"
        if self.done == 0:  # still planning
            return "no run was started; run the same command again"
        return f"{done}; {again}"


def run_jobs(plan: Plan, jobs: List[Job], underway: Optional[Underway] = None) -> List[str]:
    """Runs every job in turn; a failed run is reported and the others go on. The failures, one line each.
    ``underway`` is kept told which run is under way."""
    failures: List[str] = []
    progress = Progress(len(jobs))
    underway = underway or Underway(len(jobs))
    for job in jobs:
        name = TASKS[job.task].run_name(job.split, job.seed_index)
        underway.run = f"{job.task} {job.variant} {name}"
        try:
            run_one(plan, job, progress)
        except RunFailed as failure:  # a stop is a BaseException: no broad `except` makes it a failure
            progress.failed()
            failures.append(f"{job.task} {job.variant} {name}: {failure}")
            say(f"FAILED {failures[-1]}")
        underway.run = None
        underway.done += 1
    return failures


def ship_tasks(plan: Plan, tasks: List[str]) -> int:
    """``--ship``: each task's best recorded run by validation becomes its shipped model; the exit status
    (1 if any task could not be shipped: its line says why, and the others go on)."""
    from elmo_tasks.reproduction.shipping import DEFAULT_VARIANT, ShipError, ship_task

    variant = plan.args.variants[0] if plan.args.variants else DEFAULT_VARIANT
    failures = []
    for task in tasks:
        print(f"{task} {variant} ({plan.budget}): shipping the best run by validation", flush=True)
        try:
            ship_task(task, plan.budget, plan.runs_dir, plan.records_dir, variant, say=say)
        except ShipError as error:
            failures.append(f"{task}: {error}")
            say(f"FAILED {error}")
    for failure in failures:
        print(f"  not shipped: {failure}")
    return 1 if failures else 0


def main(argv: Optional[List[str]] = None) -> int:
    """``scripts/reproduce.py``: runs what the arguments ask for, then writes the report; the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["diagnose"]:
        start_command()  # it builds and trains models in this process
        return diagnose.main(argv[1:])
    # The runs record the variables their caller set (configs.PASSED_ON), and their allennlp commands start
    # with the whole setup: the harness itself takes the steps that change no variable and need no AllenNLP,
    # and resolves the experiments (configs.resolved_config) with their shared blocks as allennlp does.
    start_process()
    search_jsonnet_library(str(LIBRARY))
    env_paths_from_caller()
    args, tasks = parse_args(argv)
    plan = Plan(args)
    if args.ship:
        start_command()  # it loads and evaluates models in this process
        return ship_tasks(plan, tasks)
    underway = Underway(0)
    # SIGINT / SIGTERM: the clean-up below runs (the allennlp command under way is killed, a record half
    # written is removed, the run's lock freed), then one line and exit 130 / 143
    with stopped_with_one_line("reproduce.py", underway.stop_outcome):
        jobs = plan.jobs(tasks)
        underway.total = 0 if args.report_only else len(jobs)
        failures = [] if args.report_only else run_jobs(plan, jobs, underway)
        underway.report = str(plan.results)
        return _report(plan, tasks, jobs, failures)


def _report(plan: Plan, tasks: List[str], jobs: List[Job], failures: List[str]) -> int:
    """Writes the report from the records and prints the summary; the exit status."""
    args = plan.args
    try:
        records = load_records(plan.records_dir)
    except RecordError as error:  # the report needs every record: one line, as argparse ends a bad command line
        print(f"reproduce.py: error: {error}", file=sys.stderr)
        return 2
    mark_outdated(plan, records)
    records = current_where_rerun(records)
    try:
        write_report(records, plan.results, budget=args.budget, recipe_records=plan.records_dir.parent / RECIPE_BUDGET)
    except RunFailed as error:  # the report cannot be written (a full disk, a read-only folder): one line
        print(f"reproduce.py: error: {error}", file=sys.stderr)
        return 2
    asked = "report only" if args.report_only else f"{counted(len(jobs), 'run')} asked, {len(failures)} failed"
    print(f"reproduce: {asked}; {counted(len(records), 'record')} -> {plan.results}")
    for failure in failures:
        print(f"  failed: {failure}")
    # The last lines: each task's test metrics, as the report's Table 1 gives them.
    for task in tasks:
        print(metrics_line(records, task, args.budget))
    return 1 if failures else 0
