"""What a command does at its start, so that importing our plugin only registers names.

:func:`start_command` is the one call, made where a command or a training run starts, never at import:

1. the configuration defaults (:func:`elmo_tasks.config_defaults.apply_defaults`): environment variables
   the jsonnet experiments read with ``std.extVar``, for the ones the user did not set;
2. the thread policy (:func:`elmo_tasks.threads.apply_thread_policy`): one torch thread unless
   ``OMP_NUM_THREADS`` says otherwise;
3. one-line errors for a user's bad file (:func:`elmo_tasks.input_errors.install_input_error_lines`);
4. safe archive extraction in AllenNLP (:func:`elmo_tasks.safe_archives.install_safe_extraction`),
   archives written whole (:func:`elmo_tasks.whole_archive.install_whole_archives`) and checkpoints
   that ``--recover`` can always resume from (:func:`elmo_tasks.whole_checkpoints.install_whole_checkpoints`);
5. the ELMo drop-in switch, ``ELMO_TASKS_REPLACE_ALLENNLP_ELMO``
   (:func:`elmo_tasks.modules.allennlp_compat.apply_environment_switch`);
6. shipped models by name in AllenNLP's ``load_archive``: ``elmo_tasks:pretrained/ner``
   (:func:`elmo_tasks.pretrained.catalogue.install_model_names`).
7. the experiments' shared jsonnet blocks (elmo_tasks/experiments), found by AllenNLP's config reading
   from any directory (:func:`elmo_tasks.allennlp_internals.search_jsonnet_library`).

Where it is called: our ``allennlp`` subcommands (:func:`with_command_start` around each one's run,
elmo_tasks/commands/registration.py), AllenNLP's own subcommands when ``allennlp`` loads our plugin
(:mod:`elmo_tasks.commands.allennlp_hook`), the ``elmo-tasks`` entry point, the demo, the reproduction
harness's ``diagnose`` and in-process runs, and the test suite (tests/conftest.py, once). The commands
that run without AllenNLP (``elmo-tasks elmo-embed``) and the harness itself, which records the
variables its caller set, take :func:`start_process` (steps 2 and 3). Python code that builds configs,
models or predictors itself calls it once::

    import elmo_tasks.plugin  # registers the names
    from elmo_tasks.command_start import start_command

    start_command()  # what `allennlp train` gets; apply_defaults() alone gives just the config defaults

Each step is idempotent and leaves a user's choice alone (a variable they set, ``OMP_NUM_THREADS``).
"""

import argparse
import functools
from typing import Any, Callable

CommandRun = Callable[[argparse.Namespace], Any]

# the attribute our wrappers carry, so that a run is wrapped once
_STARTS_FIRST = "_elmo_tasks_starts_first"


def start_process(load_torch: bool = True) -> None:
    """The steps that need no AllenNLP (2 and 3 above): for commands that run without it.

    With ``load_torch=False`` step 2 is left to the command, which applies the policy where it imports
    torch: ``bilm-perplexity`` starts reading its text in another process first, so that its start does
    not wait for torch's import (:mod:`elmo_tasks.bilm.reading_child`)."""
    from elmo_tasks.input_errors import install_input_error_lines
    from elmo_tasks.threads import apply_thread_policy

    if load_torch:
        apply_thread_policy()
    install_input_error_lines()


def start_command(config_defaults: bool = True) -> None:
    """Everything above, in that order; ``config_defaults=False`` leaves the environment as it is."""
    if config_defaults:
        from elmo_tasks.config_defaults import apply_defaults

        apply_defaults()
    start_process()
    from elmo_tasks.allennlp_internals import search_jsonnet_library
    from elmo_tasks.experiments import LIBRARY
    from elmo_tasks.modules.allennlp_compat import apply_environment_switch
    from elmo_tasks.pretrained.catalogue import install_model_names
    from elmo_tasks.safe_archives import install_safe_extraction
    from elmo_tasks.whole_archive import install_whole_archives
    from elmo_tasks.whole_checkpoints import install_whole_checkpoints

    install_safe_extraction()  # AllenNLP extracts model archives unchecked (docs/ARCHIVE_SAFETY.md)
    install_whole_archives()  # and writes model.tar.gz in place (a full disk or a kill left it cut short)
    install_whole_checkpoints()  # and its checkpoints, which a stop or a kill could leave cut short for --recover
    apply_environment_switch()
    install_model_names()
    search_jsonnet_library(str(LIBRARY))


def with_command_start(run: CommandRun) -> CommandRun:
    """``run`` (a subcommand's ``args.func``) calling :func:`start_command` first."""
    if getattr(run, _STARTS_FIRST, False):
        return run

    @functools.wraps(run)
    def started(args: argparse.Namespace) -> Any:
        start_command()
        return run(args)

    setattr(started, _STARTS_FIRST, True)
    return started
