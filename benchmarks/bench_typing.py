"""Typing benchmark: keystroke -> token spans updated, in real Chromium, split into its steps.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_typing.py [--keys 20] [--preset cl100k_base] [--size 50000]
    .venv/bin/python benchmarks/bench_typing.py --load [--clients 8] [--seconds 15]

A benchmark that prints figures, not a timed test: nothing here passes or
fails. docs/typing.md quotes its output with the machine's load average.

Browser mode (default). The app is served on loopback from a thread, as in
the browser tests and like `make run` (werkzeug, threaded), and opened in
Chromium (`CHROMIUM_PATH`, default /usr/bin/chromium, else the tests'
chromium-headless-shell) on the Bytes page with
a real tokenizer preset. For each of `--keys` key presses, one at a time,
the page records (performance.now() and Resource Timing, inside the page):

- debounce: keydown -> the fragment request starts (htmx `delay:` and its queue);
- request:  request start -> first response byte, less the server's time;
- server:   the app's own wall time for the answer (its Server-Timing header;
            `cpu` there is the answering thread's CPU time);
- transfer: first -> last response byte;
- swap:     last byte -> htmx has swapped the spans in (`htmx:afterSwap`);
- paint:    swap -> the next frame is drawn (two requestAnimationFrame turns).

"total" is keydown -> swap (the figure the goals are about); "painted" adds
the paint step. It waits for each update to be painted before the next key.
Texts: "short", the 43-character sentence below, and "<size/1000>k",
`--size` characters of mixed prose, code and non-Latin text; a key is typed
at the end of each. Also printed: the answer's size (bytes over the wire,
no compression on loopback) and the floor, the median round trip of an empty
fetch to /healthz from the same page.

Load mode (--load). The production command (`make serve-prod`: gunicorn -c
gunicorn.conf.py wsgi:app, its default workers) on a loopback port and
`--clients` processes, each typing the short sentence one key at a time
into the fragment endpoint as fast as answers come (keep-alive, no think
time): responses per second, latency p50 / p99, and the server CPU per
answer (Server-Timing `cpu`). The clients run on the same machine and take
CPU from the server too.

No downloads: the preset comes from the npm package installed at setup.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing as mp
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

#: The desktop browser a person runs, else the headless shell the tests use (the output names it).
CHROMIUM = os.environ.get("CHROMIUM_PATH") or next(
    (path for path in ("/usr/bin/chromium", "/usr/bin/chromium-headless-shell") if os.access(path, os.X_OK)),
    "/usr/bin/chromium")
SHORT = "The quick brown fox jumps over the lazy dog"
STEPS = ("debounce", "request", "server", "transfer", "swap", "paint")

# Installed once per page: for each key, its keydown time, the swap time of
# the next update of #results and the frame after it, and that update's
# Resource Timing entry (with the server's Server-Timing figures).
PROBE = """() => {
  window.__typing = [];
  let pressed = null;
  document.addEventListener('keydown', () => { pressed = performance.now(); performance.clearResourceTimings(); }, true);
  document.addEventListener('htmx:afterSwap', (e) => {
    if (pressed === null || !e.detail.target || e.detail.target.id !== 'results') { return; }
    const down = pressed, swapped = performance.now();
    pressed = null;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const painted = performance.now();
      const entry = performance.getEntriesByType('resource').filter(r => r.name.includes('/fragments/')).pop();
      const timing = {};
      for (const t of (entry && entry.serverTiming) || []) { timing[t.name] = t.duration; }
      window.__typing.push({down, swapped, painted,
        start: entry ? entry.startTime : NaN, requestStart: entry ? entry.requestStart : NaN,
        responseStart: entry ? entry.responseStart : NaN, responseEnd: entry ? entry.responseEnd : NaN,
        bytes: entry ? entry.encodedBodySize : NaN, app: timing.app, cpu: timing.cpu});
    }));
  });
}"""


def long_text(size: int) -> str:
    """`size` characters of mixed text: prose and code from the standard library, non-Latin text."""
    import corpus

    text = corpus.mixed_text(size) if hasattr(corpus, "mixed_text") else ""
    if len(text) < size:
        base = (Path(__file__).parent / "data" / "non_latin.txt").read_text(encoding="utf-8")
        prose = Path(statistics.__file__).read_text(encoding="utf-8")
        text = (prose + "\n" + base) * (size // (len(prose) + len(base)) + 1)
    return text[:size]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def steps_of(record: dict[str, float]) -> dict[str, float]:
    """One key's time split into STEPS (ms), plus total (to the swap), painted, cpu and bytes."""
    server = record["app"] if record.get("app") is not None else 0.0
    return {
        "debounce": record["start"] - record["down"],
        "request": record["responseStart"] - record["start"] - server,
        "server": server,
        "transfer": record["responseEnd"] - record["responseStart"],
        "swap": record["swapped"] - record["responseEnd"],
        "paint": record["painted"] - record["swapped"],
        "total": record["swapped"] - record["down"],
        "painted": record["painted"] - record["down"],
        "cpu": record["cpu"] if record.get("cpu") is not None else float("nan"),
        "bytes": record["bytes"],
    }


def measure(page: Any, keys: int) -> list[dict[str, float]]:
    """Type `keys` letters at the end of the text box, one at a time; each key's steps."""
    page.locator("#f-text").focus()
    page.evaluate("() => { const t = document.getElementById('f-text'); t.selectionStart = t.selectionEnd = t.value.length; }")
    page.evaluate(PROBE)
    for n in range(keys):
        page.keyboard.type("abcdefghijklmnopqrstuvwxyz"[n % 26])
        page.wait_for_function(f"window.__typing.length >= {n + 1}", timeout=30_000)
        page.wait_for_timeout(100)  # nothing left in flight before the next key
    return [steps_of(r) for r in page.evaluate("window.__typing")]


def floor_ms(page: Any, times: int = 20) -> float:
    """Median round trip of an empty request from the page (the reference)."""
    values = page.evaluate(
        """async (n) => { const out = [];
             for (let i = 0; i < n; i++) { const t = performance.now();
               await fetch('/healthz', {cache: 'no-store'}); out.push(performance.now() - t); }
             return out; }""",
        times,
    )
    return statistics.median(values)


def browser_mode(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright
    from serving import serve_app

    from webapp import create_app
    from webapp.infra.storage import default_sqlite_url

    presets = args.preset.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"DATABASE_URL": default_sqlite_url(Path(tmp))})
        with serve_app(app, "bench-typing") as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            # bypass_csp: Playwright's wait_for_function evaluates strings, which the app's CSP forbids
            page = browser.new_page(base_url=url, viewport={"width": 1366, "height": 900}, bypass_csp=True)
            for preset in presets:
                for label, text in (("short", SHORT), (f"{args.size // 1000}k", long_text(args.size))):
                    page.goto(f"/bytes?tokenizer={preset}")
                    page.fill("#f-text", text)
                    page.wait_for_function(
                        "n => { const d = document.querySelector('[data-stat=chars] dd');"
                        " return d && d.textContent.replace(/,/g, '') == n; }",
                        arg=str(len(text)), timeout=60_000,
                    )
                    page.wait_for_timeout(300)
                    keys = measure(page, args.keys)
                    rows.append((preset, label, len(text), keys, floor_ms(page)))
            browser.close()
    load = os.getloadavg()
    print(f"keystroke -> spans updated: {args.keys} keys each, {CHROMIUM} on loopback, werkzeug threaded server "
          f"(as make run); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores")
    print("median ms per step (p95 of total and painted in brackets); cpu = server thread CPU; KB = answer size")
    head = f"{'preset':>12} {'text':>6} {'chars':>7} " + " ".join(f"{s:>8}" for s in STEPS)
    print(head + f" {'total':>13} {'painted':>13} {'cpu':>6} {'KB':>6} {'floor':>6}")
    for preset, label, chars, keys, floor in rows:
        med = {k: statistics.median(key[k] for key in keys) for k in (*STEPS, "total", "painted", "cpu", "bytes")}
        p95 = {k: percentile([key[k] for key in keys], 0.95) for k in ("total", "painted")}
        print(f"{preset:>12} {label:>6} {chars:>7,} " + " ".join(f"{med[s]:>8.1f}" for s in STEPS)
              + f" {med['total']:>5.0f} ({p95['total']:>4.0f})"
              + f" {med['painted']:>5.0f} ({p95['painted']:>4.0f})"
              + f" {med['cpu']:>6.1f} {med['bytes'] / 1024:>6.1f} {floor:>6.1f}")
    print("share of the median total + paint: " + "; ".join(
        f"{preset} {label}: " + ", ".join(
            f"{s} {100 * statistics.median(k[s] for k in keys) / max(1e-9, sum(statistics.median(k[t] for k in keys) for t in STEPS)):.0f}%"
            for s in STEPS)
        for preset, label, _chars, keys, _floor in rows))


# --------------------------------------------------------------------------- load mode


def _client(port: int, preset: str, seconds: float, seed: int, out: Any) -> None:
    """Type SHORT and more, key by key, for `seconds`; put (latencies ms, cpu ms) on `out`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    scheme = preset.split("_")[0]
    latencies: list[float] = []
    cpus: list[float] = []
    errors = 0
    text = SHORT
    deadline = time.monotonic() + seconds
    n = seed
    while time.monotonic() < deadline:
        n += 1
        text = text + "abcdefghijklmnopqrstuvwxyz "[n % 27]
        if len(text) > 80:
            text = SHORT
        body = urlencode({"text": text, "tokenizer": preset, "pretokenize": scheme, "view": "tokens"})
        started = time.perf_counter()
        try:
            conn.request("POST", "/fragments/bytes", body=body, headers={
                "Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"})
            response = conn.getresponse()
            response.read()
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            continue
        latencies.append((time.perf_counter() - started) * 1000)
        if response.status != 200:
            errors += 1
        match = re.search(r"cpu;dur=([0-9.]+)", response.getheader("Server-Timing") or "")
        if match:
            cpus.append(float(match.group(1)))
    out.put((latencies, cpus, errors))


def _server_cpu_seconds(master: int) -> float:
    """CPU seconds (user + system) used so far by gunicorn's master and its workers (Linux /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == master or ppid == master:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def load_mode(args: argparse.Namespace) -> None:
    from load_test import Server, free_port

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(port, f"sqlite:///{tmp}/db.sqlite3", None, Path(tmp) / "gunicorn.log")
        server.start()
        try:
            warm = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for _ in range(20):  # every worker loads the preset before the clock starts
                warm.request("POST", "/fragments/bytes", body=urlencode({"text": SHORT, "tokenizer": args.preset}),
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
                warm.getresponse().read()
            queue: Any = mp.Queue()
            procs = [mp.Process(target=_client, args=(port, args.preset, args.seconds, k * 7, queue))
                     for k in range(args.clients)]
            assert server.process is not None
            cpu_before = _server_cpu_seconds(server.process.pid)
            started = time.monotonic()
            for proc in procs:
                proc.start()
            results = [queue.get() for _ in procs]
            elapsed = time.monotonic() - started
            cpu_used = _server_cpu_seconds(server.process.pid) - cpu_before
            for proc in procs:
                proc.join()
        finally:
            server.stop()
    latencies = [x for lat, _, _ in results for x in lat]
    cpus = [x for _, cpu, _ in results for x in cpu]
    errors = sum(e for _, _, e in results)
    load = os.getloadavg()
    print(f"load: {args.clients} clients typing the short sentence ({args.preset}) against gunicorn "
          f"(make serve-prod's command, {os.cpu_count()} cores), {args.seconds:g} s; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    rendering = f"{statistics.median(cpus):.1f} ms (p99 {percentile(cpus, 0.99):.1f} ms)" if cpus else "not reported"
    print(f"{len(latencies) / elapsed:.0f} responses/s, latency p50 {percentile(latencies, 0.5):.0f} ms, "
          f"p99 {percentile(latencies, 0.99):.0f} ms, errors {errors}")
    print(f"server CPU per answer: {1000 * cpu_used / max(1, len(latencies)):.1f} ms in all (gunicorn's processes, "
          f"/proc), of which the answer itself (Server-Timing cpu, median) {rendering}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--preset", default="cl100k_base,o200k_base", help="comma-separated presets")
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--load", action="store_true", help="the load mode (gunicorn and typing clients)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15)
    args = parser.parse_args()
    if args.load:
        args.preset = args.preset.split(",")[0]
        load_mode(args)
    else:
        browser_mode(args)


if __name__ == "__main__":
    main()
