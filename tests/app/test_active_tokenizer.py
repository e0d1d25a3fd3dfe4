"""webapp/opened/active.py: one active tokenizer per page, and the prefix trace used while typing into long texts."""

from __future__ import annotations

import random

import pytest

from webapp.tokenizer import TraceLimits
from webapp.opened import active as act


def test_resolve_picks_exactly_one_source(app):
    with app.app_context():
        assert act.resolve("bytes", {"tokenizer": "", "merges": "1 2 256"}).source == "typed"
        preset = act.resolve("bytes", {"tokenizer": "cl100k_base"})
        assert preset.source == "preset" and preset.entry is not None and preset.error is None
        missing = act.resolve("bytes", {"tokenizer": "a" * 16})
        assert missing.source == "file" and missing.entry is None
        assert missing.error is not None and "no tokenizer is stored" in missing.error.message
        assert missing.status().error == missing.error.message
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
        quick = act.prefix_byte_trace(active, text, "cl100k", limits=TraceLimits.tokens_only(500))
        whole, _, whole_specials = act.byte_trace(active, text, "cl100k",
                                                  limits=TraceLimits.tokens_only(500))
    assert quick is not None
    trace, _, specials = quick
    assert trace.ids == whole.ids  # every id, from the fast encoder
    assert trace.tokens == whole.tokens  # the same first 500 spans
    assert trace.tokens_truncated
    assert specials == whole_specials


def test_prefix_trace_is_not_used_for_typed_merges_or_short_texts(app):
    with app.test_request_context():
        typed = act.resolve("bytes", {"merges": "108 111 256"})
        assert act.prefix_byte_trace(typed, "low " * 3000, "gpt2", limits=TraceLimits.tokens_only(100)) is None
        preset = act.resolve("bytes", {"tokenizer": "cl100k_base"})
        assert act.prefix_byte_trace(preset, "low " * 100, "cl100k", limits=TraceLimits.tokens_only(100)) is None


def test_a_keystroke_loads_its_tokenizer_once(app, monkeypatch):
    """The page resolves the active tokenizer once per request and every step uses that one load."""
    calls: list[str] = []
    original = act.tokenizer_store.load_tokenizer

    def counting(ref):
        calls.append(ref)
        return original(ref)

    monkeypatch.setattr(act.tokenizer_store, "load_tokenizer", counting)
    response = app.test_client().post("/fragments/bytes", data={
        "text": "hello <|endoftext|> world", "tokenizer": "cl100k_base", "special": "all", "ids": "15339 1917",
        "view": "trace"})
    assert response.status_code == 200
    assert "100257" in response.get_data(as_text=True)  # the special token's id is shown
    assert calls == ["cl100k_base"]


def test_special_tokens_styled_are_the_ones_the_trace_recognised(app):
    with app.test_request_context():
        plain = act.resolve("bytes", {"tokenizer": "cl100k_base", "special": ""})
        allowed = act.resolve("bytes", {"tokenizer": "cl100k_base", "special": "all"})
        _, _, none = act.byte_trace(plain, "a<|endoftext|>b", "cl100k",
                                    limits=TraceLimits.tokens_only(50))
        _, _, some = act.byte_trace(allowed, "a<|endoftext|>b", "cl100k",
                                    limits=TraceLimits.tokens_only(50))
    assert none == frozenset()
    assert some == frozenset({100257})


TYPED_RULES = "108 111 256\n256 119 257\n32 257 258\n101 114 259\n259 256 260\n97 97 261\n261 261 262"


@pytest.mark.parametrize("scheme", ["none", "gpt2", "cl100k", "o200k"])
def test_typed_rules_are_a_tokenizer_whose_answers_are_the_engines(app, scheme):
    """The page's typed rules go through the same stages as a file (no typed-only path): their ids, trace and
    explanation equal what the engine's own typed-rule functions give."""
    from webapp.tokenizer import explain_merges, pretokenized_encode, pretokenized_encode_trace, encode_trace
    from webapp.web.explain.explaining import explain_active

    with app.test_request_context():
        active = act.resolve("bytes", {"merges": TYPED_RULES})
        merges = act.typed_merges(active)
        assert active.source == "typed" and merges is not None and active.entry is not None
        for seed in range(6):
            text = _text(seed, 300) + " lower lowest aaaa"
            assert act.byte_ids(active, text, scheme) == pretokenized_encode(text, merges, scheme)
            limits = TraceLimits.tokens_only(10_000)
            trace, vocab, specials = act.byte_trace(active, text, scheme, limits=limits)
            engine = (pretokenized_encode_trace(text, merges, scheme, limits=limits) if scheme != "none"
                      else encode_trace(text, merges, limits=limits))
            assert (trace.ids, trace.tokens, vocab, specials) == (engine.ids, engine.tokens, None, frozenset())
            ours = explain_active(active, text, scheme)
            assert ours["ids"] == engine.ids
            assert ours["boundaries"] == explain_merges(text, merges, scheme)["boundaries"]


def test_a_bad_typed_rule_is_the_tokenizers_error_naming_merges(app):
    with app.test_request_context():
        active = act.resolve("bytes", {"merges": "1 2 256\n3 x 257"})
        assert active.entry is None and active.error is not None and active.error.field == "merges"
        with pytest.raises(Exception) as info:
            act.page_merges(active)
        assert info.value is active.error
