"""normalize/sentencepiece.py's normalizer: the shortcut for a text with no character that starts a user-defined
symbol or rule (when all of those start with an ASCII byte) gives what the byte-by-byte pass gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer.normalize.sentencepiece import SpmNormalizer, SpmOptions

TEXT = st.lists(st.sampled_from(["a", "b", " ", "  ", "[", "[INST]", "<s>", "é", "日", "▁", "\t", "x y"]),
                max_size=30).map("".join)
FLAGS = st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans())


@settings(max_examples=examples(300), deadline=None)
@given(TEXT, FLAGS)
def test_texts_without_a_symbol_start_skip_the_byte_pass_and_agree_with_it(text: str, flags: tuple[bool, ...]) -> None:
    dummy, remove, escape, suffix = flags
    norm = SpmNormalizer(SpmOptions(b"", dummy, remove, escape, suffix, ("[INST]", "<s>")))
    general = norm._general(text.encode("utf-8")).decode("utf-8") if text else text
    assert norm(text) == general
    calls: list[bytes] = []
    original = norm._general
    norm._general = lambda data: calls.append(data) or original(data)  # type: ignore[method-assign]
    assert norm(text) == general
    assert bool(calls) == ("[" in text or "<" in text)  # (the byte pass only when a symbol may start)


def test_a_non_ascii_start_keeps_the_byte_pass() -> None:
    norm = SpmNormalizer(SpmOptions(b"", True, True, True, False, ("日本",)))
    calls: list[bytes] = []
    original = norm._general
    norm._general = lambda data: calls.append(data) or original(data)  # type: ignore[method-assign]
    assert norm("a b") == "\u2581a\u2581b" and calls
