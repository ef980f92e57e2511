#!/usr/bin/env bash
# The quality gates, in the order that fails fastest: lint, format, types, tests.
# Usage: scripts/check.sh [pytest args...]   (expects the project installed in the active
# Python, as scripts/test.sh arranges)
set -euo pipefail
cd "$(dirname "$0")/.."
python -m ruff check src tests benchmarks
python -m ruff format --check src tests benchmarks
python -m mypy
python -m pytest "$@"
