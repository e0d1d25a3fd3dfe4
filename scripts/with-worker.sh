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
# Ctrl-C or SIGTERM is a normal stop: pass it on to the server (a command run
# with & in a script ignores SIGINT, so it would not see Ctrl-C itself), wait
# for it and the worker, and exit 0 - `make run` then ends without
# "make: *** [run] Error 130/143".
stopping=0
server=""
stop() {
  stopping=1
  if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null; fi
}
trap stop INT TERM
"$@" &
server=$!
status=0
while :; do
  wait "$server"
  status=$?
  # `wait` returns early when a signal arrives: go on waiting while the server runs
  kill -0 "$server" 2>/dev/null || break
done
stop_worker
if [ "$stopping" = 1 ]; then
  echo "Stopped." >&2
  exit 0
fi
exit "$status"
