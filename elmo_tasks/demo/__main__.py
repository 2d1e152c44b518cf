"""``python -m elmo_tasks.demo ARCHIVE [ARCHIVE ...]``: the same server as ``allennlp elmo-demo``."""

import argparse
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> None:
    import elmo_tasks.plugin  # noqa: F401  (registers the models the archives hold)
    from elmo_tasks.command_start import with_command_start
    from elmo_tasks.demo.serve_command import DESCRIPTION, add_arguments, run

    parser = add_arguments(argparse.ArgumentParser(prog="python -m elmo_tasks.demo", description=DESCRIPTION))
    with_command_start(run)(parser.parse_args(argv))


if __name__ == "__main__":
    main()
