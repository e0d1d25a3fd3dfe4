"""The worst tokenizer files of issue 44, opened and used against a running server.

`HOSTILE_FILES` builds each file (a few hundred bytes to 100 KB) and says how to use it;
`measure_files(port, session)` opens each through /api/import, uses it once (an encode or
a decode), and prints per file: the status and time of opening and of using it, the largest
RSS growth of a gunicorn worker while it ran (peak, sampled every 0.1 s) and after it
(kept), and /healthz's latency from another client meanwhile. Refusals are expected and
fine: the script measures whatever the server does. Every request has a timeout, so a
run ends by itself (gunicorn restarts a worker busy for 60 s).
"""

from __future__ import annotations

import base64
import io
import json
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bench_jobs_load import gunicorn_workers, request, _rss_kb  # noqa: E402  (the caller's helpers)

#: Each request of the section gives up after this many seconds (gunicorn's own timeout is 60 s).
REQUEST_TIMEOUT = 90.0


@dataclass(frozen=True)
class HostileFile:
    name: str
    build: Callable[[], tuple[bytes, str]]  # -> (content, "json" or "model")
    use: Callable[[str], tuple[str, str, bytes]]  # tokenizer id -> (method, path, JSON body)


def _hf_json(vocab: dict[str, int], pre_tokenizer: object = None) -> bytes:
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": pre_tokenizer, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": []},
    }).encode()


LETTERS = {chr(c): c - 97 for c in range(97, 123)}


def split_bomb() -> tuple[bytes, str]:
    """Row 1: a Split pattern whose nested counted repeats the regex package writes out in full."""
    split = {"type": "Split", "pattern": {"Regex": "(?:(?:a{1000}){1000}){5}"}, "behavior": "Isolated", "invert": False}
    return _hf_json(LETTERS, split), "json"


def tekken_bomb() -> tuple[bytes, str]:
    """Row 1: a Tekken file whose pattern is the same kind of bomb."""
    vocab = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(), "token_str": None} for b in range(256)]
    return json.dumps({"config": {"pattern": "(?:(?:c{1000}){1000}){3}", "num_vocab_tokens": 256,
                                  "default_vocab_size": 256 + 10, "default_num_special_tokens": 10,
                                  "version": "v7"},
                       "vocab": vocab, "special_tokens": []}).encode(), "json"


def _trained_model(**options: object) -> bytes:
    import sentencepiece as spm

    folder = Path(tempfile.mkdtemp(prefix="bench-spm-"))
    corpus = folder / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog aaaa bbb\n" * 50, encoding="utf-8")
    tsv = options.pop("rules", None)
    if tsv is not None:
        (folder / "rules.tsv").write_text(str(tsv), encoding="utf-8")
        options["normalization_rule_tsv"] = str(folder / "rules.tsv")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(corpus), model_type="bpe", vocab_size=60, hard_vocab_limit=False,
                                   model_writer=model, minloglevel=2, num_threads=1, byte_fallback=False,
                                   **options)
    return model.getvalue()


def _with_piece(data: bytes, piece: str, kind: int) -> bytes:
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(data)
    proto.pieces.add(piece=piece, score=0.0, type=kind)
    return proto.SerializeToString()


def charsmap_rule() -> tuple[bytes, str]:
    """Row 2: a charsmap rule whose source is 20,000 `a` (sentencepiece's trainer builds it)."""
    return _trained_model(rules=" ".join(["61"] * 20_000) + "\t62\n"), "model"


def user_defined_piece() -> tuple[bytes, str]:
    """Row 2: a user-defined piece of 19,999 `a` and a `b` (a 20 KB file)."""
    return _with_piece(_trained_model(normalization_rule_name="identity"), "a" * 19_999 + "b", 4), "model"


def long_piece() -> tuple[bytes, str]:
    """Row 5: a normal piece of 100,000 `a`, to decode 3,000 times."""
    return _with_piece(_trained_model(normalization_rule_name="identity"), "a" * 100_000, 1), "model"


def long_entry() -> tuple[bytes, str]:
    """Row 5: a tokenizer.json vocab entry at LIMIT_TOKEN_BYTES (65,536 `a`), to decode 3,000 times."""
    return _hf_json({**LETTERS, "a" * 65_536: 26}), "json"


def _encode(text: str) -> Callable[[str], tuple[str, str, bytes]]:
    return lambda ref: ("POST", f"/api/tokenizers/{ref}/encode", json.dumps({"text": text}).encode())


def _decode_last(times: int) -> Callable[[str], tuple[str, str, bytes]]:
    """Decode the tokenizer's longest token (the long piece or entry) `times` times ("LAST": its id, looked up)."""
    return lambda ref: ("POST", f"/api/tokenizers/{ref}/decode", json.dumps({"ids": ["LAST"] * times}).encode())


HOSTILE_FILES = (
    HostileFile("tokenizer.json Split (?:(?:a{1000}){1000}){5}", split_bomb, _encode("a" * 5_000)),
    HostileFile("Tekken pattern (?:(?:c{1000}){1000}){3}", tekken_bomb, _encode("c" * 5_000)),
    HostileFile(".model charsmap rule of 20,000 a; encode 16,000 a", charsmap_rule, _encode("a" * 16_000)),
    HostileFile(".model user-defined 19,999 a + b; encode 12,000 a", user_defined_piece, _encode("a" * 12_000)),
    HostileFile(".model piece of 100,000 a; decode 3,000 ids", long_piece, _decode_last(3_000)),
    HostileFile("tokenizer.json entry of 65,536 a; decode 3,000 ids", long_entry, _decode_last(3_000)),
)


class Watch:
    """/healthz from another client every 0.1 s, and the workers' RSS sampled with it, while a request runs."""

    def __init__(self, port: int, session: int) -> None:
        self.port, self.session = port, session
        self.before = {pid: _rss_kb(pid) for pid in gunicorn_workers(session)}
        self.peak = dict(self.before)
        self.probes: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                self.probes.append(request(self.port, "GET", "/healthz", client=2, timeout=REQUEST_TIMEOUT)[2])
            except OSError:
                self.probes.append(REQUEST_TIMEOUT)
            for pid in self.before:
                self.peak[pid] = max(self.peak[pid], _rss_kb(pid))
            self.stop.wait(0.1)

    def __enter__(self) -> "Watch":
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def report(self) -> str:
        time.sleep(0.5)  # (what a worker keeps once the request is answered)
        kept = max((_rss_kb(pid) - kb for pid, kb in self.before.items() if _rss_kb(pid)), default=0)
        peak = max((self.peak[pid] - kb for pid, kb in self.before.items()), default=0)
        gone = sum(1 for pid in self.before if not _rss_kb(pid))
        probes = [p * 1000 for p in self.probes] or [0.0]
        return (f"workers peak +{peak / 1024:.0f} MB, kept +{kept / 1024:.0f} MB"
                + (f", {gone} worker(s) gone (killed or restarted)" if gone else "")
                + f"; /healthz n={len(self.probes)} p50 {statistics.median(probes):.0f} ms max {max(probes):.0f} ms")


def _message(status: int, data: bytes) -> str:
    try:
        body = json.loads(data)
    except ValueError:  # (gunicorn's or nginx's own page: its title)
        text = " ".join(data.decode(errors="replace").split())
        return text.split("<title>")[1].split("</title>")[0] if "<title>" in text else text[:100]
    error = body.get("error") if isinstance(body, dict) else None
    if error:
        return str(error.get("message", ""))[:140]
    return "ok" if status == 200 else str(body)[:100]


def _open(port: int, content: bytes, kind: str, client: int) -> tuple[int, bytes, float]:
    """Open a file through /api/import: (status, answer, seconds); a job (a file over
    JOB_IMPORT_BYTES) is waited for, bounded, and its outcome answered as the inline route would."""
    started = time.perf_counter()
    if kind == "model":
        status, data, _s, _ = request(port, "POST", "/api/import?filename=tokenizer.model", content, client=client,
                                      content_type="application/octet-stream", timeout=REQUEST_TIMEOUT)
    else:
        status, data, _s, _ = request(port, "POST", "/api/import", json.dumps(
            {"content": content.decode(), "filename": "tokenizer.json"}).encode(), client=client,
            timeout=REQUEST_TIMEOUT)
    if status == 202:
        url, deadline = json.loads(data)["url"], time.monotonic() + REQUEST_TIMEOUT
        while time.monotonic() < deadline:
            job = json.loads(request(port, "GET", url, client=client)[1])
            if job["state"] in ("done", "failed", "cancelled"):
                done = job["state"] == "done"
                status, data = (200, json.dumps(job["result"]).encode()) if done else \
                    (400, json.dumps({"error": job.get("error")}).encode())
                break
            time.sleep(0.3)
    return status, data, time.perf_counter() - started


def _longest_id(port: int, ref: str) -> int:
    """The id of the tokenizer's longest token (the long piece or entry): its {token: id} vocab."""
    vocab = json.loads(request(port, "GET", f"/api/tokenizers/{ref}", timeout=REQUEST_TIMEOUT)[1])["vocab"]
    return int(max(vocab.items(), key=lambda item: len(item[0]))[1])


def preset_decode(port: int, session: int, name: str = "o200k_base", count: int = 1_000_000) -> None:
    """Row 5 without a file: `count` ids of a preset's longest token decoded (the issue's 128 MB)."""
    vocab = json.loads(request(port, "GET", f"/api/tokenizers/{name}/vocab?limit=200&q=" + "%20" * 64,
                               timeout=REQUEST_TIMEOUT)[1]).get("tokens") or []
    if not vocab:
        print(f"  {name}: no token of 64 spaces to decode")
        return
    token = max(vocab, key=lambda t: len(t["bytes"]))
    body = json.dumps({"ids": [token["id"]] * count}).encode()
    print(f"  {name}: {count:,} ids of its token {token['id']} ({len(token['bytes'])} bytes) decoded "
          f"({len(body) / 2**20:.1f} MiB request)")
    with Watch(port, session) as watch:
        try:
            status, data, seconds, _ = request(port, "POST", f"/api/tokenizers/{name}/decode", body, client=149,
                                               timeout=REQUEST_TIMEOUT)
        except OSError as exc:
            status, data, seconds = 0, str(exc).encode(), REQUEST_TIMEOUT
    size = f", {len(data) / 2**20:.1f} MiB answered" if status == 200 else ""
    print(f"    use:  {status} in {seconds:.2f} s ({_message(status, data)}{size}); {watch.report()}")


def measure_files(port: int, session: int) -> None:
    """Open and use each worst file, one after another, then a preset's long decode; print what each cost."""
    print("issue 44: the worst tokenizer files, opened and used once each (refusals are expected)")
    for client, hostile in enumerate(HOSTILE_FILES, start=150):
        content, kind = hostile.build()
        print(f"  {hostile.name} ({len(content):,} bytes)")
        with Watch(port, session) as watch:
            try:
                status, data, seconds = _open(port, content, kind, client)
            except OSError as exc:
                status, data, seconds = 0, str(exc).encode(), REQUEST_TIMEOUT
        print(f"    open: {status} in {seconds:.2f} s ({_message(status, data)}); {watch.report()}")
        if status != 200:
            continue
        ref = json.loads(data)["tokenizer"]
        method, path, body = hostile.use(ref)
        if b'"LAST"' in body:
            body = body.replace(b'"LAST"', str(_longest_id(port, ref)).encode())
        with Watch(port, session) as watch:
            try:
                status, data, seconds, _ = request(port, method, path, body, client=client, timeout=REQUEST_TIMEOUT)
            except OSError as exc:
                status, data, seconds = 0, str(exc).encode(), REQUEST_TIMEOUT
        size = f", {len(data) / 2**20:.1f} MiB answered" if status == 200 else ""
        print(f"    use:  {status} in {seconds:.2f} s ({_message(status, data)}{size}); {watch.report()}")
    preset_decode(port, session)
