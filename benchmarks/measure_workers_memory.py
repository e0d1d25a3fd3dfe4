"""The memory of N gunicorn workers once every preset has been used: the sum of their PSS.

    .venv/bin/python benchmarks/measure_workers_memory.py [--workers 4] [--preload 1|0]

Starts `gunicorn -c gunicorn.conf.py wsgi:app` on a free port (PRESETS_PRELOAD
as given: 1 opens the prepared presets in the master before the fork, so the
workers share them copy-on-write; 0 lets each worker open its own), sends
bursts of concurrent encode requests for every preset (so that every worker
serves some of each), then reads each worker's RSS and PSS from
/proc/<pid>/smaps_rollup and prints them and the sum of the PSS (the memory
the workers take in all, shared pages counted once). Stops the server.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webapp.tokenizer import PRESET_NAMES  # noqa: E402

TEXT = "Hello world! Tiếng Việt 東京 👍🏽 def f(x): return x  " * 40


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memory(pid: int) -> tuple[float, float]:
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts[0] in ("Rss:", "Pss:"):
                values[parts[0]] = int(parts[1]) / 1024
    return values["Rss:"], values["Pss:"]


def encode(port: int, name: str) -> int:
    body = json.dumps({"text": TEXT}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/tokenizers/{name}/encode", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return int(response.status)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--preload", default="1")
    args = parser.parse_args()
    port = free_port()
    env = dict(os.environ, BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY=str(args.workers), ACCESS_LOG="/dev/null",
               PRESETS_PRELOAD=args.preload, GUNICORN_TIMEOUT="300")
    started = time.perf_counter()
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "-c", "gunicorn.conf.py", "wsgi:app"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
                break
            except OSError:
                if server.poll() is not None or time.perf_counter() - started > 300:
                    raise SystemExit(f"the server did not start: {server.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
                time.sleep(0.2)
        print(f"first answer after {time.perf_counter() - started:.1f} s (preload {args.preload})")
        with ThreadPoolExecutor(max_workers=2 * args.workers) as pool:
            for _ in range(3):
                for name in PRESET_NAMES:
                    assert all(s == 200 for s in pool.map(lambda _i: encode(port, name), range(4 * args.workers)))
        children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
        total = 0.0
        for pid in map(int, children):
            rss, pss = memory(pid)
            total += pss
            print(f"worker {pid}: RSS {rss:6.0f} MB  PSS {pss:6.0f} MB")
        rss, pss = memory(server.pid)
        print(f"master {server.pid}: RSS {rss:6.0f} MB  PSS {pss:6.0f} MB")
        print(f"sum of the workers' PSS: {total:.0f} MB; with the master: {total + pss:.0f} MB")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
