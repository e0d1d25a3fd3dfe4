"""The production command under load from misbehaving clients, on loopback only.

Starts `scripts/serve-prod.sh` (what `make serve-prod` runs: Debian's nginx
buffering request bodies, gunicorn's workers behind it, one job worker with
its default JOB_WORKERS) with a fresh SQLite database and queue in a
temporary folder, and default settings otherwise. Clients are told apart by
their source address: each client below connects from its own loopback
address (127.0.0.x), as real clients would from their own hosts. Then, one
after another (issue 17's rows):

1. a burst of 50 shares of 1 MB from one client (row 5): how many were stored
   and how many refused (429), the Retry-After, the database's growth;
2. 8 slow uploads from 8 clients, each body trickling in over --slow-seconds
   (row 4): /healthz p50 / p99 / max while they are sent;
3. one client sends 50 corpus uploads, then a second client one small one
   (row 2): what the first got (202 / 429 and why), how long the second
   client's job waited and how many of the first client's jobs ran before it;
4. 8 heavy training jobs queued, /healthz and a small /api/encode probed until
   they finish (issue 8): p50 / p99 / max against a reference without jobs.

First, issue 44's worst tokenizer files (benchmarks/hostile_files.py): each
opened and used once (a regex bomb in a tokenizer.json and in a Tekken file, a
.model charsmap rule of 20,000 `a`, a user-defined piece of 19,999 `a` + `b`,
3,000 ids of a 100,000-character piece decoded): time, worker memory growth
(peak and kept) and /healthz meanwhile.

And issue 28's figures, then: the worst opened chat template of each kind
(rows 1-3: a worker's time and memory); /healthz p50 / p99 / max while 4
hostile chat renders and 4 big Counts requests (1,000,000 characters over
every preset: jobs now, row 6) run at once; and the work one client gets
through before RATE_LIMIT_WORK refuses it (characters x tokenizers
accepted, the Retry-After, and whether a second client is still served).

Every request goes to 127.0.0.1 (from 127.0.0.x source addresses); counts
and times are bounded; the server is stopped with SIGTERM at the end, as a
supervisor would. The exit code is 1 if /healthz's max under slow uploads is
1 s or more, a p99 under load is over 100 ms, a hostile template is not
refused in time, /healthz's max under hostile renders and big counts is 1 s
or more, or the work budget does not refuse the first client while serving
the second.

    .venv/bin/python benchmarks/bench_jobs_load.py [--slow-seconds 30] [--jobs 8] [--merges 20000]
        [--only templates|hostile-load|work|issue28|files] [--counts-chars 1000000] [--work-chars 38000]
        [--load-seconds 60] [--load-renders 4]

The probe client shares the machine's cores with the server and the jobs,
so the figures are a floor for a real deployment.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import english_text, split_words  # noqa: E402

FINISHED = ("done", "failed", "cancelled")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(port: int, method: str, path: str, body: bytes | None = None, *, client: int = 1,
            content_type: str = "application/json", timeout: float = 120) -> tuple[int, bytes, float, dict[str, str]]:
    """One request from the loopback address 127.0.0.<client>; (status, body, seconds, headers)."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(f"127.0.0.{client}", 0))
    try:
        conn.request(method, path, body=body, headers={"Content-Type": content_type} if body else {})
        response = conn.getresponse()
        data = response.read()
        return response.status, data, time.perf_counter() - started, dict(response.getheaders())
    finally:
        conn.close()


def multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = "----bench" + str(random.randrange(10**9))
    body = b"".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n".encode()
                    for k, v in fields.items())
    body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{filename}\"\r\n"
             "Content-Type: text/plain\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summary(label: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{label:<13} n={len(ms):4d}  p50 {statistics.median(ms):7.1f} ms  "
            f"p99 {percentile(ms, 99):7.1f} ms  max {max(ms):7.1f} ms")


def job_state(port: int, url: str) -> dict:
    return json.loads(request(port, "GET", url)[1])


def wait_jobs(port: int, urls: list[str], limit: float = 600) -> list[dict]:
    deadline = time.monotonic() + limit
    while True:
        jobs = [job_state(port, url) for url in urls]
        if all(job["state"] in FINISHED for job in jobs) or time.monotonic() > deadline:
            return jobs
        time.sleep(0.3)


# --- 1. a burst of shares (row 5) -------------------------------------------------------------

def share_burst(port: int, folder: Path) -> None:
    db = folder / "db.sqlite3"
    before = db.stat().st_size
    statuses, retry = [], set()
    started = time.monotonic()
    for i in range(50):
        body = json.dumps({"tool": "bytes", "text": f"share {i} " + "s" * 1_000_000}).encode()
        status, _data, _s, headers = request(port, "POST", "/api/share", body, client=4)
        statuses.append(status)
        if "Retry-After" in headers:
            retry.add(headers["Retry-After"])
    took = time.monotonic() - started
    counts = Counter(statuses)
    print(f"row 5  50 shares of 1 MB from one client in {took:.1f} s: {counts.get(201, 0)} stored, "
          f"{counts.get(429, 0)} refused with 429 (Retry-After {', '.join(sorted(retry)) or '-'} s); "
          f"database grew by {(db.stat().st_size - before) / 2**20:.1f} MiB")


# --- 2. slow uploads (row 4) ------------------------------------------------------------------

def slow_upload(port: int, client: int, seconds: float, answers: list) -> None:
    body, content_type = multipart({"num_merges": "20"}, f"slow{client}.txt",
                                   (f"slow client {client} writes words " * 40_000).encode()[:1_000_000])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=seconds + 120,
                                      source_address=(f"127.0.0.{client}", 0))
    try:
        conn.putrequest("POST", "/api/corpus")
        conn.putheader("Content-Type", content_type)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        pieces = max(1, int(seconds * 2))
        step = len(body) // pieces + 1
        for start in range(0, len(body), step):
            conn.send(body[start:start + step])
            time.sleep(seconds / pieces)
        response = conn.getresponse()
        answers.append((response.status, json.loads(response.read() or b"{}").get("url")))
    finally:
        conn.close()


def slow_uploads(port: int, seconds: float) -> bool:
    answers: list = []
    threads = [threading.Thread(target=slow_upload, args=(port, 10 + i, seconds, answers)) for i in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    probes = []
    while any(thread.is_alive() for thread in threads):
        probes.append(request(port, "GET", "/healthz", client=2)[2])
        time.sleep(0.1)
    for thread in threads:
        thread.join()
    print(f"row 4  8 uploads of 1 MB, each sent over {seconds:g} s: answers "
          f"{dict(Counter(status for status, _ in answers))}; /healthz meanwhile:")
    print("         " + summary("healthz", probes))
    wait_jobs(port, [url for status, url in answers if status == 202 and url])
    return max(probes) < 1.0


# --- 3. one client floods, a second one waits (row 2) --------------------------------------

def flood_and_wait(port: int) -> None:
    text = english_text(0, 3_000_000)
    answers: list[tuple[int, str]] = []
    urls = []
    started = time.monotonic()
    for i in range(50):
        body, content_type = multipart({"num_merges": "20000"}, f"a{i}.txt", text[i * 50_000:i * 50_000 + 1_500_000].encode())
        status, data, _s, _h = request(port, "POST", "/api/corpus", body, client=5, content_type=content_type)
        try:
            reason = json.loads(data).get("error", {}).get("message", "") if status != 202 else ""
        except ValueError:
            reason = f"(not JSON: {data[:80]!r})"
        setting = next((word.strip("();,") for word in reason.split() if word.strip("();,").isupper() and "_" in word), "")
        answers.append((status, setting))
        if status == 202:
            urls.append(json.loads(data)["url"])
    took = time.monotonic() - started
    summary_line = ", ".join(f"{n} x {status}{' ' + setting if setting else ''}"
                             for (status, setting), n in Counter(answers).items())
    print(f"row 2  client A sent 50 corpus uploads of 1.5 MB in {took:.1f} s: {summary_line}")
    body, content_type = multipart({"num_merges": "20"}, "b.txt", b"the second client's small corpus " * 200)
    sent = time.monotonic()
    status, data, _s, _h = request(port, "POST", "/api/corpus", body, client=6, content_type=content_type)
    if status != 202:
        print(f"       client B's upload answered {status}: {data[:200]!r}")
        return
    b_url = json.loads(data)["url"]
    b_job = wait_jobs(port, [b_url])[0]
    waited = time.monotonic() - sent
    ahead = sum(1 for job in (job_state(port, url) for url in urls) if job["state"] in FINISHED)
    print(f"       client B's small job ({b_job['state']}) finished {waited:.1f} s after it was sent; "
          f"{ahead} of client A's {len(urls)} jobs had finished by then")
    jobs = wait_jobs(port, urls)
    print(f"       client A's jobs all finished {time.monotonic() - started:.1f} s after the first upload: "
          f"{dict(Counter(job['state'] for job in jobs))}")


# --- 4. heavy jobs and the latency of small requests (issue 8) ------------------------------

def probe_round(port: int, small: bytes, out: dict[str, list[float]]) -> None:
    for name, method, path, body in (("healthz", "GET", "/healthz", None), ("small encode", "POST", "/api/encode", small)):
        status, _data, seconds, _h = request(port, method, path, body, client=2)
        if status != 200:
            raise SystemExit(f"{path} answered {status}")
        out[name].append(seconds)
        time.sleep(0.02)


def heavy_jobs(port: int, args: argparse.Namespace) -> bool:
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
        status, data, _s, _h = request(port, "POST", "/api/train", body, client=3)
        if status != 202:
            raise SystemExit(f"/api/train answered {status}, not 202: {data[:200]!r}")
        urls.append(json.loads(data)["url"])
    queued = time.monotonic() - started
    loaded: dict[str, list[float]] = {"healthz": [], "small encode": []}
    states: list[str] = []
    while True:
        probe_round(port, small, loaded)
        if len(loaded["healthz"]) % 10 == 0:
            states = [job_state(port, url)["state"] for url in urls]
            if all(s in FINISHED for s in states):
                break
        if time.monotonic() - started > 900:
            raise SystemExit("jobs did not finish in 15 minutes")
    took = time.monotonic() - started
    print(f"jobs   {args.jobs} training jobs ({args.words:,} words, {args.merges:,} merges each), "
          f"queued in {queued:.2f} s, all finished after {took:.1f} s: {', '.join(sorted(set(states)))}")
    print("       reference (no jobs):")
    for name, values in reference.items():
        print("         " + summary(name, values))
    print("       under load:")
    ok = True
    for name, values in loaded.items():
        ratio = percentile(values, 99) / percentile(reference[name], 99)
        print("         " + summary(name, values) + f"  (p99 {ratio:.1f}x the reference)")
        ok = ok and percentile(values, 99) <= 0.100
    return ok


# --- issue 28 rows 1-3: the worst opened chat template of each kind -------------------------

#: The worst template of each kind (issue 28 rows 1-3); each is opened with a small tokenizer.json, then chatted.
HOSTILE_TEMPLATES = {
    "~ doubling x28": "{% set ns = namespace(s='ab') %}{% for i in range(28) %}{% set ns.s = ns.s ~ ns.s %}"
                      "{% endfor %}{{ ns.s|length }}",
    "~ doubling x40": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
                      "{% endfor %}{{ ns.s|length }}",
    "lipsum n=1000 max=100000": "{{ lipsum(n=1000, min=99999, max=100000)|length }}",
    "center width x1000": "{{ range(1000)|map('center', 999999)|list|length }}",
    "format widths": "{{ ('{0:{1}}' * 50).format('x', 999999)|length }}",
    "indent width": "{{ ('a\\n' * 1000)|indent(999999)|length }}",
    "tojson indent, 20 nested": "{% set ns = namespace(v=1) %}{% for i in range(20) %}{% set ns.v = [ns.v, ns.v] %}"
                                "{% endfor %}{{ ns.v|tojson(indent=999999)|length }}",
    "join of a repeated list": "{{ (['x' * 999999] * 1000)|join|length }}",
    "* of a list, stringified": "{{ ([['x' * 999999] * 1000] * 1000)|string|length }}",
    "a loop past the time limit": "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
}
_SMALL_TOKENIZER = json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def gunicorn_workers(session: int) -> list[int]:
    """The gunicorn workers of the server's session (processes whose parent is the gunicorn master)."""
    found: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == session and "gunicorn" in cmdline:
            found[int(entry)] = (int(fields[1]), cmdline)
    return [pid for pid, (parent, _) in found.items() if parent in found]


def open_templates(port: int) -> dict[str, str]:
    """Open the harmless template and each hostile one with a small tokenizer.json: name -> its id."""
    refs: dict[str, str] = {}
    for client, (name, template) in enumerate({"harmless": "{% for m in messages %}{{ m.content }}{% endfor %}",
                                               **HOSTILE_TEMPLATES}.items(), start=100):
        status, data, _, _ = request(port, "POST", "/api/import", json.dumps({
            "content": _SMALL_TOKENIZER, "config": json.dumps({"chat_template": template})}).encode(), client=client)
        if status != 200:
            print(f"  {name}: open refused {status} {data[:120]!r}")
            continue
        refs[name] = json.loads(data)["tokenizer"]
    return refs


CHAT_BODY = json.dumps({"messages": [{"role": "user", "content": "abab"}]}).encode()


def hostile_templates(port: int, session: int, refs: dict[str, str]) -> bool:
    """Each worst template: the chat request's status and time, and the workers' memory after it (the
    largest growth of any worker, VmRSS), against an opened harmless template's chat measured in the
    same run (the fork's cost) and llama3's in-process one."""
    print("hostile opened chat templates (issue 28 rows 1-3): one chat request each")
    body = CHAT_BODY
    reference = {}
    for name, ref in (("llama3 (preset, in-process)", "llama3"), ("harmless (opened, child)", refs.get("harmless"))):
        if ref is None:
            continue
        times = [request(port, "POST", f"/api/tokenizers/{ref}/chat", body, client=99)[2] for _ in range(20)]
        reference[name] = statistics.median(times)
        print(f"  {name}: median {reference[name] * 1000:.1f} ms over 20 requests")
    if len(reference) == 2:
        first, second = reference.values()
        print(f"  an opened template's child process costs {second / first:.2f}x the in-process preset's request")
    workers = gunicorn_workers(session)
    ok = True
    for name in HOSTILE_TEMPLATES:
        if name not in refs:
            ok = False
            continue
        before = {pid: _rss_kb(pid) for pid in workers}
        status, data, seconds, _ = request(port, "POST", f"/api/tokenizers/{refs[name]}/chat", body, client=98)
        grown = max((_rss_kb(pid) - kb for pid, kb in before.items()), default=0)
        message = json.loads(data).get("error", {}).get("message", "") if status == 400 else data[:80].decode()
        print(f"  {name:28s} {status} in {seconds:.2f} s, worker RSS +{grown / 1024:.1f} MB: {message[:110]}")
        ok = ok and status == 400 and seconds < 3.0 and grown < 64 * 1024
    print("  target: each one 400 within 3 s, no worker grows by 64 MB:", "met" if ok else "MISSED")
    return ok


# --- issue 28 rows 2 and 6: /healthz while hostile renders and big counts run -----------------

#: The four hostile renders run at once (each from its own client, each again as soon as it is answered).
LOAD_TEMPLATES = ("lipsum n=1000 max=100000", "a loop past the time limit", "center width x1000", "~ doubling x40")


def _render_loop(port: int, ref: str, client: int, stop: threading.Event, out: list[tuple[int, float]]) -> None:
    while not stop.is_set():
        status, _data, seconds, _h = request(port, "POST", f"/api/tokenizers/{ref}/chat", CHAT_BODY, client=client)
        out.append((status, seconds))


def _count_once(port: int, text: str, client: int, out: list[tuple[int, float, dict]]) -> None:
    status, data, seconds, _h = request(port, "POST", "/api/counts", json.dumps({"text": text}).encode(),
                                        client=client)
    out.append((status, seconds, json.loads(data) if status == 202 else {}))


def hostile_load(port: int, refs: dict[str, str], args: argparse.Namespace) -> bool:
    """4 hostile chat renders looping and 4 big Counts requests sent at once (each client its own
    address, each text its own so no job is shared); /healthz probed every 0.1 s from another client
    for --load-seconds while the renders loop and the counts jobs are queued or running; then the
    renders stop and the counts jobs still going are cancelled with their tokens (so later sections
    run on a quiet server), their progress reported."""
    names = [n for n in LOAD_TEMPLATES if n in refs][:args.load_renders]
    # four texts of exactly --counts-chars, each its own (a shared text would be one shared job)
    base = english_text(1, args.counts_chars)
    texts = [(f"counts client {i}: " + base * (args.counts_chars // max(1, len(base)) + 1))[:args.counts_chars]
             for i in range(4)]
    print(f"issue 28 rows 2 + 6: {len(names)} hostile chat renders and 4 Counts of {args.counts_chars:,} characters "
          f"over every preset at once; /healthz from another client for {args.load_seconds:g} s")
    stop = threading.Event()
    renders: list[tuple[int, float]] = []
    counted: list[tuple[int, float, dict]] = []
    threads = [threading.Thread(target=_render_loop, args=(port, refs[n], 70 + i, stop, renders))
               for i, n in enumerate(names)]
    threads += [threading.Thread(target=_count_once, args=(port, texts[i], 80 + i, counted)) for i in range(4)]
    for thread in threads:
        thread.start()
    probes: list[float] = []
    deadline = time.monotonic() + args.load_seconds
    while time.monotonic() < deadline:
        probes.append(request(port, "GET", "/healthz", client=2)[2])
        time.sleep(0.1)
    stop.set()
    for thread in threads:
        thread.join()
    jobs = [job_state(port, body["url"]) for _st, _s, body in counted if body.get("url")]
    for _st, _s, body in counted:
        if body.get("url") and body.get("cancel_token"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", body["url"] + "/cancel", headers={"X-Cancel-Token": body["cancel_token"]})
            conn.getresponse().read()
            conn.close()
    print(f"  Counts answers: {dict(Counter(status for status, _s, _b in counted))} in "
          f"{', '.join(f'{s:.2f}' for _st, s, _b in sorted(counted, key=lambda c: c[1]))} s; after "
          f"{args.load_seconds:g} s the jobs were: "
          + "; ".join(f"{job['state']} {job['progress']['fraction']:.0%}" for job in jobs)
          + " (then cancelled)")
    render_times = sorted(s for _st, s in renders)
    print(f"  hostile renders: {len(renders)} answered {dict(Counter(st for st, _s in renders))}, "
          f"median {statistics.median(render_times):.2f} s, max {max(render_times):.2f} s" if renders else
          "  hostile renders: none answered")
    print("  " + summary("healthz", probes))
    ok = (bool(probes) and max(probes) < 1.0 and len(jobs) == 4
          and all(status == 202 for status, _s, _b in counted))
    print("  target: /healthz max < 1 s, the 4 counts handed to jobs (202):", "met" if ok else "MISSED")
    return ok


# --- issue 28 row 6: what one client gets through before RATE_LIMIT_WORK refuses it ----------

def work_budget(port: int, args: argparse.Namespace) -> bool:
    """One client counts the same text over every preset (inline: under JOB_COUNTS_WORK) until a 429;
    the characters x tokenizers accepted, the Retry-After, then one request from a second client."""
    text = english_text(0, args.work_chars + 100)[:args.work_chars]
    body = json.dumps({"text": text}).encode()
    status, data, _s, _h = request(port, "POST", "/api/counts", body, client=90)
    if status != 200:
        print(f"work budget: the first count answered {status}: {data[:160]!r}")
        return False
    presets = len(json.loads(data)["counts"])
    accepted, answers, retry, message = 1, [0.0], "", ""
    started = time.monotonic()
    while time.monotonic() - started < 300:
        status, data, seconds, headers = request(port, "POST", "/api/counts", body, client=90)
        if status == 429:
            retry = headers.get("Retry-After", "")
            message = json.loads(data)["error"]["message"]
            break
        if status != 200:
            print(f"work budget: answered {status}: {data[:160]!r}")
            return False
        accepted += 1
        answers.append(seconds)
    took = time.monotonic() - started
    units = accepted * len(text) * presets
    other, _d, other_s, _h = request(port, "POST", "/api/counts", body, client=91)
    print(f"issue 28 row 6: one client counts {len(text):,} characters over {presets} presets "
          f"({len(text) * presets:,} characters x tokenizers a request, inline) until refused")
    print(f"  {accepted} answered 200 ({units:,} characters x tokenizers) in {took:.1f} s, median "
          f"{statistics.median(answers[1:] or [0]) * 1000:.0f} ms each; then 429, Retry-After {retry or '-'} s: "
          f"{message[:150]}")
    print(f"  a second client meanwhile: {other} in {other_s * 1000:.0f} ms")
    ok = bool(retry) and other == 200
    print("  target: the first client refused with Retry-After, the second served:", "met" if ok else "MISSED")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow-seconds", type=float, default=30, help="how long each slow upload takes to send")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--words", type=int, default=170_000, help="training words per job (under LIMIT_TEXT_CHARS)")
    parser.add_argument("--merges", type=int, default=20_000, help="merges per job")
    parser.add_argument("--reference-seconds", type=float, default=5)
    parser.add_argument("--only", choices=["templates", "hostile-load", "work", "issue28", "files"],
                        help="run one section only (issue28: the three issue-28 sections, not issue 17's; "
                             "files: issue 44's worst tokenizer files)")
    parser.add_argument("--counts-chars", type=int, default=1_000_000,
                        help="characters of each big Counts request (issue 28 row 6; LIMIT_TEXT_CHARS at most)")
    parser.add_argument("--load-renders", type=int, default=4,
                        help="hostile renders looping beside the big counts (0: the counts alone, for comparison)")
    parser.add_argument("--load-seconds", type=float, default=60,
                        help="how long /healthz is probed while the hostile renders and big counts run")
    parser.add_argument("--work-chars", type=int, default=38_000,
                        help="characters of each count in the work-budget section (x 13 presets: under "
                             "JOB_COUNTS_WORK, so inline)")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    port = free_port()
    env = {**os.environ, "BIND": f"127.0.0.1:{port}", "ACCESS_LOG": str(folder / "access.log"), "RUN_DIR": str(folder / "run"),
           "PLAYGROUND_DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
           "PLAYGROUND_QUEUE_URL": f"sqlite:///{folder / 'queue.sqlite3'}",
           "PLAYGROUND_CORPUS_DIR": str(folder / "corpora"),
           # serve-prod.sh refuses to start with the development key
           "PLAYGROUND_SECRET_KEY": os.environ.get("PLAYGROUND_SECRET_KEY") or secrets.token_hex(32)}
    log = open(folder / "server.log", "wb")
    server = subprocess.Popen(["bash", "scripts/serve-prod.sh", sys.executable], cwd=ROOT, env=env,
                              stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"server did not start; see {folder / 'server.log'}")
            time.sleep(0.2)
        nginx = b"nginx on" in (folder / "server.log").read_bytes()
        print(f"production command: scripts/serve-prod.sh ({'nginx + ' if nginx else 'NO nginx: '}gunicorn + "
              f"job worker), defaults; files in {folder}")
        from hostile_files import measure_files  # (it uses this module's helpers)

        measure_files(port, server.pid)  # issue 44: the worst file of each kind, first on a fresh server
        if args.only == "files":
            return 0
        refs = open_templates(port)
        templates_ok = True if args.only in ("hostile-load", "work") else hostile_templates(port, server.pid, refs)
        if args.only == "templates":
            return 0 if templates_ok else 1
        load28_ok = True if args.only == "work" else hostile_load(port, refs, args)
        if args.only == "hostile-load":
            return 0 if load28_ok else 1
        work_ok = work_budget(port, args)
        if args.only in ("work", "issue28"):
            print("targets (issue 28): hostile templates refused in time, workers not grown:",
                  "met" if templates_ok else "MISSED", "| /healthz max < 1 s under hostile renders and big counts:",
                  "met" if load28_ok else "MISSED", "| the work budget refuses one client, serves another:",
                  "met" if work_ok else "MISSED")
            return 0 if templates_ok and load28_ok and work_ok else 1
        share_burst(port, folder)
        slow_ok = slow_uploads(port, args.slow_seconds)
        flood_and_wait(port)
        load_ok = heavy_jobs(port, args)
        print("targets: /healthz max < 1 s under slow uploads:", "met" if slow_ok else "MISSED",
              "| p99 <= 100 ms under heavy jobs:", "met" if load_ok else "MISSED")
        print("target: hostile templates refused in time, workers not grown:", "met" if templates_ok else "MISSED",
              "| /healthz max < 1 s under hostile renders and big counts:", "met" if load28_ok else "MISSED",
              "| the work budget refuses one client, serves another:", "met" if work_ok else "MISSED")
        return 0 if slow_ok and load_ok and templates_ok and load28_ok and work_ok else 1
    finally:
        try:
            os.kill(server.pid, signal.SIGTERM)  # the script stops nginx, gunicorn and the worker
            server.wait(timeout=40)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(server.pid, signal.SIGKILL)


if __name__ == "__main__":
    raise SystemExit(main())
