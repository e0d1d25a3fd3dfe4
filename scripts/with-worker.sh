#!/usr/bin/env bash
# Run a web server command with a background-job worker beside it:
#   scripts/with-worker.sh <python> <web server command...>
# The worker (`python -m webapp.worker`) starts first with the same
# environment; when the web server exits (Ctrl-C, SIGTERM) the worker is
# stopped too. PLAYGROUND_START_WORKER=0 starts no worker (workers of your own
# elsewhere, e.g. on a shared Redis queue).
set -uo pipefail
cd "$(dirname "$0")/.."
py="$1"; shift
worker=""
if [ "${PLAYGROUND_START_WORKER:-1}" != 0 ]; then
  "$py" -m webapp.worker &
  worker=$!
fi
stop_worker() {
  if [ -n "$worker" ] && kill -0 "$worker" 2>/dev/null; then
    kill -TERM "$worker" 2>/dev/null
    wait "$worker" 2>/dev/null
  fi
}
trap stop_worker EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$@" &
server=$!
wait "$server"
status=$?
# A signal interrupts `wait`: pass it on to the server and wait for it to finish.
if kill -0 "$server" 2>/dev/null; then kill -TERM "$server" 2>/dev/null; wait "$server"; fi
exit "$status"
