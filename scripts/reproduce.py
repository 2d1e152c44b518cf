#!/usr/bin/env python
"""Reproduce the benchmarks of Peters et al. (2018): baseline vs. ELMo, several seeds, one report.

The harness is the package elmo_tasks/reproduction/; ``--help`` says what it runs and how.

    .venv/bin/python scripts/reproduce.py all --budget smoke
"""

import sys

from elmo_tasks.reproduction import main

if __name__ == "__main__":
    sys.exit(main())
