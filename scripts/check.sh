#!/usr/bin/env bash
# The quality gates, in the order that fails fastest: lint, format, types, tests (on the
# build with the C accelerator, then the core's tests again on the pure-Python build).
# Usage: scripts/check.sh [pytest args...]   (expects the project installed in the active
# Python, as scripts/test.sh arranges)
set -euo pipefail
cd "$(dirname "$0")/.."
python -m ruff check src tests benchmarks docs scripts setup.py
python -m ruff format --check src tests benchmarks scripts setup.py
python -m mypy
python -m pytest "$@"
# The same tests of names and extraction on the pure-Python build, which is what installs
# where no C compiler is at hand (doikit._doi.DOIState; tests/test_speedups.py holds the
# C accelerator to it).
DOIKIT_PURE_PYTHON=1 python -m pytest -q -p no:cacheprovider tests/test_api.py \
  tests/test_properties.py tests/test_vectors.py tests/test_extract.py \
  tests/test_extract_corpus.py tests/test_extract_wild.py tests/test_speedups.py \
  tests/test_extract_limits.py src/doikit/_doi.py
