#!/usr/bin/env bash
# Run a web server command with a background-job worker beside it, and stop
# them together:
#   scripts/with-worker.sh <python> <web server command...>
# The worker (`python -m webapp.worker`) starts first with the same
# environment. With NGINX_CONF set (scripts/serve-prod.sh sets it), Debian's
# nginx runs in front with that configuration.
#
# Stopping: SIGTERM or SIGINT to this script (what systemd, Docker or Ctrl-C
# send; the script then exits 0), or the web server or nginx exiting, stops
# every process it started:
# SIGTERM to each, then SIGKILL to whatever still runs after STOP_SECONDS
# (default 25). A worker that dies on its own (kill -9, a crash) is started
# again after a second: its jobs come back through the upkeep (webapp.jobs.upkeep).
# PLAYGROUND_START_WORKER=0 starts no worker (workers of your own elsewhere,
# e.g. on a shared Redis queue).
set -uo pipefail
cd "$(dirname "$0")/.."
py="$1"; shift
stop_seconds="${STOP_SECONDS:-25}"
worker=""; server=""; nginx=""
stopping=""

start_worker() {
  if [ "${PLAYGROUND_START_WORKER:-1}" != 0 ]; then
    "$py" -m webapp.worker &
    worker=$!
  fi
}

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

stop_all() {
  stopping=1
  local pid deadline
  # nginx first (no new requests), then the server (finishes its requests), then the worker.
  for pid in $nginx $server $worker; do alive "$pid" && kill -TERM "$pid" 2>/dev/null; done
  deadline=$((SECONDS + stop_seconds))
  for pid in $nginx $server $worker; do
    while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null; fi
    wait "$pid" 2>/dev/null
  done
  # serve-prod.sh's folders for this run (nginx's configuration and temporary files), nothing else.
  for dir in ${REMOVE_AT_EXIT:-}; do
    case "$dir" in /tmp/bpe-playground-nginx*) rm -rf -- "$dir" ;; esac
  done
}

# A stop that was asked for (Ctrl-C, SIGTERM, SIGHUP) is a normal end: exit 0,
# so `make run` prints no "make: *** [run] Error 130/143" and a supervisor
# sees a clean stop. (A command run with & in a script ignores SIGINT, so the
# server would not see Ctrl-C by itself: stop_all passes it on.)
trap 'stop_all; echo "Stopped." >&2; exit 0' TERM INT HUP

start_worker
"$@" &
server=$!
if [ -n "${NGINX_CONF:-}" ]; then
  "${NGINX_BIN:-nginx}" -e stderr -c "$NGINX_CONF" -p "$(dirname "$NGINX_CONF")" -g 'daemon off;' &
  nginx=$!
fi

status=0
while :; do
  # Wakes when any child ends, or for a signal (the trap then stops everything).
  wait -n $server $nginx $worker 2>/dev/null
  status=$?
  if ! alive "$server"; then wait "$server" 2>/dev/null; status=$?; break; fi
  if [ -n "$nginx" ] && ! alive "$nginx"; then echo "with-worker: nginx stopped; stopping the server" >&2; status=1; break; fi
  if [ -n "$worker" ] && ! alive "$worker"; then
    wait "$worker" 2>/dev/null
    echo "with-worker: the job worker stopped; starting it again" >&2
    sleep 1
    start_worker
  fi
done
stop_all
exit "$status"
