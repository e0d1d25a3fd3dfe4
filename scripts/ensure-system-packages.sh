#!/usr/bin/env bash
# Install, after one apt-get update, the Debian packages the tests use that are missing:
# chromium-headless-shell (the browser tests), nginx (serve-prod), postgresql and redis-server (the
# storage and queue tests). One `apt-get update` instead of one per script, and it
# runs beside the Python set-up (`make test` starts it with make -j). Without root or
# apt-get it installs nothing: ensure-browser.sh, ensure-nginx.sh, ensure-postgres.sh
# and ensure-redis.sh then say what is missing, each where it is needed.
# The packages' own services are not started (a policy-rc.d refuses them): the test
# scripts run their own servers on loopback.
set -euo pipefail
missing=()
[ -n "${CHROMIUM_PATH:-}" ] || [ -x /usr/bin/chromium-headless-shell ] || missing+=(chromium-headless-shell)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} = 0 ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then exit 0; fi
echo "Installing Debian's ${missing[*]} for the tests (a browser takes 10-40 s)."
policy=/usr/sbin/policy-rc.d
made_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1
fi
trap '[ -z "$made_policy" ] || rm -f "$policy"' EXIT
apt-get update -qq || true
# (the headless shell on its own: a Debian without that package still gets the others, and
# ensure-browser.sh then falls back on chromium)
others=()
for package in "${missing[@]}"; do
  if [ "$package" = chromium-headless-shell ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell | grep -E '^Setting up chromium' || true
  else
    others+=("$package")
  fi
done
if [ ${#others[@]} != 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${others[@]}" | grep -E '^(Setting up (nginx|postgresql|redis-server) )' || true
fi
