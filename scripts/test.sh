#!/usr/bin/env bash
# Set up (once) and run the whole test suite with every quality gate:
#   bash scripts/test.sh [pytest args...]
# Creates .venv with the project and its dev extra, then runs scripts/check.sh
# (ruff, ruff format, mypy --strict, pytest with doctests and Hypothesis).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'
PATH="$PWD/.venv/bin:$PATH" scripts/check.sh "$@"
