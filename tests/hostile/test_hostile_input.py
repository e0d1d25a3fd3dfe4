"""Hostile input against the production server (gunicorn, 2 workers): every
request gets a clear 4xx (or, where the input is legitimate, a normal answer)
quickly, never a 500 or a hang, and the server keeps serving everyone else."""

from __future__ import annotations

import json
import random
import threading
import time
from urllib.parse import quote

import pytest

#: Generous for a busy shared 2-core machine; a hang would take the full 60 s timeout.
QUICK_SECONDS = 20.0
MIB = 1024 * 1024


def _json(payload) -> tuple[bytes, dict[str, str]]:
    return json.dumps(payload).encode(), {"Content-Type": "application/json"}


def _raw_json(text: str | bytes) -> tuple[bytes, dict[str, str]]:
    return (text.encode() if isinstance(text, str) else text), {"Content-Type": "application/json"}


def _form(body: str | bytes) -> tuple[bytes, dict[str, str]]:
    return (body.encode() if isinstance(body, str) else body), {"Content-Type": "application/x-www-form-urlencoded"}


DEEP = "[" * 100_000 + "]" * 100_000


def _explosive_merges(length: int = 60_000, rules: int = 20_000) -> tuple[str, list[list[int]]]:
    """A text and a merge list where thousands of rules each change a long
    sequence: an unbounded trace would be rules x length entries."""
    rng = random.Random(4)
    alphabet = [chr(c) for c in range(33, 127)]  # 94 symbols: up to 8,836 distinct pairs
    text = "".join(rng.choice(alphabet) for _ in range(length))
    data = text.encode()
    seen: dict[tuple[int, int], int] = {}
    for left, right in zip(data, data[1:]):
        if (left, right) not in seen and len(seen) < rules:
            seen[(left, right)] = 256 + len(seen)
    merges = [[l, r, new] for (l, r), new in seen.items()]
    # Then rules that join the results of the first ones, so later rules fire too.
    base = len(merges)
    for k in range(min(base - 1, rules)):
        merges.append([256 + k, 256 + k + 1, 256 + base + k])
    return text, merges


EXPLOSIVE_TEXT, EXPLOSIVE_MERGES = _explosive_merges()

# (label, method, path, body-and-headers, allowed statuses)
CASES = [
    ("huge JSON body", "POST", "/api/encode", _raw_json(b'{"text": "' + b"a" * (40 * MIB) + b'"}'), {413}),
    ("huge form body", "POST", "/bytes", _form(b"text=" + b"a" * (40 * MIB)), {413}),
    ("huge share body", "POST", "/api/share", _raw_json(b'{"tool": "bytes", "text": "' + b"a" * (40 * MIB) + b'"}'), {413}),
    ("text over the text limit", "POST", "/api/encode", _json({"text": "a" * 1_100_000, "merges": []}), {400, 413}),
    ("deeply nested merges", "POST", "/api/encode", _raw_json('{"text": "a", "merges": ' + DEEP + "}"), {400}),
    ("deeply nested words", "POST", "/api/train", _raw_json('{"words": ' + DEEP + ', "num_merges": 3}'), {400}),
    ("deeply nested vocab", "POST", "/api/decode", _raw_json('{"ids": [1], "vocab": ' + DEEP + "}"), {400}),
    ("deeply nested share", "POST", "/api/share", _raw_json('{"tool": "bytes", "merges": ' + DEEP + "}"), {400}),
    ("deeply nested encode-text", "POST", "/api/encode-text", _raw_json('{"text": "a", "vocab": {}, "merges": ' + DEEP + "}"), {400}),
    ("deeply nested merges in a form", "POST", "/bytes", _form("text=a&merges=" + quote(DEEP)), {200, 400}),
    ("NUL bytes in merges", "POST", "/api/encode", _json({"text": "hello", "merges": "104\x00 101 256"}), {400}),
    ("NUL byte outside strings", "POST", "/api/encode", _raw_json(b'{"text": "a",\x00 "merges": []}'), {400}),
    ("NUL bytes in ids", "POST", "/api/decode", _json({"ids": "1\x002", "vocab": {}}), {400}),
    ("NUL bytes in a form", "POST", "/bytes", _form("text=a%00b&merges=1%000%202"), {200, 400}),
    ("invalid UTF-8 JSON", "POST", "/api/encode", _raw_json(b'{"text": "\xff\xfe", "merges": []}'), {400}),
    ("invalid UTF-8 in form fields", "POST", "/bytes", _form(b"text=%FF%FE%C3&merges=%C3%28%20%A0"), {200, 400}),
    ("invalid UTF-8 in a train form", "POST", "/train", _form(b"words=%FF%FE&num_merges=%FF"), {200, 400}),
    ("invalid UTF-8 in a share form", "POST", "/share", _form(b"tool=bytes&text=%FF%FE"), {303, 400}),
    ("invalid UTF-8 in a fragment", "POST", "/fragments/chars", _form(b"text=%FF&merges=%FF%20a&vocab=%FF"), {200, 400}),
    ("enormous share id", "GET", "/s/" + "a" * 6000, (None, {}), {404}),
    ("enormous API share id", "GET", "/api/share/" + "b" * 6000, (None, {}), {404}),
    ("share id over the request-line limit", "GET", "/s/" + "c" * 20_000, (None, {}), {400, 404, 414}),
    ("enormous id value", "POST", "/api/decode", _json({"ids": [10**100], "vocab": {}}), {400}),
    ("enormous vocab key", "POST", "/api/decode", _json({"ids": [1], "vocab": {"9" * 5000: [1]}}), {400}),
    ("ids over the ids limit", "POST", "/api/decode", _raw_json('{"vocab": {}, "ids": [' + ",".join(["1"] * 1_100_000) + "]}"), {400, 413}),
    ("num_merges of a billion", "POST", "/api/train", _json({"words": ["low", "lower"], "num_merges": 1_000_000_000}), {400}),
    ("num_merges of a billion in the form", "POST", "/train", _form("words=low+lower&num_merges=1000000000"), {200, 400}),
    ("num_merges as a huge float", "POST", "/api/train", _raw_json('{"words": ["a"], "num_merges": 1e999}'), {400}),
    ("num_merges as a string", "POST", "/api/train", _json({"words": ["a"], "num_merges": "9" * 5000}), {400}),
    # Large ids are not forbidden by the contract; they must just not break anything.
    ("merge ids beyond reason", "POST", "/api/encode", _json({"text": "ab", "merges": [[97, 98, 10**30]]}), {200, 400}),
    # Python refuses int() of strings over 4300 digits with a ValueError.
    ("5000-digit JSON number", "POST", "/api/encode", _raw_json('{"text": "a", "merges": [[97, 97, ' + "9" * 5000 + "]]}"), {400}),
    ("5000-digit JSON number in a share", "POST", "/api/share", _raw_json('{"tool": "bytes", "num_merges": ' + "9" * 5000 + "}"), {400}),
    ("4000-digit merge id", "POST", "/api/encode", _raw_json('{"text": "a", "merges": [[97, ' + "9" * 4000 + ", 256]]}"), {200, 400}),
    ("5000-digit typed id", "POST", "/api/decode", _json({"ids": "9" * 5000, "vocab": {}}), {400}),
    ("5000-digit typed merge", "POST", "/api/encode", _json({"text": "ab", "merges": "9" * 5000 + " 98 256"}), {400}),
    ("5000-digit id in a form", "POST", "/bytes", _form("text=ab&ids=" + "9" * 5000), {200, 400}),
    ("5000-digit merge in a form", "POST", "/bytes", _form("text=ab&merges=97+98+" + "9" * 5000), {200, 400}),
    ("5000-digit vocab key in a form", "POST", "/bytes", _form("ids=1&vocab=" + quote('{"' + "9" * 5000 + '": [97]}')), {200, 400}),
    ("5000-digit num_merges in a form", "POST", "/train", _form("words=a+b&num_merges=" + "9" * 5000), {200, 400}),
    ("trace explosion (API)", "POST", "/api/encode", _json({"text": EXPLOSIVE_TEXT, "merges": EXPLOSIVE_MERGES}), {200}),
    (
        "trace explosion (page, trace view)",
        "POST",
        "/bytes",
        _form("view=trace&text=" + quote(EXPLOSIVE_TEXT) + "&merges=" + quote(json.dumps(EXPLOSIVE_MERGES))),
        {200},
    ),
    (
        "trace explosion (fragment)",
        "POST",
        "/fragments/bytes",
        _form("view=trace&text=" + quote(EXPLOSIVE_TEXT) + "&merges=" + quote(json.dumps(EXPLOSIVE_MERGES))),
        {200},
    ),
    # 50,000 merges is over JOB_TRAIN_MERGES: answered at once with 202 and a job.
    ("one endless word to train", "POST", "/api/train", _json({"words": ["ab" * 100_000], "num_merges": 50_000}), {200, 202, 400}),
    # Tokenizer files (import/export).
    ("tiktoken rank of 5000 digits", "POST", "/api/import", _json({"content": "YQ== " + "9" * 5000, "format": "tiktoken"}), {400, 422}),
    ("deeply nested tokenizer.json", "POST", "/api/import", _json({"content": '{"model": ' + DEEP + "}"}), {400, 422}),
    ("tokenizer.json vocab id of 4000 digits", "POST", "/api/import",
     _json({"content": json.dumps({"model": {"type": "BPE", "vocab": {"a": int("9" * 4000)}, "merges": []}})}), {200, 400, 422}),
    ("invalid UTF-8 tokenizer file", "POST", "/api/import", (b"\xff\xfe\x00garbage", {"Content-Type": "application/octet-stream"}), {400, 415, 422}),
    ("huge tokenizer upload", "POST", "/api/import", (b"a" * (40 * MIB), {"Content-Type": "application/octet-stream"}), {413}),
    ("enormous tokenizer id", "POST", "/api/tokenizers/" + "d" * 6000 + "/encode", _json({"text": "a"}), {400, 404}),
    ("export with num_merges of a billion", "POST", "/api/export?format=hf", _json({"words": ["low"], "num_merges": 10**9}), {400}),
    ("export in an unknown format", "GET", "/api/export?format=" + "x" * 5000, (None, {}), {400}),
    ("wrong content type", "POST", "/api/encode", ({b"text=a": 1}.popitem()[0], {"Content-Type": "text/plain"}), {400, 415}),
    ("unknown method", "PUT", "/api/encode", (b"{}", {"Content-Type": "application/json"}), {405}),
]


@pytest.mark.parametrize("label, method, path, payload, allowed", CASES, ids=[c[0] for c in CASES])
def test_hostile_request_gets_a_clear_answer_quickly(live_server, label, method, path, payload, allowed):
    body, headers = payload
    started = time.monotonic()
    status, response_headers, raw = live_server.request(method, path, body, headers, timeout=60)
    elapsed = time.monotonic() - started
    assert status in allowed, f"{label}: got {status}: {raw[:300]!r}"
    assert elapsed < QUICK_SECONDS, f"{label}: took {elapsed:.1f}s"
    if path.startswith("/api/") and 400 <= status < 500 and status not in (405, 414):
        error = json.loads(raw)["error"]
        assert error["message"], label
    if status >= 400 and "text/html" in response_headers.get("Content-Type", ""):
        assert b"Traceback" not in raw
    # The server is still there for everyone else.
    assert live_server.request("GET", "/healthz", timeout=10)[0] == 200


@pytest.mark.alone
def test_others_are_served_while_a_heavy_request_runs(live_server):
    """A worker busy with the heaviest legal request does not stop the others."""
    heavy_done = threading.Event()

    def heavy() -> None:
        for _ in range(2):
            live_server.post_json(
                "/api/encode", {"text": EXPLOSIVE_TEXT, "merges": EXPLOSIVE_MERGES}, timeout=120
            )
        heavy_done.set()

    thread = threading.Thread(target=heavy)
    thread.start()
    time.sleep(0.2)
    latencies = []
    for i in range(10):
        started = time.monotonic()
        status, body = live_server.post_json("/api/encode", {"text": f"hello {i}", "merges": [[104, 101, 256]]}, timeout=30)
        latencies.append(time.monotonic() - started)
        assert status == 200 and body["ids"][0] == 256
    thread.join(timeout=180)
    assert heavy_done.is_set()
    assert max(latencies) < 10, latencies
