#!/usr/bin/env bash
# Make sure Debian's nginx is installed: it buffers request bodies in front of
# gunicorn in production (scripts/serve-prod.sh, docs/production-topology.md),
# so a slow upload never holds a gunicorn worker.
#
# Installs the `nginx` package when it is missing and we are root with
# apt-get; the package's own service is not started (a policy-rc.d refuses it
# during the install): the playground runs nginx itself, with its own
# configuration, on the address it is given. Prints the nginx binary's path on
# stdout; exits 1 when nginx is missing and cannot be installed here (then
# serve-prod.sh serves with gunicorn alone and says so; the tests that need
# nginx skip and say why).
set -euo pipefail
find_nginx() { command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; }; }
if binary="$(find_nginx)"; then echo "$binary"; exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's nginx (the request-buffering proxy of serve-prod)..." >&2
  policy=/usr/sbin/policy-rc.d
  made_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1
  fi
  status=0
  apt-get update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >&2 || status=$?
  if [ -n "$made_policy" ]; then rm -f "$policy"; fi
  if [ "$status" = 0 ] && binary="$(find_nginx)"; then echo "$binary"; exit 0; fi
fi
echo "nginx is not installed and cannot be installed here (needs root + apt-get)." >&2
exit 1
