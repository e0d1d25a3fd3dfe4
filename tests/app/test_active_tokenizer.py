"""webapp/active.py: one active tokenizer per page, and the prefix trace used while typing into long texts."""

from __future__ import annotations

import random

import pytest

from webapp.tokenizers import active as act


def test_resolve_picks_exactly_one_source():
    assert act.resolve("bytes", {"tokenizer": "", "merges": "1 2 256"}).source == "typed"
    assert act.resolve("bytes", {"tokenizer": "cl100k_base"}).source == "preset"
    assert act.resolve("bytes", {"tokenizer": "a" * 16}).source == "file"
    assert act.resolve("bytes", {"tokenizer": "cl100k_base", "special": "all"}).special == "all"
    assert act.resolve("chars", {"tokenizer": "x"}).level == "chars"


def _text(seed: int, size: int) -> str:
    rng = random.Random(seed)
    words = ["lower", "newest", " ", "  ", "\n", "naïve", "λόγος", "12345", "<|endoftext|>", "def f(x):", "😀", "ab"]
    out = []
    while sum(map(len, out)) < size:
        out.append(rng.choice(words))
    return "".join(out)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("special", ["", "all"])
def test_prefix_trace_spans_and_ids_equal_the_whole_trace(app, seed: int, special: str):
    text = _text(seed, 12_000)
    with app.test_request_context():
        active = act.resolve("bytes", {"tokenizer": "cl100k_base", "special": special})
        quick = act.prefix_byte_trace(active, text, "cl100k", max_tokens=500, max_sequence=0)
        whole, _ = act.byte_trace(active, text, None, "cl100k", max_steps=0, max_tokens=500, max_sequence=0)
    assert quick is not None
    trace, _ = quick
    assert trace.ids == whole.ids  # every id, from the fast encoder
    assert trace.tokens == whole.tokens  # the same first 500 spans
    assert trace.tokens_truncated


def test_prefix_trace_is_not_used_for_typed_merges_or_short_texts(app):
    with app.test_request_context():
        typed = act.resolve("bytes", {"merges": "108 111 256"})
        assert act.prefix_byte_trace(typed, "low " * 3000, "gpt2", max_tokens=100, max_sequence=0) is None
        preset = act.resolve("bytes", {"tokenizer": "cl100k_base"})
        assert act.prefix_byte_trace(preset, "low " * 100, "cl100k", max_tokens=100, max_sequence=0) is None
