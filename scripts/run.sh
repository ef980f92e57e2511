#!/usr/bin/env bash
# Set up (once) and run doikit's main job on the embedded default:
#   bash scripts/run.sh [doikit arguments...]     (default: inspect the Handbook's own DOI)
# Until `doikit serve` lands (issue 4), the main job is the name toolkit itself.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/doikit ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[all]'
fi
if [ "$#" -eq 0 ]; then
  set -- inspect "https://doi.org/10.1000/182"
fi
exec .venv/bin/doikit "$@"
