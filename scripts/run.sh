#!/usr/bin/env bash
# Set up (once) and run doikit's main job on the embedded default:
#   bash scripts/run.sh [doikit command and arguments...]
# With no command: doikit serve --demo, the DOI directory and resolver on the embedded
# default store (a SQLite file in the user data directory), at http://127.0.0.1:8000.
# Options without a command go to serve --demo: bash scripts/run.sh --port 8080
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
if [ "$VENV_FRESH" = 1 ] || [ ! -x .venv/bin/doikit ]; then
  .venv/bin/python -m pip install --quiet -e '.[all]'
fi
case "${1:-}" in
  "" ) set -- serve --demo ;;
  -h|--help|--version ) ;;
  -* ) set -- serve --demo "$@" ;;
esac
if [ "$1" = serve ]; then
  echo "doikit is installed in .venv: in another shell, run 'source .venv/bin/activate' to use the doikit command (Ctrl-C stops the server)" >&2
fi
exec .venv/bin/doikit "$@"
