#!/usr/bin/env bash
# Start a throwaway Redis server for the tests, on loopback only.
#
# Prints one line, the queue URL (redis://127.0.0.1:PORT/0), on stdout;
# everything else goes to stderr. Prints nothing and exits 0 when redis-server
# is not available and cannot be installed here (the Redis job tests then skip
# and say why). Installs Debian's `redis-server` package when missing and we
# are root. Data lives in .redis/ (git-ignored); no persistence. Re-running
# reuses a running server. Settings: REDIS_PORT (default 56379, or the next
# free port above it). `scripts/ensure-redis.sh stop` stops it; `... running`
# exits 0 when it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(pwd)/.redis"
port="${REDIS_PORT:-56379}"

if ! command -v redis-server >/dev/null 2>&1; then
  if [ "${1:-}" = stop ]; then exit 0; fi
  if [ "${1:-}" = running ]; then exit 1; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's redis-server for the job queue tests..." >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
  fi
fi
if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis-server is not installed and cannot be installed here (needs root + apt-get);" \
       "the Redis job queue tests will be skipped. Set PLAYGROUND_TEST_REDIS_URL to use a server." >&2
  exit 0
fi
mkdir -p "$dir"

running_port() {
  local pid
  [ -f "$dir/redis.pid" ] || return 1
  pid="$(cat "$dir/redis.pid")"
  kill -0 "$pid" 2>/dev/null || return 1
  cat "$dir/port"
}

if [ "${1:-}" = running ]; then
  running_port >/dev/null
  exit $?
fi

if [ "${1:-}" = stop ]; then
  if [ -f "$dir/redis.pid" ]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; rm -f "$dir/redis.pid"; fi
  exit 0
fi

if existing="$(running_port)"; then
  echo "redis://127.0.0.1:$existing/0"
  exit 0
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -z "${REDIS_PORT:-}" ]; then
  while port_in_use "$port"; do
    port=$((port + 1))
    if [ "$port" -gt 56579 ]; then echo "No free port for Redis in 56379-56579." >&2; exit 1; fi
  done
fi
echo "$port" > "$dir/port"
redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --protected-mode yes \
  --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir" >&2
for _ in $(seq 1 100); do
  if redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
    echo "redis://127.0.0.1:$port/0"
    exit 0
  fi
  sleep 0.1
done
echo "Redis did not start; see $dir/redis.log" >&2
exit 1
