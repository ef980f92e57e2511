#!/usr/bin/env bash
# Build the documentation (docs/, Sphinx) with warnings as errors, then check its links
# (scripts/doclinks.py: every link lands on a page and anchor of the site, none outside):
#   bash scripts/docs.sh [OUTPUT_DIR]      (default: docs/_build/html)
# Run after scripts/test.sh or scripts/run.sh has made .venv (the dev extra holds Sphinx).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/_build/html}"
python=.venv/bin/python
[ -x "$python" ] || python="${PYTHON:-python3}"
"$python" -m sphinx -W --keep-going -q -b html docs "$out"
"$python" scripts/doclinks.py "$out"
echo "docs built in $out"
