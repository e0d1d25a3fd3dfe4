"""How long character-level encoding takes inline (the Characters page's htmx
update and /api/encode-text), to choose JOB_CHARS_TEXT / JOB_CHARS_RULES.

    .venv/bin/python benchmarks/bench_chars_inline.py CHARS:RULES [CHARS:RULES ...]

For each size: random lowercase text, the 676 two-letter rules, then random
rules joining two-letter tokens, and a vocab holding every token. Each request
goes to a fresh app (Flask test client, thresholds as configured: an answer of
202 / a job panel means the input went to a job), best of 3. It prints
milliseconds; they depend on the machine's load, so compare sizes within one run.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webapp import create_app  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def build(rules: int, rnd: random.Random) -> tuple[list[tuple[str, str]], dict[str, int]]:
    vocab = {ch: i for i, ch in enumerate(LETTERS)}
    merges = [(a, b) for a in LETTERS for b in LETTERS]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    pairs = [a + b for a in LETTERS for b in LETTERS]
    while len(merges) < rules:
        x, y = rnd.choice(pairs), rnd.choice(pairs)
        if x + y not in vocab:
            merges.append((x, y))
            vocab[x + y] = len(vocab)
    merges = merges[:rules]
    return merges, {t: i for t, i in vocab.items() if i < rules + len(LETTERS)}


def client():  # type: ignore[no-untyped-def]
    folder = tempfile.mkdtemp()
    return create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder}/db.sqlite3"}).test_client()


def main(sizes: list[str]) -> None:
    rnd = random.Random(1)
    for size in sizes:
        chars, rules = (int(part) for part in size.split(":"))
        merges, vocab = build(rules, rnd)
        text = "".join(rnd.choice(LETTERS) for _ in range(chars))
        body = {"text": text, "merges": [list(m) for m in merges], "vocab": vocab}
        form = {"text": text, "merges": "\n".join(f"{a} {b}" for a, b in merges), "view": "tokens",
                "vocab": "\n".join(f"{t} {i}" for t, i in vocab.items())}
        api: list[float] = []
        page: list[float] = []
        for _ in range(3):
            c = client()
            started = time.perf_counter()
            answer = c.post("/api/encode-text", json=body)
            api.append(time.perf_counter() - started)
            c = client()
            started = time.perf_counter()
            shown = c.post("/fragments/chars", data=form, headers={"HX-Request": "true"})
            page.append(time.perf_counter() - started)
        job = "job-panel" in shown.get_data(as_text=True)
        print(f"chars={chars:,} rules={len(merges):,} vocab={len(vocab):,}: /api/encode-text {answer.status_code} "
              f"{min(api) * 1000:.0f} ms; /fragments/chars {'job' if job else 'inline'} {min(page) * 1000:.0f} ms")


if __name__ == "__main__":
    main(sys.argv[1:] or ["20000:19900", "20001:676"])
