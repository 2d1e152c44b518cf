#!/usr/bin/env bash
# One-command setup: a .venv/ at the repo root with AllenNLP 2.10.1 on torch 2.14.1 (Python 3.11).
# AllenNLP's own pins (torch<1.13) have no Python 3.11 build, so it is installed with --no-deps
# beside an explicit, pinned list of its runtime dependencies. Re-running reuses what is there:
# nothing is reinstalled while the requirement files are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
VENV=.venv
STAMP="$VENV/.elmo-tasks-setup"
want=$(cat requirements/*.txt setup.cfg scripts/setup.sh | sha256sum | cut -d' ' -f1)

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/allennlp" ]; then
  echo "setup: $VENV is up to date"
  exit 0
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip_install() { "$VENV/bin/python" -m pip install --disable-pip-version-check -q "$@"; }
echo "setup: installing runtime dependencies (torch 2.14.1 and friends) into $VENV"
pip_install -c requirements/constraints.txt -r requirements/runtime.txt -r requirements/test.txt
echo "setup: installing allennlp==2.10.1 without its (unsatisfiable) pins"
pip_install --no-deps allennlp==2.10.1
echo "setup: installing elmo-tasks (editable)"
pip_install --no-deps --no-build-isolation -e .
"$VENV/bin/python" -c "import allennlp, torch, elmo_tasks; print('setup: ok, torch', torch.__version__)"
echo "$want" > "$STAMP"
