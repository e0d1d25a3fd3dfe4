#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the tests, on loopback only.
#
# Prints one line, the database URL (postgresql://...), on stdout; everything
# else goes to stderr. Prints nothing and exits 0 when PostgreSQL is not
# available and cannot be installed here (the PostgreSQL tests then skip and
# say why). Installs Debian's `postgresql` package when missing and we are root.
#
# The cluster lives in .pg/ (git-ignored) at the repository top (or in /tmp
# when the server's user cannot reach the checkout); as root the server runs
# as the unprivileged `postgres` user (or `nobody`). Re-running
# reuses a running server. Settings: PG_PORT (default: 55432, or the next
# free port above it), PG_DIR.
# `scripts/ensure-postgres.sh stop` stops it (`make postgres-stop`);
# `scripts/ensure-postgres.sh running` exits 0 when it runs, else 1 (and never
# installs or starts anything).
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir="$(pwd)"
pg_dir="${PG_DIR:-$root_dir/.pg}"
port="${PG_PORT:-55432}"
data="$pg_dir/data"
log="$pg_dir/server.log"
db="playground_test"

find_bindir() {
  local candidate
  if command -v pg_config >/dev/null 2>&1; then
    candidate="$(pg_config --bindir 2>/dev/null || true)"
    if [ -x "$candidate/initdb" ]; then echo "$candidate"; return 0; fi
  fi
  for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$candidate/initdb" ]; then echo "$candidate"; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return 0; fi
  return 1
}

bindir="$(find_bindir || true)"
if [ -z "$bindir" ]; then  # nothing installed, so nothing runs
  if [ "${1:-}" = stop ]; then exit 0; fi
  if [ "${1:-}" = running ]; then exit 1; fi
fi
if [ -z "$bindir" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's postgresql for the storage tests..." >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    bindir="$(find_bindir || true)"
  fi
fi
if [ -z "$bindir" ]; then
  echo "PostgreSQL is not installed and cannot be installed here (needs root + apt-get);" \
       "the PostgreSQL storage tests will be skipped. Set PLAYGROUND_TEST_POSTGRES_URL to use a server." >&2
  exit 0
fi

# The server refuses to run as root: use an unprivileged account for it.
run_as=()
if [ "$(id -u)" = 0 ]; then
  user=postgres
  id "$user" >/dev/null 2>&1 || user=nobody
  run_as=(runuser -u "$user" --)
  mkdir -p "$pg_dir"
  chown "$user" "$pg_dir"
  # A checkout under a private home (e.g. /root) is not reachable for that
  # user: keep the cluster in a per-checkout folder under /tmp instead.
  if ! "${run_as[@]}" test -w "$pg_dir"; then
    pg_dir="${TMPDIR:-/tmp}/playground-pg-$(printf '%s' "$root_dir" | cksum | cut -d' ' -f1)"
    data="$pg_dir/data"
    log="$pg_dir/server.log"
    mkdir -p "$pg_dir"
    chown "$user" "$pg_dir"
    chmod 700 "$pg_dir"
  fi
else
  user="$(id -un)"
  mkdir -p "$pg_dir"
fi

if [ "${1:-}" = running ]; then
  if [ -f "$data/postmaster.pid" ] && "${run_as[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    exit 0
  fi
  exit 1
fi

if [ "${1:-}" = stop ]; then
  if [ -f "$data/postmaster.pid" ]; then
    "${run_as[@]}" "$bindir/pg_ctl" -D "$data" -m fast stop >&2 || true
  fi
  exit 0
fi

if [ ! -f "$data/PG_VERSION" ]; then
  rm -rf "$data"
  "${run_as[@]}" "$bindir/initdb" -D "$data" -U postgres --auth=trust \
    --encoding=UTF8 --no-locale >"$pg_dir/initdb.log" 2>&1 || {
      cat "$pg_dir/initdb.log" >&2; exit 1; }
fi

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

if "${run_as[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  # Our own server already runs: reuse it on the port it was started with.
  port="$(cat "$pg_dir/port" 2>/dev/null || echo "$port")"
else
  # Another checkout's server (or anything else) may hold the default port:
  # unless PG_PORT was given, take the next free one.
  if [ -z "${PG_PORT:-}" ]; then
    while port_in_use "$port"; do
      port=$((port + 1))
      if [ "$port" -gt 55632 ]; then echo "No free port for PostgreSQL in 55432-55632." >&2; exit 1; fi
    done
  fi
  echo "$port" > "$pg_dir/port"
  # Loopback TCP only; the socket goes into our own folder, not /run/postgresql.
  "${run_as[@]}" "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $pg_dir -c fsync=on -c max_connections=200" \
    start >&2 || { tail -n 30 "$log" >&2; exit 1; }
fi

"$bindir/pg_isready" -h 127.0.0.1 -p "$port" -t 30 >/dev/null
if ! "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -tAc \
     "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
  "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
fi
echo "postgresql://postgres@127.0.0.1:$port/$db"
