"""The Trace is the model's run over the pieces its splitter cut (webapp/tokenizer/pieces.py).

Checked against `Tokenizer.encode`, the other way through the same stages: the
trace's ids are encode's ids, its tokens cover the text the model sees without
a gap, and each added (special) token stands as one token where it is in the
text. Presets with each kind of splitter and model, and random typed rules
with random special tokens.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webapp.tokenizer import load_preset, tokenizer_of
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets.catalog import is_installed
from webapp.tokenizer.stages.tokenizer import Tokenizer
from webapp.tokenizer.traces import DEFAULT_TRACE_LIMITS, TraceLimits

TEXTS = ["Hello <|endoftext|> world  \n\n  x", "<s>hi</s><unk>", "x<|begin_of_text|>y<|begin_of_text|>",
         "<|im_start|>user\nnaïve café<|im_end|>", "[INST] 日本語 [/INST]", "", "plain text, no special"]


def check(tokenizer: Tokenizer, text: str, allowed: frozenset[str] | None, unit: str = "bytes") -> None:
    """The trace against the encode of the same text, every claim of its tokens replayed."""
    trace, added_at = tokenizer.trace(text, allowed, DEFAULT_TRACE_LIMITS, unit)
    assert trace.ids == tokenizer.encode(text, allowed)
    assert [t.id for t in trace.tokens] == trace.ids and not trace.tokens_truncated
    shown = trace.text if trace.text is not None else text
    whole: bytes | str = shown.encode("utf-8", "surrogatepass") if unit == "bytes" else shown
    at = 0
    for token in trace.tokens:  # no gap and no overlap, each value the text it spans
        assert token.start == at and whole[token.start:token.end] == token.value
        at = token.end
    assert at == len(whole) or tokenizer.loaded.unknown_bytes  # (bytes with no token leave no token)
    special_ids = set(tokenizer.loaded.special_tokens.values())
    for index in added_at:
        token = trace.tokens[index]
        assert token.id in special_ids and token.tree is None
        assert tokenizer.loaded.special_tokens.get(str(token.value if unit == "chars" else
                                                       bytes(token.value).decode("utf-8"))) == token.id


@pytest.mark.parametrize("name,scheme", [("cl100k_base", None), ("qwen3", None), ("qwen3", "gpt2"),
                                         ("llama3", "none"), ("mistral_tekken", None), ("mistral_v3", "gpt2"),
                                         ("llama2", None)])
@pytest.mark.parametrize("text", TEXTS)
def test_a_preset_trace_is_its_encode_with_the_special_tokens_in_place(name: str, scheme: str | None,
                                                                      text: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")
    tok = load_preset(name)
    tokenizer = tokenizer_of(tok, scheme)
    for allowed in (frozenset(), frozenset(tok.special_tokens), None):
        check(tokenizer, text, allowed)
    if tokenizer.on_chars_page:
        check(tokenizer, text, None, "chars")


def test_a_special_token_in_a_library_order_file_shown_with_a_scheme_is_one_token() -> None:
    """Before the seam, this trace merged the special token's text while encode split it out."""
    if not is_installed("qwen3"):
        pytest.skip("qwen3 is not installed")
    tok = load_preset("qwen3")
    tokenizer = tokenizer_of(tok, "gpt2")
    text = "hi<|im_end|>there"
    trace, added_at = tokenizer.trace(text, frozenset({"<|im_end|>"}), DEFAULT_TRACE_LIMITS)
    assert [trace.tokens[i].value for i in added_at] == [b"<|im_end|>"]
    assert trace.ids == tokenizer.encode(text, frozenset({"<|im_end|>"}))
    assert (2, 12) in trace.pretokens  # the special token's span is one of the pre-tokens


SPECIALS = {"<|a|>": 300, "<|bb|>": 301}


def typed(merges: list[tuple[int, int, int]], scheme: str) -> LoadedTokenizer:
    vocab: dict[int, bytes] = {}
    spelt = lambda i: bytes([i]) if i < 256 else vocab.get(i)  # noqa: E731
    for left, right, new in merges:
        if new not in vocab and spelt(left) is not None and spelt(right) is not None:
            vocab[new] = spelt(left) + spelt(right)  # type: ignore[operator]
    return LoadedTokenizer(level="bytes", merges=tuple(merges), vocab=vocab, source="playground",
                           pretokenize=scheme, special_tokens=dict(SPECIALS))


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.sampled_from(b"ab <|>\n"), st.sampled_from(b"ab <|>\n")), max_size=8),
    text=st.lists(st.sampled_from(["a", "b", " ", "<|a|>", "<|bb|>", "<", "|", "\n", "é"]), max_size=10).map("".join),
    scheme=st.sampled_from(["none", "gpt2"]),
    allow=st.sampled_from([(), ("<|a|>",), ("<|a|>", "<|bb|>")]),
    max_tokens=st.integers(1, 6),
)
def test_typed_rules_trace_as_they_encode(pairs: list[tuple[int, int]], text: str, scheme: str,
                                          allow: tuple[str, ...], max_tokens: int) -> None:
    merges = [(left, right, 256 + i) for i, (left, right) in enumerate(pairs)]
    tokenizer = tokenizer_of(typed(merges, scheme))
    allowed = frozenset(allow)
    check(tokenizer, text, allowed)
    # A smaller record: the ids stay complete, the tokens are the first ones of the whole record.
    small, added_at = tokenizer.trace(text, allowed, TraceLimits(max_steps=2, max_tokens=max_tokens, max_sequence=3))
    whole, _ = tokenizer.trace(text, allowed, DEFAULT_TRACE_LIMITS)
    assert small.ids == whole.ids
    assert [(t.id, t.start, t.end) for t in small.tokens] == [(t.id, t.start, t.end) for t in
                                                               whole.tokens[:len(small.tokens)]]
    assert small.tokens_truncated == (len(whole.tokens) > len(small.tokens))
    assert all(small.tokens[i].id in SPECIALS.values() for i in added_at)
