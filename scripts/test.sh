#!/usr/bin/env bash
# Set up (once) and run the whole test suite with every quality gate:
#   bash scripts/test.sh [pytest args...]
# Creates .venv (rebuilt if another Python made it) with the project and its dev extra,
# then runs scripts/check.sh (ruff, ruff format, mypy --strict, pytest with doctests and
# Hypothesis).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
.venv/bin/python -m pip install --quiet -e '.[dev]'
# b2handle, the EUDAT Handle client the write tests drive, works on Python 3.11 but its last
# release declares Requires-Python <3.8, so it cannot be a line of the dev extra.
.venv/bin/python -m pip install --quiet --ignore-requires-python 'b2handle==1.1.2'
PATH="$PWD/.venv/bin:$PATH" scripts/check.sh "$@"
