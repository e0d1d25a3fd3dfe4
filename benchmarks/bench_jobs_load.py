"""Does the web server stay responsive while heavy background jobs run?

Starts the production setup on loopback (gunicorn with its default workers,
plus one job worker `python -m webapp.worker` with its default JOB_WORKERS),
with a fresh SQLite database and queue in a temporary folder. Then:

1. reference: probes `/healthz` and a small `/api/encode` (200 characters,
   100 rules) one after another for a few seconds with no job running;
2. load: queues 8 heavy training jobs through `/api/train` (each 202), and
   probes the same two routes the same way until every job has finished.

Prints p50 / p99 / max latency of each route in both phases, the ratio
load / reference, and how long the jobs took. The target (issue 8) is a p99
of at most 100 ms for both routes under load; the exit code is 1 if missed.

    .venv/bin/python benchmarks/bench_jobs_load.py [--jobs 8] [--merges 20000]

The probe client shares the machine's cores with the server and the jobs,
so the figures are a floor for a real deployment.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import english_text, split_words  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes, float]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
        response = conn.getresponse()
        data = response.read()
        return response.status, data, time.perf_counter() - started
    finally:
        conn.close()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def probe_round(port: int, small: bytes, out: dict[str, list[float]]) -> None:
    for name, method, path, body in (("healthz", "GET", "/healthz", None),
                                     ("small encode", "POST", "/api/encode", small)):
        status, _data, seconds = request(port, method, path, body)
        if status != 200:
            raise SystemExit(f"{path} answered {status}")
        out[name].append(seconds)
        time.sleep(0.02)


def summary(label: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{label:<13} n={len(ms):4d}  p50 {statistics.median(ms):6.1f} ms  "
            f"p99 {percentile(ms, 99):6.1f} ms  max {max(ms):6.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--words", type=int, default=400_000, help="training words per job")
    parser.add_argument("--merges", type=int, default=20_000, help="merges per job")
    parser.add_argument("--reference-seconds", type=float, default=5)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    port = free_port()
    env = {**os.environ, "BIND": f"127.0.0.1:{port}", "ACCESS_LOG": "/dev/null",
           "PLAYGROUND_DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
           "PLAYGROUND_QUEUE_URL": f"sqlite:///{folder / 'queue.sqlite3'}"}
    log = open(folder / "server.log", "wb")
    web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
                           cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
    worker = subprocess.Popen([sys.executable, "-m", "webapp.worker"], cwd=ROOT, env=env,
                              stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"server did not start; see {folder / 'server.log'}")
            time.sleep(0.2)

        rnd = random.Random(11)
        rules = [[97 + i % 26, 97 + (i * 5) % 26, 256 + i] for i in range(100)]
        small = json.dumps({"text": "".join(rnd.choice("abcdefg ") for _ in range(200)), "merges": rules}).encode()
        words = split_words(english_text(0, 3_000_000))

        reference: dict[str, list[float]] = {"healthz": [], "small encode": []}
        end = time.monotonic() + args.reference_seconds
        while time.monotonic() < end:
            probe_round(port, small, reference)

        urls = []
        started = time.monotonic()
        for i in range(args.jobs):
            start = (i * 37_000) % max(1, len(words) - args.words)
            body = json.dumps({"words": words[start:start + args.words], "num_merges": args.merges}).encode()
            status, data, _s = request(port, "POST", "/api/train", body)
            if status != 202:
                raise SystemExit(f"/api/train answered {status}, not 202: {data[:200]!r}")
            urls.append(json.loads(data)["url"])
        queued = time.monotonic() - started

        loaded: dict[str, list[float]] = {"healthz": [], "small encode": []}
        states: list[str] = []
        while True:
            probe_round(port, small, loaded)
            if len(loaded["healthz"]) % 10 == 0:
                states = [json.loads(request(port, "GET", url)[1])["state"] for url in urls]
                if all(s in ("done", "failed", "cancelled") for s in states):
                    break
            if time.monotonic() - started > 600:
                raise SystemExit("jobs did not finish in 10 minutes")
        took = time.monotonic() - started

        print(f"{args.jobs} training jobs ({args.words:,} words, {args.merges:,} merges each), "
              f"queued in {queued:.2f} s, all finished after {took:.1f} s: {', '.join(sorted(set(states)))}")
        print("reference (no jobs):")
        for name, values in reference.items():
            print("  " + summary(name, values))
        print("under load:")
        ok = True
        for name, values in loaded.items():
            ratio = percentile(values, 99) / percentile(reference[name], 99)
            print("  " + summary(name, values) + f"  (p99 {ratio:.1f}x the reference)")
            ok = ok and percentile(values, 99) <= 0.100
        print("target p99 <= 100 ms under load:", "met" if ok else "MISSED")
        return 0 if ok else 1
    finally:
        for process in (worker, web):
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(process.pid, signal.SIGKILL)


if __name__ == "__main__":
    raise SystemExit(main())
