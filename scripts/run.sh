#!/usr/bin/env bash
# Set up (once) and run doikit's main job on the embedded default:
#   bash scripts/run.sh [doikit arguments...]
# With no arguments: doikit serve --demo, the DOI directory and resolver on the embedded
# default store (a SQLite file in the user data directory), at http://127.0.0.1:8000.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/doikit ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[all]'
fi
if [ "$#" -eq 0 ]; then
  set -- serve --demo
fi
exec .venv/bin/doikit "$@"
