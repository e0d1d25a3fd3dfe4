#!/usr/bin/env bash
# Install, in one apt-get run, the Debian packages the tests use that are missing:
# chromium (the browser tests), nginx (serve-prod), postgresql and redis-server (the
# storage and queue tests). One `apt-get update` instead of one per script, and it
# runs beside the Python set-up (`make test` starts it with make -j). Without root or
# apt-get it installs nothing: ensure-browser.sh, ensure-nginx.sh, ensure-postgres.sh
# and ensure-redis.sh then say what is missing, each where it is needed.
# The packages' own services are not started (a policy-rc.d refuses them): the test
# scripts run their own servers on loopback.
set -euo pipefail
missing=()
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$browser" ] || [ -n "${CHROMIUM_PATH:-}" ] || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} = 0 ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then exit 0; fi
echo "Installing Debian's ${missing[*]} for the tests (one apt-get run; chromium alone takes 30-40 s)."
policy=/usr/sbin/policy-rc.d
made_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1
fi
trap '[ -z "$made_policy" ] || rm -f "$policy"' EXIT
apt-get update -qq || true
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" | grep -E '^(Setting up (chromium|nginx|postgresql|redis-server) )' || true
