"""Load test of the production server: gunicorn on loopback, driven from other processes.

What it does:

1. Builds a workload without downloads: byte-level merge rules (default 3,000)
   learned from Python standard-library source text, and texts of a few KB
   from other files of it (so the merges never saw the text they encode).
2. Starts the production server (`gunicorn -c gunicorn.conf.py wsgi:app`, the
   same command as `make serve-prod`) on 127.0.0.1 with a fresh database
   (a SQLite file by default, or --database-url, e.g. PostgreSQL).
3. Drives it for --duration seconds from a separate load-generator process:
   wrk (Debian's package; installed with apt-get when missing and root) with
   benchmarks/load_wrk.lua, or with --driver python this script's own
   generator (--procs processes), --connections keep-alive connections in
   total either way, mixing
   encode requests (POST /api/encode: a few KB of text + the rules), share
   creations (POST /api/share, every one a new state) and share reads
   (GET /api/share/<id> and the shared page GET /s/<id>, half each).
4. Prints requests per second, p50/p99 latency and errors (non-2xx answers,
   connection errors, timeouts; the Python generator also checks every encode
   answer's ids and reports latency per kind of request).
5. Stops the server, starts it again on the same database and checks that
   every share created during the run reads back identically (the state that
   comes back equals the state that was sent), and that its page opens.

It does not tune the server: it measures the shipped configuration
(WEB_CONCURRENCY workers from gunicorn.conf.py unless --workers is given).
Results also go to benchmarks/results/ (git-ignored) as JSON.

Usage:  .venv/bin/python benchmarks/load_test.py [--driver auto|wrk|python]
        [--duration 20] [--connections 8] [--procs 2] [--workers N]
        [--rules 3000] [--text-bytes 4000] [--database-url postgresql://...]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402  (benchmarks/corpus.py: stdlib text, deterministic)

from webapp.tokenizer import bpe_merges, encode  # noqa: E402

KINDS = ("encode", "share", "read")


# ----------------------------------------------------------------- workload


def byte_level_merges(words: list[str], count: int) -> list[list[int]]:
    """Byte-level rules [left, right, new] learned with the playground's trainer.

    Each word's UTF-8 bytes are spelled as latin-1 characters, so the
    character-level trainer learns byte pairs; single characters are byte
    ids and the k-th merged token gets id 256 + k.
    """
    spelled = [w.encode("utf-8").decode("latin-1") for w in words]
    learned = bpe_merges(spelled, count)
    ids: dict[str, int] = {chr(b): b for b in range(256)}
    rules: list[list[int]] = []
    for token in learned:
        # Find the split the trainer used: both halves are known tokens.
        for cut in range(len(token) - 1, 0, -1):
            left, right = token[:cut], token[cut:]
            if left in ids and right in ids:
                break
        else:  # pragma: no cover - the trainer only joins known tokens
            raise RuntimeError(f"cannot split learned token {token!r}")
        ids.setdefault(token, 256 + len(rules))
        rules.append([ids[left], ids[right], ids[token]])
    return rules


@dataclass
class Workload:
    merges: list[list[int]]
    encode_bodies: list[bytes]
    encode_expected: list[list[int]]
    share_text: str


def build_workload(rules: int, text_bytes: int, variants: int = 24) -> Workload:
    train = corpus.english_text(0, 400_000)
    merges = byte_level_merges(corpus.split_words(train), rules)
    source = corpus.english_text(1, text_bytes * (variants + 1))
    texts = [source[i * text_bytes : (i + 1) * text_bytes] for i in range(variants)]
    bodies = [json.dumps({"text": t, "merges": merges}).encode() for t in texts]
    expected = [encode(t, merges) for t in texts]
    # A run id keeps every run's new shares new, even on a database reused across runs.
    run_id = f"run {time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    return Workload(merges, bodies, expected, f"{source[:1500]} ({run_id})")


# ----------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """The production command on a loopback port, in its own process group."""

    def __init__(self, port: int, database_url: str, workers: int | None, log: Path) -> None:
        self.port, self.database_url, self.workers, self.log = port, database_url, workers, log
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {**os.environ, "BIND": f"127.0.0.1:{self.port}", "PLAYGROUND_DATABASE_URL": self.database_url,
               "ACCESS_LOG": "/dev/null"}
        if self.workers:
            env["WEB_CONCURRENCY"] = str(self.workers)
        out = open(self.log, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
            cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"gunicorn exited ({self.process.returncode}); see {self.log}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    conn.close()
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("gunicorn did not become healthy within 60 s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


# ----------------------------------------------------------------- load generator


@dataclass
class ClientResult:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    errors: dict[str, int] = field(default_factory=dict)
    created: list[tuple[str, dict[str, str]]] = field(default_factory=list)


class Client:
    """One keep-alive connection issuing the mixed requests until the deadline."""

    def __init__(self, port: int, name: str, workload: Workload, read_ids: list[str],
                 weights: dict[str, int], seed: int) -> None:
        self.port, self.name, self.workload, self.read_ids = port, name, workload, read_ids
        self.kinds = [k for k in KINDS for _ in range(weights[k])]
        self.rng = random.Random(seed)
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.result = ClientResult()
        self.count = 0

    def _call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()  # reconnect on the next request
            raise

    def _error(self, what: str) -> None:
        self.result.errors[what] = self.result.errors.get(what, 0) + 1

    def one(self) -> None:
        kind = self.rng.choice(self.kinds)
        self.count += 1
        started = time.perf_counter()
        try:
            if kind == "encode":
                i = self.rng.randrange(len(self.workload.encode_bodies))
                status, raw = self._call("POST", "/api/encode", self.workload.encode_bodies[i])
                ok = status == 200 and json.loads(raw)["ids"] == self.workload.encode_expected[i]
            elif kind == "share":
                state = share_state(self.workload, f"[{self.name} #{self.count}]")
                status, raw = self._call("POST", "/api/share", json.dumps(state).encode())
                ok = status == 201
                if ok:
                    self.result.created.append((json.loads(raw)["id"], state))
            else:
                share_id = self.rng.choice(self.read_ids)
                if self.rng.random() < 0.5:
                    status, raw = self._call("GET", f"/api/share/{share_id}")
                    ok = status == 200 and json.loads(raw)["id"] == share_id
                else:
                    status, raw = self._call("GET", f"/s/{share_id}")
                    ok = status == 200 and b"data-token-id" in raw
        except (OSError, http.client.HTTPException) as exc:
            self._error(f"{kind}: {type(exc).__name__}")
            return
        elapsed = time.perf_counter() - started
        if ok:
            self.result.latencies[kind].append(elapsed)
        else:
            self._error(f"{kind}: HTTP {status}" if status >= 300 else f"{kind}: wrong answer")


def _driver_process(port: int, proc: int, connections: int, workload: Workload, read_ids: list[str],
                    weights: dict[str, int], start_at: float, stop_at: float, out: Any) -> None:
    """A load-generator process: `connections` threads, one connection each."""
    clients = [Client(port, f"p{proc}c{c}", workload, read_ids, weights, seed=proc * 1000 + c)
               for c in range(connections)]

    def run(client: Client) -> None:
        while time.time() < start_at:
            time.sleep(0.005)
        while time.time() < stop_at:
            client.one()

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    merged = ClientResult()
    for c in clients:
        for k in KINDS:
            merged.latencies[k].extend(c.result.latencies[k])
        for e, n in c.result.errors.items():
            merged.errors[e] = merged.errors.get(e, 0) + n
        merged.created.extend(c.result.created)
    out.put((merged.latencies, merged.errors, merged.created))


# ----------------------------------------------------------------- report


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summarize(latencies: dict[str, list[float]], errors: dict[str, int], seconds: float) -> dict[str, Any]:
    everything = [v for k in KINDS for v in latencies[k]]
    total_errors = sum(errors.values())
    rows = {}
    for kind in KINDS + ("all",):
        values = everything if kind == "all" else latencies[kind]
        rows[kind] = {
            "requests": len(values),
            "req_per_s": round(len(values) / seconds, 1),
            "p50_ms": round(percentile(values, 0.50) * 1000, 1),
            "p99_ms": round(percentile(values, 0.99) * 1000, 1),
            "mean_ms": round(statistics.fmean(values) * 1000, 1) if values else None,
        }
    return {"seconds": round(seconds, 1), "kinds": rows, "errors": errors, "error_count": total_errors}


def print_summary(summary: dict[str, Any]) -> None:
    print(f"\n{'kind':<8} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for kind, row in summary["kinds"].items():
        print(f"{kind:<8} {row['requests']:>9} {row['req_per_s']:>8} {row['p50_ms']:>8} {row['p99_ms']:>8}")
    print(f"errors: {summary['error_count']} {summary['errors'] or ''}")


def verify_after_restart(port: int, created: list[tuple[str, dict[str, str]]]) -> tuple[int, list[str]]:
    """Every created share reads back identically; a sample of pages opens."""
    problems: list[str] = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for n, (share_id, state) in enumerate(created):
        conn.request("GET", f"/api/share/{share_id}")
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            problems.append(f"{share_id}: HTTP {response.status}")
        elif json.loads(body)["state"] != state:
            problems.append(f"{share_id}: state differs")
        if n % 50 == 0:
            conn.request("GET", f"/s/{share_id}")
            page = conn.getresponse()
            marker = "[" + state["text"].rsplit(" [", 1)[1]  # "[p0c1 #12]": nothing to escape
            if page.status != 200 or marker.encode() not in page.read():
                problems.append(f"{share_id}: page did not open with its text")
    conn.close()
    return len(created), problems


# ----------------------------------------------------------------- wrk driver

SHARE_MERGES = "[[104, 101, 256], [256, 108, 257]]"


def share_state(workload: Workload, marker: str) -> dict[str, str]:
    """The state a share request sends (both drivers send exactly this)."""
    return {"tool": "bytes", "text": f"{workload.share_text} {marker}", "merges": SHARE_MERGES, "view": "tokens"}


def find_wrk() -> str | None:
    """wrk on PATH; installs Debian's package when missing and root."""
    found = shutil.which("wrk")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print("installing Debian's wrk ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], env=env, stdout=subprocess.DEVNULL, check=False)
    if not shutil.which("wrk"):
        subprocess.run(["apt-get", "update", "-qq"], env=env, stdout=subprocess.DEVNULL, check=False)
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], env=env, stdout=subprocess.DEVNULL, check=False)
    return shutil.which("wrk")


def run_wrk(wrk: str, port: int, workload: Workload, read_ids: list[str], weights: dict[str, int],
            connections: int, duration: float, load_dir: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, str]]], str]:
    """One wrk run (one thread per connection); returns summary, created shares, raw output."""
    load_dir.mkdir(parents=True, exist_ok=True)
    for i, body in enumerate(workload.encode_bodies, start=1):
        (load_dir / f"encode-{i}.json").write_bytes(body)
    (load_dir / "read-ids.txt").write_text("\n".join(read_ids) + "\n")
    (load_dir / "mix.txt").write_text("".join(f"{k}\n" * weights[k] for k in KINDS))
    (load_dir / "share-prefix.txt").write_text(json.dumps(workload.share_text)[1:-1])
    (load_dir / "share-merges.txt").write_text(json.dumps(SHARE_MERGES)[1:-1])
    command = [wrk, "-t", str(connections), "-c", str(connections), "-d", f"{max(1, round(duration))}s",
               "--timeout", "30s", "--latency", "-s", str(Path(__file__).with_name("load_wrk.lua")),
               f"http://127.0.0.1:{port}"]
    done = subprocess.run(command, env={**os.environ, "LOAD_DIR": str(load_dir)}, capture_output=True,
                          text=True, timeout=duration + 300)
    match = re.search(r"^WRK_JSON (.*)$", done.stdout, re.MULTILINE)
    if done.returncode != 0 or not match:
        raise SystemExit(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    raw = json.loads(match.group(1))
    seconds = raw["duration_us"] / 1e6
    error_kinds = {k: raw[k] for k in ("connect_errors", "read_errors", "write_errors", "status_errors", "timeouts") if raw[k]}
    summary = {
        "seconds": round(seconds, 1),
        "kinds": {"all": {
            "requests": raw["requests"],
            "req_per_s": round(raw["requests"] / seconds, 1),
            "p50_ms": round(raw["p50_us"] / 1000, 1),
            "p99_ms": round(raw["p99_us"] / 1000, 1),
            "mean_ms": round(raw["mean_us"] / 1000, 1),
        }},
        "errors": error_kinds,
        "error_count": sum(error_kinds.values()),
    }
    created = []
    for path in sorted(load_dir.glob("created-*.txt")):
        for line in path.read_text().splitlines():
            share_id, _, marker = line.partition(" ")
            created.append((share_id, share_state(workload, marker)))
    summary["kinds"]["all"]["shares_created"] = len(created)
    output = done.stdout.replace(match.group(0), "").strip()
    return summary, created, output


# ----------------------------------------------------------------- main


def run_python_driver(port: int, workload: Workload, read_ids: list[str], weights: dict[str, int],
                      args: argparse.Namespace) -> tuple[dict[str, Any], list[tuple[str, dict[str, str]]]]:
    """This script's own generator: --procs processes, threads with one connection each."""
    procs = max(1, args.procs)
    per_proc = [args.connections // procs + (1 if i < args.connections % procs else 0) for i in range(procs)]
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    start_at = time.time() + 1.0
    stop_at = start_at + args.duration
    drivers = [ctx.Process(target=_driver_process, args=(port, i, n, workload, read_ids, weights, start_at, stop_at, out))
               for i, n in enumerate(per_proc) if n > 0]
    for d in drivers:
        d.start()
    latencies: dict[str, list[float]] = {k: [] for k in KINDS}
    errors: dict[str, int] = {}
    created: list[tuple[str, dict[str, str]]] = []
    for _ in drivers:
        lat, err, made = out.get(timeout=args.duration + 300)
        for k in KINDS:
            latencies[k].extend(lat[k])
        for e, n in err.items():
            errors[e] = errors.get(e, 0) + n
        created.extend(made)
    for d in drivers:
        d.join()
    return summarize(latencies, errors, args.duration), created


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--driver", choices=["auto", "wrk", "python"], default="auto",
                        help="load generator: wrk (default when available) or this script's own")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load (default 20)")
    parser.add_argument("--connections", type=int, default=8, help="concurrent connections in total (default 8)")
    parser.add_argument("--procs", type=int, default=2, help="load-generator processes (default 2)")
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers (default: gunicorn.conf.py)")
    parser.add_argument("--rules", type=int, default=3000, help="merge rules per encode request (default 3000)")
    parser.add_argument("--text-bytes", type=int, default=4000, help="characters of text per encode (default 4000)")
    parser.add_argument("--mix", default="encode=6,share=2,read=2", help="request weights (default encode=6,share=2,read=2)")
    parser.add_argument("--database-url", default=None, help="default: a fresh SQLite file under benchmarks/results/")
    args = parser.parse_args()
    weights = {k: 0 for k in KINDS}
    for part in args.mix.split(","):
        name, _, weight = part.partition("=")
        weights[name.strip()] = int(weight)

    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    database_url = args.database_url or f"sqlite:///{tempfile.mkdtemp(prefix=f'load-{stamp}-', dir=results)}/playground.sqlite3"

    t0 = time.perf_counter()
    workload = build_workload(args.rules, args.text_bytes)
    body_kb = statistics.fmean(len(b) for b in workload.encode_bodies) / 1024
    print(f"workload: {len(workload.merges)} rules, {args.text_bytes} chars of text per encode "
          f"({body_kb:.0f} KB JSON body), built in {time.perf_counter() - t0:.1f}s")

    port = free_port()
    log = results / f"load-{stamp}-gunicorn.log"
    server = Server(port, database_url, args.workers, log)
    server.start()
    try:
        # Shares to read during the run, created before the clock starts.
        seed_client = Client(port, "seed", workload, [], {"encode": 0, "share": 1, "read": 0}, seed=7)
        for _ in range(40):
            seed_client.one()
        read_ids = [share_id for share_id, _ in seed_client.result.created]
        created = list(seed_client.result.created)

        wrk = find_wrk() if args.driver in ("auto", "wrk") else None
        if args.driver == "wrk" and not wrk:
            raise SystemExit("wrk is not installed (apt-get install wrk), use --driver python")
        driver = "wrk" if wrk else "python"
        if wrk:
            summary, made, wrk_output = run_wrk(wrk, port, workload, read_ids, weights, args.connections,
                                                args.duration, Path(tempfile.mkdtemp(prefix=f"load-{stamp}-wrk-", dir=results)))
            created.extend(made)
            generator = f"wrk, {args.connections} threads x 1 connection"
        else:
            summary, made = run_python_driver(port, workload, read_ids, weights, args)
            created.extend(made)
            generator = f"python, {args.procs} processes"
    finally:
        server.stop()

    workers = args.workers or "gunicorn.conf.py default"
    print(f"server: gunicorn, {workers} workers, database {database_url.split('://')[0]}; "
          f"load: {args.connections} connections ({generator}) for {args.duration:.0f}s, mix {args.mix}")
    if driver == "wrk":
        print(wrk_output)
    print_summary(summary)

    # Restart on the same database and read everything back.
    server = Server(port, database_url, args.workers, log)
    server.start()
    try:
        checked, problems = verify_after_restart(port, created)
    finally:
        server.stop()
    print(f"after restart: {checked} shares created, {checked - len(problems)} read back identically"
          + (f"; problems: {problems[:5]}" if problems else ""))

    summary.update({
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "driver": driver, "workers": args.workers, "connections": args.connections, "procs": args.procs,
        "rules": len(workload.merges), "text_chars": args.text_bytes, "mix": args.mix,
        "database": database_url.split("://")[0], "shares_checked": checked, "share_problems": problems,
        "cpu_count": os.cpu_count(),
    })
    (results / f"load-{stamp}.json").write_text(json.dumps(summary, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
