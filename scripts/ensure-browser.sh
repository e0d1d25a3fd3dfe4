#!/usr/bin/env bash
# Make sure a Chromium for the Playwright tests exists: CHROMIUM_PATH when set, else Debian's
# chromium-headless-shell (half the CPU of the desktop chromium for the same tests), installed
# when we are root; Debian's chromium stands in when the headless shell cannot be had.
# tests/conftest.py picks the browser in the same order.
set -euo pipefail
shell=/usr/bin/chromium-headless-shell
if [ -n "${CHROMIUM_PATH:-}" ]; then
  if [ -x "$CHROMIUM_PATH" ]; then exit 0; fi
  echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable browser." >&2
  exit 1
fi
if [ -x "$shell" ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  # This takes a while (10-40 s); say so and show apt's progress lines.
  echo "No Chromium at $shell: installing Debian's chromium-headless-shell for the browser tests."
  echo "apt-get update..."
  apt-get update -q | grep -v '^\(Hit\|Ign\|Reading\)' || true
  echo "apt-get install chromium-headless-shell..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium-headless-shell \
    | grep -E '^(Get|Unpacking|Setting up chromium|Need to get)' || true
  if [ -x "$shell" ]; then echo "Chromium installed: $shell"; exit 0; fi
fi
if [ -x /usr/bin/chromium ]; then
  echo "No $shell: the browser tests use Debian's chromium (about twice the CPU)." >&2
  exit 0
fi
cat >&2 <<MSG
No Chromium found for the browser tests.
Install Debian's package (sudo apt-get install chromium-headless-shell), or set
CHROMIUM_PATH=/path/to/chromium and run the tests again.
MSG
exit 1
