#!/usr/bin/env bash
# Check the Python the Makefile will use, before anything is installed.
#
#   scripts/check-python.sh PYTHON VENV
#
# Fails with a message when PYTHON is missing or older than 3.11 (the pinned
# packages need 3.11; older ones would fail deep inside pip). Removes VENV when
# it was made by another Python version (or is broken), so the Makefile builds
# it again with PYTHON instead of reusing it. Prints only to stderr.
set -euo pipefail
python="${1:-python3}"
venv="${2:-.venv}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "No '$python' here. The playground needs Python 3.11 or newer: install it, or choose one with" \
       "make PYTHON=/path/to/python3.11 ..." >&2
  exit 1
fi
want="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "$python is Python $want; the playground needs Python 3.11 or newer." \
       "Install one, or choose one with make PYTHON=/path/to/python3.11 ..." >&2
  exit 1
fi

if [ -e "$venv" ] || [ -L "$venv" ]; then
  have="$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)"
  if [ "$have" != "$want" ]; then
    if [ "$have" = none ]; then made="has no working Python"; else made="was made by Python $have"; fi
    echo "$venv $made, not $python's Python $want: removing it to build it again." >&2
    rm -rf "$venv"
  fi
fi
