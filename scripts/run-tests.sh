#!/usr/bin/env bash
# Every test, as `make test` runs them (docs/testing.md): usage run-tests.sh PYTHON [PYTEST ARGS...]
#
# 1. Throwaway PostgreSQL and Redis servers on loopback (ensure-postgres.sh,
#    ensure-redis.sh), unless PLAYGROUND_TEST_POSTGRES_URL / PLAYGROUND_TEST_REDIS_URL
#    name servers of your own; a server this run started is stopped at the end
#    (also on failure or Ctrl-C), one that already ran is left running.
# 2. Every test not marked `alone` on PYTEST_WORKERS (default 3) pytest-xdist workers
#    (three on two cores: some tests wait for a server, a browser or a child process; on one
#    set-up clone, one run after another, 2026-12-07: three workers 417 s and 439 s, four
#    449 s, two 421 s, docs/testing.md),
#    each module's tests on one worker (--dist loadscope), so a server, a browser or an
#    opened preset that a module's tests share is built once; the modules handed out in
#    tests/conftest.py's order (--no-loadscope-reorder: by default pytest-xdist hands out the
#    modules with the most tests first, which put the forking and the long modules late).
# 3. The `alone` tests (time, load, killed processes), one after another with the
#    machine to themselves.
# Exits non-zero when either run failed; the last line ("total: N passed, N failed, N skipped") sums both runs up.
set -uo pipefail
cd "$(dirname "$0")/.."
py="$1"; shift
# Python may write its compiled files here (git-ignored __pycache__/): pytest then rewrites the
# test modules' asserts once, not in every process, and each job worker, gunicorn worker and
# child interpreter a test starts imports webapp without compiling it again.
unset PYTHONDONTWRITEBYTECODE
# One process collects first, while the servers start: it compiles the modules and rewrites the test
# modules' asserts, so the workers, started together, read them instead of each doing it (on a
# fresh clone a worker's collection took 11.6 s of CPU cold, 3.9 s warm).
"$py" -m pytest --collect-only -q -p no:cacheprovider "$@" > /dev/null 2>&1 &
warming=$!
stops=""
url="${PLAYGROUND_TEST_POSTGRES_URL:-}"
if [ -z "$url" ] && ! bash scripts/ensure-postgres.sh running; then stops="postgres"; fi
redis="${PLAYGROUND_TEST_REDIS_URL:-}"
if [ -z "$redis" ] && ! bash scripts/ensure-redis.sh running; then stops="$stops redis"; fi
if [ -n "$stops" ]; then
  trap 'for s in $stops; do echo "Stopping the $s server this test run started."; bash scripts/ensure-$s.sh stop; done' EXIT
  trap 'exit 130' INT TERM
fi
if [ -z "$url" ]; then url="$(bash scripts/ensure-postgres.sh)" || exit 1; fi
if [ -z "$redis" ]; then redis="$(bash scripts/ensure-redis.sh)" || exit 1; fi
export PLAYGROUND_TEST_POSTGRES_URL="$url" PLAYGROUND_TEST_REDIS_URL="$redis"

# The JUnit reports stay in test-artifacts/junit/ (git-ignored): every test's time, to find the slow ones.
wait "$warming"  # (its outcome is the runs' to report)
reports="test-artifacts/junit"
rm -rf "$reports" && mkdir -p "$reports"
run() {  # run NAME ARGS...: pytest with a JUnit report to count from
  local name="$1"; shift
  "$py" -m pytest --junitxml="$reports/$name.xml" "$@"
}
run parallel -n "${PYTEST_WORKERS:-3}" --dist loadscope --no-loadscope-reorder -m "not alone" "$@"; parallel=$?
echo
echo "The tests marked alone, with the machine to themselves:"
# (with no arguments, only the files that mark a test `pytest.mark.alone`: collecting every module again
# took 10 s; tests/conftest.py refuses a test marked alone in another way)
if [ $# -eq 0 ]; then set -- $(grep -rl --include='test_*.py' 'pytest.mark.alone' tests | sort); fi
run alone -p no:xdist -m alone "$@"; alone=$?
# pytest's 5 is "no test selected": a selection (PYTEST_ARGS) may hold no test of one kind.
if [ "$parallel" = 5 ] && [ "$alone" != 5 ]; then parallel=0; fi
if [ "$alone" = 5 ] && [ "$parallel" = 0 ]; then alone=0; fi
"$py" - "$reports" <<'PY'
import sys, pathlib, xml.etree.ElementTree as ET
totals = dict(tests=0, failures=0, errors=0, skipped=0)
for report in pathlib.Path(sys.argv[1]).glob("*.xml"):
    for suite in ET.parse(report).getroot().iter("testsuite"):
        for key in totals:
            totals[key] += int(suite.get(key, 0))
passed = totals["tests"] - totals["failures"] - totals["errors"] - totals["skipped"]
print(f"total: {passed} passed, {totals['failures'] + totals['errors']} failed, {totals['skipped']} skipped")
PY
if [ "$parallel" != 0 ]; then exit "$parallel"; fi
exit "$alone"
