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
  echo "Installing Debian's chromium for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
cat >&2 <<MSG
No Chromium found for the browser tests.
Install Debian's package (sudo apt-get install chromium), or set
CHROMIUM_PATH=/path/to/chromium and run the tests again.
MSG
exit 1
