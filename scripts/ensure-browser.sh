#!/usr/bin/env bash
# Make sure a Chromium for the Playwright tests exists. Uses CHROMIUM_PATH when
# set, else /usr/bin/chromium, installing Debian's package when we are root.
set -euo pipefail
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$browser" ]; then exit 0; fi
if [ -n "${CHROMIUM_PATH:-}" ]; then
  echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable browser." >&2
  exit 1
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  # This takes a while (30-40 s, about 100 MB); say so and show apt's progress lines.
  echo "No Chromium at $browser: installing Debian's chromium for the browser tests (takes 30-40 s)."
  echo "apt-get update..."
  apt-get update -q | grep -v '^\(Hit\|Ign\|Reading\)' || true
  echo "apt-get install chromium..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium | grep -E '^(Get|Unpacking|Setting up chromium|Need to get)' || true
  if [ ! -x "$browser" ]; then echo "Installing chromium failed (see above)." >&2; exit 1; fi
  echo "Chromium installed: $browser"
  exit 0
fi
cat >&2 <<MSG
No Chromium found for the browser tests.
Install Debian's package (sudo apt-get install chromium), or set
CHROMIUM_PATH=/path/to/chromium and run the tests again.
MSG
exit 1
