"""The trace of a real tokenizer (preset or opened file) is drawn in its own tokens.

A preset's ids are not bytes: cl100k_base numbers the byte "H" 39, so a trace
drawn as if ids 0..255 were bytes shows `'` for "H". For every preset the
trace's last sequence must be exactly the ids `encode` gives, and the view
model's last row must show the very tokens the Tokens view shows.
"""

from __future__ import annotations

import pytest

from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer
from webapp.tokenizer import PRESET_NAMES, TraceLimits, get_tokenizer
from tests.loaded_calls import encode_special, encode_trace_special
from webapp.tokenizer.formats.dispatch import export_tokenizer, import_tokenizer
from webapp.web.common import trace_views
from webapp.web.common import viewmodels as vm

TEXTS = [
    "Hello world! The quick brown fox, 1234567 naïve 東京 😀",
    "def f(x):\n    return x  +  1\n\n",
    "a",
    "",
]


def _final_ids(trace) -> list[int]:
    """What the trace table's last row shows the text became: the last pass's whole sequence in the
    seed order; for a library-order file, whose passes show one piece each (or none at all, when
    ignore_merges takes a piece whole), the "result" row the table then ends with."""
    last = trace_views.byte_trace_rows(trace, vocab={})[-1]
    assert last.more in (None, (False, False)), "the last row is a window, not the whole output"
    return [int(c.id) for c in last.chips or []]


@pytest.mark.parametrize("name", sorted(set(PRESET_NAMES)))
@pytest.mark.parametrize("text", TEXTS)
def test_trace_final_ids_equal_encode_for_every_preset(name: str, text: str) -> None:
    tok = get_tokenizer(name)
    trace, _ = encode_trace_special(tok.loaded, text, frozenset(), scheme=None, limits=TraceLimits(max_steps=10_000))
    assert not trace.steps_truncated
    assert _final_ids(trace) == tok.encode_ordinary(text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_trace_rows_show_the_presets_own_tokens(name: str) -> None:
    tok = get_tokenizer(name)
    text = TEXTS[0]
    trace, _ = encode_trace_special(tok.loaded, text, frozenset(), scheme=None, limits=TraceLimits(max_steps=10_000))
    vocab = {i: tok.decode_bytes([i]) for i in set(trace.ids) | {int(s) for s in trace.initial or ()}
             | {int(x) for st in trace.steps for x in (st.left, st.right, st.new)}}
    rows = trace_views.byte_trace_rows(trace, text=text, vocab=vocab)
    start = "".join(c.text for c in rows[0].chips or [])
    assert start.startswith("Hello")  # not "'DKKN" (ids read as bytes)
    views = [t for g in vm.byte_token_views(trace, text) for t in g.tokens]
    last = rows[-1].chips or []
    assert [c.id for c in last] == [t.id for t in views]
    assert [c.text for c in last] == [t.text for t in views]
    assert all(c.show_id == (len(vocab[c.id]) != 1) for c in last)
    # the rule names its tokens too, not ids only
    assert any(r.rule_tokens == "'o' + 'r' → 'or'" for r in rows[1:])


def test_a_cut_trace_ends_with_the_result() -> None:
    tok = get_tokenizer("cl100k_base")
    text = TEXTS[0]
    trace, _ = encode_trace_special(tok.loaded, text, frozenset(), scheme=None, limits=TraceLimits(max_steps=3))
    assert trace.steps_truncated
    vocab = {i: tok.decode_bytes([i]) for i in range(1000)} | {i: tok.decode_bytes([i]) for i in trace.ids}
    rows = trace_views.byte_trace_rows(trace, text=text, vocab=vocab)
    assert rows[-1].label == "result"
    assert [c.id for c in rows[-1].chips or []] == trace.ids


@pytest.mark.parametrize("fmt", ["hf-json", "tiktoken"])
def test_an_opened_file_traces_in_its_own_tokens(fmt: str) -> None:
    hf = byte_level_tokenizer(SAMPLE_CORPUS)
    tok = import_tokenizer(hf.to_str(), filename="tokenizer.json")
    if fmt == "tiktoken":  # the same tokenizer written as a rank file, opened again
        content, _, _ = export_tokenizer(tok, "tiktoken")
        tok = import_tokenizer(content, fmt="tiktoken")
    text = "Hello there, the lowest newer München"
    trace, _ = encode_trace_special(tok, text, frozenset(), limits=TraceLimits(max_steps=10_000))
    rows = trace_views.byte_trace_rows(trace, text=text, vocab=tok.file_vocab())
    assert "".join(c.text for c in rows[0].chips or []).startswith("Hello")
    assert [c.id for c in rows[-1].chips or []] == encode_special(tok, text, frozenset())
    if fmt == "hf-json":
        assert [c.id for c in rows[-1].chips or []] == hf.encode(text).ids


def test_a_long_piece_in_the_library_order_is_traced_in_windows() -> None:
    """gemma3 takes a run of letters as one piece. Each step used to carry the whole piece (and the
    live symbols were kept by removing from a list per merge: quadratic, a 200,000-letter piece took
    minutes inline, past gunicorn's timeout). A step now shows a window of WINDOW_RADIUS symbols
    on each side, as the seed order's traces do; the ids are still the whole encode."""
    import random

    from webapp.tokenizer.core.list_order.tracing import WINDOW_RADIUS

    tok = get_tokenizer("gemma3")
    if not tok.loaded.library_order:
        pytest.skip("gemma3 is not in the library order here")
    rnd = random.Random(4)
    text = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3_000))
    trace, _ = encode_trace_special(tok.loaded, text, frozenset(), scheme=None, limits=TraceLimits(max_steps=200))
    assert trace.ids == tok.encode_ordinary(text) and trace.steps_truncated
    assert len(trace.steps) == 200
    assert all(step.window is not None and len(step.window) <= 2 * WINDOW_RADIUS + 1 for step in trace.steps)
    # merges fire anywhere in the 3,000 letters: nearly all of them with more of the piece on both sides
    assert sum(step.window_more == (True, True) for step in trace.steps) >= 180
    first = trace.steps[0]
    assert first.window is not None and first.window[first.changed[0]] == first.new
