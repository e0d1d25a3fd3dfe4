"""The two units of loaded.py (`ByteUnit`, `CharUnit`) and the `Contents` holder of deferred fields.

Each unit answers, for a tokenizer of its level, what the readers used to
work out themselves by branching on `level`. These tests check every answer
against a second way to get it (the rule table against the rules one by one,
the names against the lookup, decoding against the encoded text), for the
four kinds of file: byte and character level, in list and in library order.
"""

from __future__ import annotations

import dataclasses
import pickle
from functools import lru_cache

import pytest

from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer, char_level_tokenizer
from webapp.tokenizer import LoadedTokenizer, import_tokenizer, load_preset, tokenizer_of
from webapp.tokenizer.formats import from_playground
from webapp.tokenizer.loaded import UNITS, ByteUnit, CharUnit

TEXT = "The lowest newer widths: schöne Städte 東京"


@lru_cache(maxsize=None)
def tokenizer(kind: str) -> LoadedTokenizer:
    if kind == "bytes, list order":
        return load_preset("gpt2")
    if kind == "bytes, library order":
        return import_tokenizer(byte_level_tokenizer(SAMPLE_CORPUS).to_str())
    if kind == "chars, library order":
        return import_tokenizer(char_level_tokenizer(SAMPLE_CORPUS).to_str())
    vocab = {ch: i for i, ch in enumerate(sorted(set("".join(SAMPLE_CORPUS))))}
    merges = [("l", "o"), ("lo", "w"), ("e", "s"), ("es", "t"), ("x", "y")]  # ("x", "y") makes no vocab token
    vocab.update({"lo": len(vocab), "low": len(vocab) + 1, "es": len(vocab) + 2, "est": len(vocab) + 3})
    return from_playground(level="chars", merges=merges, vocab=vocab)


KINDS = ["bytes, list order", "bytes, library order", "chars, library order", "chars, list order"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_unit_is_the_levels_and_its_vocab_is_every_ordinary_token(kind: str) -> None:
    tok = tokenizer(kind)
    assert isinstance(tok.unit, ByteUnit if kind.startswith("bytes") else CharUnit)
    assert tok.unit is UNITS[tok.level]
    ordinary = tok.unit.ordinary_bytes(tok)
    assert tok.summary()["vocab"] == tok.unit.vocab_size(tok) == len(ordinary)


@pytest.mark.parametrize("kind", KINDS)
def test_each_rule_row_is_the_rule_read_alone(kind: str) -> None:
    tok = tokenizer(kind)
    rows = tok.unit.file_rule_rows(tok)
    assert rows.shape == (len(tok.merges), 3)
    vocab_ids = set(tok.unit.ordinary_bytes(tok))
    for index, row in enumerate(rows.tolist()):
        if row == [-1, -1, -1]:  # (only a character-level rule naming a string the vocab lacks)
            assert tok.unit is UNITS["chars"]
            left, right = tok.merges[index]
            assert {left, right, left + right} - set(tok.vocab)
            continue
        assert tuple(row) == tok.unit.file_rule(tok, index)
        assert set(row) <= vocab_ids


@pytest.mark.parametrize("kind", [k for k in KINDS if "library" in k])
def test_a_library_models_parts_are_the_vocab_spelt_and_the_rules(kind: str) -> None:
    tok = tokenizer(kind)
    strings, rules = tok.unit.library_parts(tok)
    names = tok.unit.token_names(tok)
    assert strings == {name: i for i, name in names.items()}
    assert [tuple(int(x) for x in rule) for rule in rules] == [tok.unit.file_rule(tok, r) for r in range(len(tok.merges))]


@pytest.mark.parametrize("kind", KINDS)
def test_names_and_the_lookup_agree_and_the_lookup_knows_what_is_missing(kind: str) -> None:
    tok = tokenizer(kind)
    names = tok.unit.token_names(tok)
    lookup = tok.unit.name_lookup(tok)
    assert all(lookup(i) == name for i, name in names.items())
    assert lookup(max(names) + 1) is None
    spelt = 0
    for i, data in tok.unit.ordinary_bytes(tok).items():
        try:
            piece = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # (part of a character: no text spells it)
        assert tok.unit.spell(piece) == names[i]
        spelt += 1
    assert spelt > len(names) // 2


@pytest.mark.parametrize("kind", KINDS)
def test_joining_the_encoded_ids_gives_the_text_back(kind: str) -> None:
    tok = tokenizer(kind)
    tokenizer_ = tokenizer_of(tok)
    text = TEXT if tokenizer_.takes_page_scheme or tok.pipeline else "lowest newest"
    ids = tokenizer_.encode(text, frozenset())
    vocab = tok.unit.page_bytes(tok)
    if not tok.pipeline:
        assert tok.unit.join_ids(tok, ids, vocab) == text
    assert b"".join(vocab[i] for i in ids).decode("utf-8") == text


def test_the_base_ids_are_the_single_bytes_at_the_byte_level_and_none_at_the_char_level() -> None:
    tok = tokenizer("bytes, list order")
    ordinary = tok.unit.ordinary_bytes(tok)
    assert sorted(tok.unit.base_ids(tok)) == sorted(i for i, data in ordinary.items() if len(data) == 1)
    assert tokenizer("chars, list order").unit.base_ids(tokenizer("chars, list order")) == []


def test_a_missing_id_is_an_error_naming_it_at_the_char_level() -> None:
    tok = tokenizer("chars, list order")
    with pytest.raises(Exception, match="ids: id 99999 is not in the tokenizer's vocab"):
        tok.unit.join_ids(tok, [0, 99999], {})


@pytest.mark.parametrize(("kind", "pages", "scheme"), [
    ("bytes, list order", ("bytes",), True),
    ("bytes, library order", ("bytes",), True),
    ("chars, library order", ("bytes", "chars"), False),
    ("chars, list order", ("chars",), False),
])
def test_which_pages_show_each_kind(kind: str, pages: tuple[str, ...], scheme: bool) -> None:
    tokenizer_ = tokenizer_of(tokenizer(kind))
    assert [page for page in ("bytes", "chars") if tokenizer_.shows_on(page)] == list(pages)
    assert tokenizer_.takes_page_scheme is scheme
    assert tokenizer_.on_chars_page is (kind == "chars, library order")  # (the one with a pipeline of its own)


# --- Contents: deferred fields ---------------------------------------------------------------


def _deferred(calls: list[str]) -> LoadedTokenizer:
    def merges() -> tuple[tuple[int, int, int], ...]:
        calls.append("merges")
        return ((104, 105, 256),)

    def vocab() -> dict[int, bytes]:
        calls.append("vocab")
        return {256: b"hi"}

    return LoadedTokenizer.deferred({"merges": merges, "vocab": vocab}, 1, level="bytes")


def test_a_deferred_field_is_made_once_on_first_read_and_then_is_an_ordinary_field() -> None:
    calls: list[str] = []
    tok = _deferred(calls)
    assert tok.contents.pending() == {"merges", "vocab"} and tok.rule_count == 1 and calls == []
    assert tok.merges == ((104, 105, 256),) and calls == ["merges"]
    assert tok.merges is tok.merges and calls == ["merges"]
    assert tok.contents.pending() == {"vocab"}
    eager = LoadedTokenizer("bytes", ((104, 105, 256),), {256: b"hi"})
    assert tok == eager and calls == ["merges", "vocab"]  # (equality reads both)
    assert dataclasses.replace(tok, pretokenize="gpt2").vocab == {256: b"hi"}


def test_pickling_a_deferred_tokenizer_keeps_the_values_and_not_the_makers() -> None:
    calls: list[str] = []
    again = pickle.loads(pickle.dumps(_deferred(calls)))
    assert calls == ["merges", "vocab"]
    assert again.contents.pending() == frozenset()
    assert again == LoadedTokenizer("bytes", ((104, 105, 256),), {256: b"hi"})


def test_only_merges_and_vocab_can_be_deferred() -> None:
    with pytest.raises(ValueError, match="only merges, vocab can be deferred, not level"):
        LoadedTokenizer.deferred({"level": lambda: "bytes"}, 0, level="bytes")
    with pytest.raises(TypeError):
        LoadedTokenizer("bytes")  # type: ignore[call-arg]  # (the two stay required arguments)


def test_a_maker_that_raises_is_tried_again_on_the_next_read() -> None:
    attempts: list[int] = []

    def merges() -> tuple[tuple[int, int, int], ...]:
        attempts.append(1)
        if len(attempts) == 1:
            raise MemoryError("the first try fails")
        return ((104, 105, 256),)

    tok = LoadedTokenizer.deferred({"merges": merges}, 1, level="bytes", vocab={256: b"hi"})
    with pytest.raises(MemoryError):
        tok.merges
    assert tok.contents.pending() == {"merges"}
    assert tok.merges == ((104, 105, 256),) and len(attempts) == 2 and tok.contents.pending() == frozenset()
