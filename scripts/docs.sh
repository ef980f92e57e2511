#!/usr/bin/env bash
# Build the documentation (docs/, Sphinx) with warnings as errors, then check its links
# (scripts/doclinks.py: every link lands on a page and anchor of the site, none outside):
#   bash scripts/docs.sh [OUTPUT_DIR]      (default: docs/_build/html)
# Sets up .venv as run.sh and test.sh do, and installs into it what the build needs when it
# is missing: Sphinx (the docs extra) and every module the API page documents, which autodoc
# imports (the extras in all, and spark).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/_build/html}"
source scripts/_venv.sh
needs='import sphinx, myst_parser, sphinx_click, furo
import doikit.arrow, doikit.polars, doikit.duckdb, doikit.spark, doikit.pdf, doikit.client, doikit.server'
if [ "$VENV_FRESH" = 1 ] || ! .venv/bin/python -c "$needs" >/dev/null 2>&1; then
  echo "installing into .venv what the docs build needs (Sphinx, and the extras autodoc imports)" >&2
  .venv/bin/python -m pip install --quiet -e '.[all,docs,spark]'
fi
.venv/bin/python -m sphinx -W --keep-going -q -b html docs "$out"
.venv/bin/python scripts/doclinks.py "$out"
echo "docs built in $out"
