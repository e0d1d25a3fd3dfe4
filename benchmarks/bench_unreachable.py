"""How soon the unreachable tokens of a preset are ready, and how fast they come back after that.

Serves the app in this process (Flask's test client, a fresh SQLite database and queue in a
temporary folder) with one job worker beside it (`python -m webapp.worker`, as `make run`
starts it), then, for each preset asked for (default o200k_base):

1. the first `GET /api/tokenizers/<name>/unreachable`: a 202 and a job; the job is polled
   until done: "ready after" is the time from that first request to the job's done state
   (the worker's opening of the preset included: it is a fresh process);
2. the same request again, answered from the job store (200), and once more from the
   process's own cache: the median of 20 requests each;
3. the reference, measured in the same run: tiktoken's `encode_ordinary` of every token's
   text (when tiktoken is installed; OpenAI presets only), and the playground's own
   whole answer in this process (`webapp.tokenizer.vocab.reach.unreachable` on a warm tokenizer:
   every token's own text encoded, then proofs and witnesses for the rest), so the job's time
   shows as a ratio to both.

The target: ready within 60 s of the first request (issue 41: every token decided, a witness or
a proof each; issue 29 asked 30 s of the own-text check alone), and instant after that.

    .venv/bin/python benchmarks/bench_unreachable.py [--preset o200k_base ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webapp import create_app  # noqa: E402
from webapp.tokenizer import VocabIndex, load_preset, set_cache_dir  # noqa: E402
from webapp.tokenizer.presets.catalog import load_compiled  # noqa: E402
from webapp.tokenizer.vocab.reach import unreachable  # noqa: E402
from webapp.web.vocab import kinds  # noqa: E402


def median_ms(fn, rounds: int = 20) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def reference_seconds(name: str) -> tuple[float | None, float]:
    """(tiktoken's encode_ordinary of every token's text, ours on a warm tokenizer), in seconds."""
    set_cache_dir(ROOT / "instance" / "presets")
    tok, compiled = load_preset(name), load_compiled(name)
    index = VocabIndex.build(tok)
    unreachable(index, tok, compiled)  # (warm: segment caches as a second run finds them)
    index = VocabIndex.build(tok)
    started = time.perf_counter()
    unreachable(index, tok, compiled)
    ours = time.perf_counter() - started
    theirs = None
    try:
        import tiktoken
        from webapp.tokenizer import get_tokenizer
        from webapp.tokenizer.presets.openai import load_ranks
        handle = get_tokenizer(name)
        enc = tiktoken.Encoding(name=f"bench-{name}", pat_str=handle.pattern or r"[\s\S]+",
                                mergeable_ranks=dict(load_ranks(name)), special_tokens=handle.special_tokens)
        texts = []
        for data in index.data.values():
            try:
                texts.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
        started = time.perf_counter()
        for text in texts:
            enc.encode_ordinary(text)
        theirs = time.perf_counter() - started
    except Exception:  # not an OpenAI preset, or no tiktoken: no second reference
        theirs = None
    return theirs, ours


def run(name: str, folder: Path) -> None:
    settings = {"DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}", "QUEUE_URL": f"sqlite:///{folder / 'q.sqlite3'}",
                "RATE_LIMIT_WRITES": ""}
    app = create_app(settings)
    client = app.test_client()
    env = {**os.environ, **{f"PLAYGROUND_{k}": str(v) for k, v in settings.items()}}
    log = open(folder / "worker.log", "ab")
    worker = subprocess.Popen([sys.executable, "-m", "webapp.worker", "--workers", "1"], cwd=ROOT, env=env,
                              stdout=log, stderr=log, start_new_session=True)
    try:
        time.sleep(2)  # (the worker's start-up is not the job's time)
        url = f"/api/tokenizers/{name}/unreachable"
        started = time.perf_counter()
        first = client.get(url)
        if first.status_code == 200:
            print(f"{name}: answered inline (JOB_VOCAB_TOKENS is above its size)")
            return
        job_url = first.get_json()["url"]
        while True:
            state = client.get(job_url).get_json()["state"]
            if state in ("done", "failed", "cancelled"):
                break
            time.sleep(0.05)
        ready = time.perf_counter() - started
        if state != "done":
            print(f"{name}: the job ended {state}: see {folder / 'worker.log'}")
            return
        kinds.REACH.clear()
        from_store = median_ms(lambda: (kinds.REACH.clear(), client.get(url)))
        client.get(url)
        cached = median_ms(lambda: client.get(url))
        count = client.get(url).get_json()["count"]
        theirs, ours = reference_seconds(name)
        answer = client.get(url).get_json()
        print(f"{name}: {count:,} unreachable tokens, {len(answer['witnesses']):,} only inside other text, "
              f"{len(answer['undecided']):,} undecided")
        print(f"  ready after the first request:      {ready:7.2f} s   (target: 60 s)")
        print(f"  again, from the job store:          {from_store:7.2f} ms (median of 20)")
        print(f"  again, from the process's cache:    {cached:7.2f} ms (median of 20)")
        print(f"  ours, warm, in this process:        {ours:7.2f} s   (job / warm: {ready / ours:.2f}x)")
        if theirs is not None:
            print(f"  tiktoken encode_ordinary, same texts: {theirs:5.2f} s   (job / tiktoken: {ready / theirs:.2f}x, "
                  f"warm ours / tiktoken: {ours / theirs:.2f}x)")
    finally:
        os.killpg(worker.pid, 15)
        worker.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", action="append", help="a preset name (default o200k_base); repeatable")
    args = parser.parse_args()
    for name in args.preset or ["o200k_base"]:
        with tempfile.TemporaryDirectory(prefix="bench-unreachable-") as folder:
            run(name, Path(folder))


if __name__ == "__main__":
    main()
