"""The benchmarks, found by their folders: each ``elmo_tasks/tasks/<task>/spec.py`` holds one task's spec.

A task's spec (:class:`BenchmarkSpec`) is the one place that says what the harness runs for it (budgets,
variants, the paper's numbers), what the report says about it, the demo's form for it and what the
commands say an archive of it is. The harness (``elmo_tasks.reproduction.task_table.TASKS``), the report's notes
(``elmo_tasks.reproduction.notes``), the demo (``elmo_tasks.demo.task_pages``) and the commands
(``elmo_tasks.commands.command_paths.TASK_COMMANDS``) read it through a :class:`TaskView`, so adding a task
is its folder and its experiment files (docs/CONVENTIONS.md, "Adding a task").

The folders are found with ``pkgutil`` under ``elmo_tasks.tasks.__path__`` when a view is first read, not
at import: the commands and the demo create their views while the plugin is being imported, and a spec
imports the demo's and the harness's modules, which would then be half imported (nor would the plugin's
import stay free of the harness). A subpackage without a spec is an error unless ``NOT_BENCHMARKS`` says
why it is not a benchmark.
"""

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    overload,
)

if TYPE_CHECKING:  # the parts' types import this module (their views), so they are only named here
    from elmo_tasks.demo.task_pages import DemoPage
    from elmo_tasks.reproduction.notes import TaskNotes
    from elmo_tasks.reproduction.specs import TaskSpec

# The checkout whose experiments/ the specs name (this file is elmo_tasks/tasks/registry.py).
REPOSITORY = Path(__file__).resolve().parents[2]
SPEC_MODULE = "spec"  # elmo_tasks/tasks/<task>/spec.py, which defines SPEC
CHECKLIST = 'docs/CONVENTIONS.md, "Adding a task"'

# Subpackages of elmo_tasks/tasks that are not benchmarks, and why (so they need no spec).
NOT_BENCHMARKS = {
    "lm": "the biLM that ELMo is made of: trained by experiments/bilm_*.jsonnet and exported by its own commands, "
    "it is a benchmark of none of the paper's tables"
}


class TaskSpecError(Exception):
    """A task folder without a usable spec, or two specs of one task; the message names the file and the fix."""


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark: everything the harness, the report, the demo and the commands know about it besides
    its code (``model.py``, ``reader.py``...) and its experiments."""

    key: str  # the task's name everywhere: its predictor, demo page, harness key and experiment files' prefix
    # Its row of the paper's Table 1 (1 to 6): the order of the report, the harness and the demo; a task
    # the paper does not have (None) comes after those, by key.
    table1_row: Optional[int]
    reproduction: "TaskSpec"  # what scripts/reproduce.py runs (budgets, variants, the paper's numbers)
    report: "TaskNotes"  # what docs/RESULTS.md says about it besides its numbers
    demo: "DemoPage"  # its page in `allennlp elmo-demo`
    archive_holds: str  # what an archive of it is, in a message: "a NER model"
    archive_command: str  # the command that scores an archive of it: "evaluate", "srl-props"...

    @property
    def archive_commands(self) -> str:
        """What an archive of the task holds and the commands that use it (``{archive}``: its path)."""
        predict = f"`allennlp predict {{archive}} INPUT --predictor {self.key}`"
        return f"{self.archive_holds}: use `allennlp {self.archive_command}` or {predict}"

    @property
    def experiment_files(self) -> List[str]:
        """The experiment files the spec names, relative to the repository: its libsonnet and configs."""
        return [self.reproduction.libsonnet, *self.reproduction.configs.values()]

    def missing_files(self, root: Path = REPOSITORY) -> List[str]:
        """One line per experiment file the spec names that is not under ``root`` (none: the task is whole).

        Checked by the tests, not when the specs are read: an installed package has the experiments'
        libsonnets but not the checkout's ``experiments/``."""
        return [
            f"{self.key}: its spec names {file}, which is not in {root}; expected the task's experiment files "
            f"({CHECKLIST})"
            for file in self.experiment_files
            if not (root / file).is_file()
        ]


def benchmark_specs() -> Mapping[str, BenchmarkSpec]:
    """Every benchmark's spec by key, in the order of the paper's Table 1 (then new tasks by key); the same
    object until the task folders change."""
    import elmo_tasks.tasks

    return _specs_in(tuple(elmo_tasks.tasks.__path__))


@functools.lru_cache(maxsize=None)
def _specs_in(folders: Tuple[str, ...]) -> Mapping[str, BenchmarkSpec]:
    """The specs of the task folders under ``folders`` (the package's path: a test may add a folder to it)."""
    specs: List[BenchmarkSpec] = []
    for found in pkgutil.iter_modules(list(folders)):
        if found.ispkg and found.name not in NOT_BENCHMARKS:
            specs.append(_spec_of(found.name, Path(getattr(found.module_finder, "path", "")) / found.name))
    by_key: Dict[str, BenchmarkSpec] = {}
    for spec in sorted(specs, key=lambda spec: (spec.table1_row is None, spec.table1_row or 0, spec.key)):
        if spec.key in by_key:
            raise TaskSpecError(
                f"two task folders' {SPEC_MODULE}.py define the task {spec.key!r}; expected one folder per task "
                f"({CHECKLIST})"
            )
        by_key[spec.key] = spec
    return MappingProxyType(by_key)


def _spec_of(package: str, folder: Path) -> BenchmarkSpec:
    module_name = f"elmo_tasks.tasks.{package}.{SPEC_MODULE}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        raise TaskSpecError(
            f"{folder}: a task folder without {SPEC_MODULE}.py; expected {SPEC_MODULE}.py defining "
            f"SPEC = BenchmarkSpec(...) ({CHECKLIST}), or, for a folder that is not a benchmark, an entry in "
            "NOT_BENCHMARKS of elmo_tasks/tasks/registry.py saying why"
        ) from None
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, BenchmarkSpec):
        raise TaskSpecError(
            f"{module.__file__}: SPEC is {type(spec).__name__}; expected SPEC = BenchmarkSpec(...) ({CHECKLIST})"
        )
    return spec


Part = TypeVar("Part")


class TaskView(Mapping[str, Part]):
    """A mapping, key -> one part of each benchmark's spec (tasks without that part left out).

    It reads the specs when first used, not when created, so a module can hold one from import on (the
    plugin's commands and the demo do) and still see every task folder, a test's added one included. A
    part can be replaced for a while (``view[key] = part``, as tests do with ``monkeypatch.setitem``):
    setting it back to its spec's own part, or deleting it, ends the replacement.
    """

    def __init__(
        self,
        part: Callable[[BenchmarkSpec], Optional[Part]],
        key: Callable[[BenchmarkSpec], str] = lambda spec: spec.key,
    ) -> None:
        self._part = part
        self._key = key
        self._read_from: Optional[Mapping[str, BenchmarkSpec]] = None
        self._from_specs: Dict[str, Part] = {}
        self._replaced: Dict[str, Part] = {}

    def _own_parts(self) -> Dict[str, Part]:
        specs = benchmark_specs()
        if specs is not self._read_from:  # first use, or the task folders changed
            parts = {self._key(spec): self._part(spec) for spec in specs.values()}
            self._from_specs = {key: part for key, part in parts.items() if part is not None}
            self._read_from = specs
        return self._from_specs

    def _current(self) -> Dict[str, Part]:
        own = self._own_parts()
        return {**own, **self._replaced} if self._replaced else own

    def __getitem__(self, key: str) -> Part:
        return self._current()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def __setitem__(self, key: str, part: Part) -> None:
        if self._own_parts().get(key) is part:
            self._replaced.pop(key, None)
        else:
            self._replaced[key] = part

    def __delitem__(self, key: str) -> None:
        if key not in self._replaced:
            raise KeyError(f"{key!r} is not a replaced part; a task leaves the specs when its folder goes")
        del self._replaced[key]

    def __repr__(self) -> str:
        return f"TaskView({self._current()!r})"


class TaskList(Sequence[Part]):
    """A view's parts as a read-only list, in the tasks' order (the demo's list of tasks)."""

    def __init__(self, view: TaskView[Part]) -> None:
        self._view = view

    @overload
    def __getitem__(self, index: int) -> Part: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Part]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[Part, Sequence[Part]]:
        return list(self._view.values())[index]

    def __len__(self) -> int:
        return len(self._view)

    def __repr__(self) -> str:
        return f"TaskList({list(self._view.values())!r})"
