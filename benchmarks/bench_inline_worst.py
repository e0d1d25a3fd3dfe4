"""The slowest inline requests left (issue 28, row 7): wall time of requests at the inline bounds.

Each line is one request through the Flask test client in one process, at
the largest size that is still answered inline (JOB_COUNTS_WORK for Counts,
LIMIT_TEXT_CHARS / LIMIT_CHAT_RENDERED_CHARS for a chat, JOB_ENCODE_CHARS
for compare and encode), with texts and opened tokenizer.json files chosen
to be slow: one unsplittable piece with doubling merges, byte fallback for
every character, 50,000 merges, CJK text through gemma3 (no pre-tokenizer
split). LIMIT_REQUEST_SECONDS is off (0) so the figures are the work's own
cost, the figure the request budget has to cover; best of 2 where shown.

    .venv/bin/python benchmarks/bench_inline_worst.py

What it does not do: measure through gunicorn or compare with a peer (a
worst-case figure, not a speed target).
"""
import json, random, sys, tempfile, time
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
from corpus import english_text
from tests.conftest import make_app
app = make_app(tempfile.mkdtemp(), RATE_LIMIT_WORK="", JOB_IMPORT_BYTES=1 << 30, LIMIT_REQUEST_SECONDS=0)
c = app.test_client()

def hf(vocab, merges, pre=None, normalizer=None, byte_fallback=False):
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": normalizer,
        "pre_tokenizer": pre, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": byte_fallback,
                  "vocab": vocab, "merges": merges}})

def opened(content):
    r = c.post("/api/import", json={"content": content, "format": "hf"}); assert r.status_code == 200, r.get_json(); return r.get_json()["tokenizer"]

# (a) one unsplittable piece: doubling merges a..a (2^19)
vocab = {"a" * (1 << k): k for k in range(20)}; merges = ["a" * (1 << k) + " " + "a" * (1 << k) for k in range(19)]
doubling = opened(hf(vocab, merges))
# (b) byte fallback: every character unknown (CJK), <0xXX> tokens and merges between them
fb_vocab = {f"<0x{b:02X}>": b for b in range(256)}
fb = opened(hf(fb_vocab, [], byte_fallback=True))
# (c) many merges: random two-letter chains over a-z
rnd = random.Random(1)
v = {chr(97 + i): i for i in range(26)}; m = []
toks = list(v)
while len(m) < 50_000:
    a, b = rnd.choice(toks), rnd.choice(toks)
    if a + b in v or len(a + b) > 12: continue
    v[a + b] = len(v); m.append(f"{a} {b}"); toks.append(a + b)
many = opened(hf(v, m))

def timed(label, path, body, reps=2):
    best = 1e9
    for _ in range(reps):
        s = time.perf_counter(); r = c.post(path, json=body); best = min(best, time.perf_counter() - s)
    print(f"{label:60s} {r.status_code} {best:6.2f} s", flush=True)

eng = english_text(0, 1_100_000)
letters = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(1_000_000))
cjk = "".join(chr(0x4E00 + rnd.randrange(20000)) for _ in range(500_000))
c.post("/api/counts", json={"text": "warm"})
timed("counts 13 presets x 38,461 chars (new text each)", "/api/counts", {"text": eng[:38_461]}, reps=1)
timed("counts 1 opened (doubling, one piece) x 500,000 'a'", "/api/counts", {"text": "a" * 500_000, "tokenizers": [doubling]})
timed("counts 1 opened (byte fallback) x 500,000 CJK", "/api/counts", {"text": cjk, "tokenizers": [fb]})
timed("counts 1 opened (50,000 merges) x 500,000 letters", "/api/counts", {"text": letters[:500_000], "tokenizers": [many]}, reps=1)
timed("counts o200k_base x 500,000 letters", "/api/counts", {"text": letters[:500_000], "tokenizers": ["o200k_base"]}, reps=1)
timed("counts gemma3 x 500,000 CJK", "/api/counts", {"text": cjk, "tokenizers": ["gemma3"]}, reps=1)
# chat: 1,000,000 characters of messages, one tokenizer, never a job
msgs = lambda text: {"messages": [{"role": "user", "content": text[i:i + 100_000]} for i in range(0, len(text), 100_000)]}
timed("chat llama3, 999,000 chars (letters)", "/api/tokenizers/llama3/chat", msgs(letters[:999_000]), reps=1)
timed("chat gemma3, 999,000 chars (CJK x2)", "/api/tokenizers/gemma3/chat", msgs((cjk * 2)[:999_000]), reps=1)
timed("chat gemma3, 999,000 chars ('a')", "/api/tokenizers/gemma3/chat", msgs("a" * 999_000), reps=1)
timed("chat qwen3, 999,000 chars (CJK x2)", "/api/tokenizers/qwen3/chat", msgs((cjk * 2)[:999_000]), reps=1)
# compare: 200,000 characters, two presets (JOB_ENCODE_CHARS)
timed("compare gemma3 / o200k_base, 200,000 chars letters", "/api/compare", {"text": letters[:200_000], "a": {"tokenizer": "gemma3"}, "b": {"tokenizer": "o200k_base"}}, reps=1)
# encode: 200,000 chars, 100,000 typed rules
rules = [[97 + i % 26, 97 + (i * 7) % 26, 256 + i] for i in range(26 * 26)]
timed("encode 200,000 letters, 676 typed rules", "/api/encode", {"text": letters[:200_000], "merges": rules}, reps=1)
