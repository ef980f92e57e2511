# Sourced by run.sh and test.sh: make sure .venv exists, made by this machine's Python 3.11
# or newer ($PYTHON, else python3), and rebuild it when another Python made it (an older
# .venv breaks every run until removed by hand). Sets VENV_FRESH=1 when it was (re)built.
PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "doikit needs Python 3.11 or newer: '$PYTHON' is not on the PATH (set PYTHON=/path/to/python3)" >&2
  exit 2
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "doikit needs Python 3.11 or newer; '$PYTHON' is $("$PYTHON" -V 2>&1) (set PYTHON=/path/to/python3.11)" >&2
  exit 2
fi
WANT="$("$PYTHON" -c 'import sys; print(sys.version.split()[0], sys.base_prefix)')"
VENV_FRESH=0
if [ -e .venv ]; then
  HAVE="$(.venv/bin/python -c 'import sys; print(sys.version.split()[0], sys.base_prefix)' 2>/dev/null || true)"
  if [ "$HAVE" != "$WANT" ]; then
    echo "rebuilding .venv: it was made by ${HAVE:-a Python that no longer runs}, not $WANT" >&2
    rm -rf .venv
  fi
fi
if [ ! -e .venv ]; then
  "$PYTHON" -m venv .venv
  VENV_FRESH=1
fi
