"""Corpus training: streamed counting and both levels against the literal oracles.

Oracles: the pre-tokenization pattern applied to each whole document at once
(`regex.findall`, or `str.split` for "none"), and the literal algorithms
(`train_steps` for characters, `train_byte_steps` for bytes, in webapp/tokenizer/reference.py).
"""

from __future__ import annotations

import io
import re
import sys
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import TokenizerError, bpe_merges, encode
from webapp.tokenizer.training.corpus import (
    SCHEMES,
    TrainingCancelled,
    byte_merge_rules,
    count_streams,
    count_text,
    train_counts,
)
from webapp.tokenizer.pretokenize.patterns import PATTERNS

from webapp.tokenizer import reference


def literal_train(words: list[str], num_merges: int) -> list[tuple[tuple[str, str], int]]:
    """The literal algorithm's winning pair and its count, per step."""
    return [(pair, counts[pair]) for pair, counts in reference.train_steps(words, num_merges)]


def literal_step_counts(words: list[str], num_merges: int) -> list[dict[tuple[str, str], int]]:
    return [counts for _, counts in reference.train_steps(words, num_merges)]


def merge_word(symbols: list[str], pair: tuple[str, str]) -> list[str]:
    return reference.merge(symbols, pair[0], pair[1], pair[0] + pair[1])


literal_byte_train = reference.train_byte_steps
literal_byte_rules = reference.byte_training_rules

# Characters that exercise every alternative of the patterns and every cut rule:
# letters of several kinds, digits, contractions, punctuation, all sorts of whitespace.
SPICY = "ab A'sltdé中文1234.,!/  \t\n\r\x0b\x1c\xa0\u3000。-_"


def _truth(docs: list[str], scheme: str) -> Counter[str]:
    found: Counter[str] = Counter()
    for doc in docs:
        found.update(doc.split() if scheme == "none" else regex.findall(PATTERNS[scheme], doc))
    return found


def _streams(docs: list[str]) -> list[tuple[str, io.BytesIO]]:
    return [(f"doc{i}.txt", io.BytesIO(doc.encode("utf-8"))) for i, doc in enumerate(docs)]


documents = st.lists(st.text(alphabet=SPICY, max_size=60), min_size=1, max_size=3)


@settings(max_examples=examples(300), deadline=None)
@given(docs=documents, block=st.integers(1, 24), scheme=st.sampled_from(SCHEMES))
def test_streamed_counts_equal_the_pattern_over_each_whole_document(docs: list[str], block: int, scheme: str) -> None:
    counted = count_streams(_streams(docs), scheme, block_bytes=block)
    assert Counter(counted.counts) == _truth(docs, scheme)
    assert counted.pretokens == sum(_truth(docs, scheme).values())
    assert counted.bytes == sum(len(d.encode()) for d in docs)
    assert counted.chars == sum(map(len, docs))


def test_a_pattern_without_proven_cuts_is_matched_per_whole_document(monkeypatch: pytest.MonkeyPatch) -> None:
    from webapp.tokenizer.training import corpus as corpus_training

    monkeypatch.setitem(corpus_training.PATTERNS, "letters", r"\p{L}+|[^\p{L}]")
    monkeypatch.setattr(corpus_training, "SCHEMES", (*corpus_training.SCHEMES, "letters"))
    docs = ["ab cd\nef gh " * 5, "xy z"]
    counted = count_streams(_streams(docs), "letters", block_bytes=3)
    assert Counter(counted.counts) == Counter(p for d in docs for p in regex.findall(r"\p{L}+|[^\p{L}]", d))
    with pytest.raises(TokenizerError, match="no place to cut"):
        count_streams(_streams(["ab " * 40]), "letters", block_bytes=8, max_run_chars=50)


@settings(max_examples=examples(100), deadline=None)
@given(docs=st.lists(st.text(max_size=40), min_size=1, max_size=3), block=st.integers(1, 9),
       scheme=st.sampled_from(SCHEMES))
def test_streamed_counts_any_characters(docs: list[str], block: int, scheme: str) -> None:
    docs = [d.encode("utf-8", "replace").decode("utf-8") for d in docs]  # no lone surrogates in files
    assert Counter(count_streams(_streams(docs), scheme, block_bytes=block).counts) == _truth(docs, scheme)


def test_cut_classes_are_inside_the_pattern_classes() -> None:
    # The cut rules test letters/digits and whitespace with `re`; they must never say
    # "letter" or "whitespace" where the patterns (the `regex` package) do not.
    letter_re, space_re, nonspace_re = re.compile(r"[^\W_]"), re.compile(r"[^\S\x1c-\x1f]"), re.compile(r"\S")
    letter_rx, space_rx = regex.compile(r"[\p{L}\p{N}]"), regex.compile(r"\s")
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if letter_re.match(ch):
            assert letter_rx.match(ch), hex(code)
        if space_re.match(ch):
            assert space_rx.match(ch), hex(code)
        if nonspace_re.match(ch):
            assert not space_rx.match(ch), hex(code)


words = st.lists(st.text(alphabet=st.sampled_from(["a", "b", "ab", "é", " ", "\n"]), max_size=12), max_size=10)


@settings(max_examples=examples(200), deadline=None)
@given(docs=st.lists(st.text(alphabet="abé日 \n", max_size=30), min_size=1, max_size=3),
       num_merges=st.integers(0, 20), scheme=st.sampled_from(SCHEMES))
def test_chars_level_is_the_literal_algorithm(docs: list[str], num_merges: int, scheme: str) -> None:
    counts = count_text(docs, scheme).counts
    pieces = [piece for piece, n in counts.items() for _ in range(n)]
    result = train_counts(counts, "chars", num_merges)
    expected = literal_train(pieces, num_merges)
    assert list(zip(result.pairs, result.counts)) == expected
    assert result.merges == [a + b for (a, b), _ in expected]
    assert result.stopped == ("done" if len(expected) == num_merges else "exhausted")
    assert result.alphabet == sorted(set("".join(pieces)))
    # The runner-up is the best other pair's count at that step (0 when there is none).
    for step, counts in enumerate(literal_step_counts(pieces, num_merges)):
        others = [c for pair, c in counts.items() if pair != result.pairs[step]]
        assert result.runner_up[step] == max(others, default=0)


# Pre-tokens over two or three letters, repeated: the same symbol recurs within a word, so
# merges meet words holding the left operand more than once (one match or several), and
# later merges revisit words whose pairs earlier merges took away (the trainer's index).
repetitive_counts = st.dictionaries(st.text(alphabet="abc", min_size=2, max_size=14), st.integers(1, 5),
                                    min_size=1, max_size=8)


@settings(max_examples=examples(400), deadline=None)
@given(counts=repetitive_counts, num_merges=st.integers(1, 40), level=st.sampled_from(["chars", "bytes"]))
def test_repetitive_pretokens_train_as_the_literal_algorithm(counts: dict[str, int], num_merges: int,
                                                             level: str) -> None:
    pieces = [piece for piece, n in counts.items() for _ in range(n)]
    result = train_counts(counts, level, num_merges)
    if level == "chars":
        assert list(zip(result.pairs, result.counts)) == literal_train(pieces, num_merges)
    else:
        expected, _ = literal_byte_train([piece.encode() for piece in pieces], num_merges)
        assert list(zip(result.pairs, result.counts)) == expected


@settings(max_examples=examples(100), deadline=None)
@given(docs=st.lists(st.text(alphabet="lowerstn ", max_size=40), min_size=1, max_size=2), num_merges=st.integers(0, 15))
def test_chars_level_with_no_pretokenization_is_bpe_merges(docs: list[str], num_merges: int) -> None:
    counts = count_text(docs, "none").counts
    assert train_counts(counts, "chars", num_merges).merges == bpe_merges(" ".join(docs).split(), num_merges)


@settings(max_examples=examples(200), deadline=None)
@given(docs=st.lists(st.text(alphabet="aé€日\x00\xff b.", max_size=30), min_size=1, max_size=3),
       num_merges=st.integers(0, 25), scheme=st.sampled_from(SCHEMES))
def test_bytes_level_is_the_literal_algorithm(docs: list[str], num_merges: int, scheme: str) -> None:
    counts = count_text(docs, scheme).counts
    pieces = [piece.encode("utf-8") for piece, n in counts.items() for _ in range(n)]
    result = train_counts(counts, "bytes", num_merges)
    expected, final = literal_byte_train(pieces, num_merges)
    assert list(zip(result.pairs, result.counts)) == expected
    assert result.merges == literal_byte_rules([pair for pair, _ in expected])
    # The merge list encodes each training piece into the symbols training left it
    # with, whenever no token was spelled twice (then the ids are unambiguous).
    tokens = [a + b for a, b in result.pairs]
    if len(set(tokens)) == len(tokens):
        vocab = {b: bytes([b]) for b in range(256)} | {256 + k: t for k, t in enumerate(tokens)}
        for piece, symbols in zip(pieces, final):
            assert [vocab[i] for i in encode(piece.decode("utf-8"), result.merges)] == symbols


def test_runner_up_marks_ties() -> None:
    result = train_counts({"ab": 2, "cd": 2, "ef": 1}, "chars", 3)
    assert result.pairs == [("a", "b"), ("c", "d"), ("e", "f")]
    assert result.counts == [2, 2, 1]
    assert result.runner_up == [2, 1, 0]


def test_byte_rules_number_steps_from_256_and_reuse_the_first_id() -> None:
    pairs = [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc"), (b"abc", b"d")]
    assert byte_merge_rules(pairs) == [[97, 98, 256], [256, 99, 257], [98, 99, 258], [97, 258, 259], [257, 100, 260]]


def test_progress_and_cancel_during_training_keep_the_partial_result() -> None:
    counts = count_text(["the cat sat on the mat with the hat " * 20], "gpt2").counts
    reports: list[tuple[int, int, str]] = []
    calls = 0

    def stop() -> bool:
        nonlocal calls
        calls += 1
        return calls > 5

    result = train_counts(counts, "bytes", 50, progress=lambda *a: reports.append(a), should_stop=stop)
    assert result.stopped == "cancelled"
    assert len(result.pairs) == 5
    full = train_counts(counts, "bytes", 50)
    assert result.pairs == full.pairs[:5] and result.merges == full.merges[:5]
    assert [done for done, _, _ in reports] == [1, 2, 3, 4, 5]
    assert all(total == 50 for _, total, _ in reports)


def test_progress_and_cancel_while_counting() -> None:
    seen: list[int] = []
    doc = ("word " * 1000).encode()
    count_streams([("a", io.BytesIO(doc))], "none", block_bytes=1000, total_bytes=len(doc),
                  progress=lambda done, total, msg: seen.append(done))
    assert seen == list(range(1000, len(doc) + 1, 1000)) + [len(doc)]
    with pytest.raises(TrainingCancelled):
        count_streams([("a", io.BytesIO(doc))], "none", block_bytes=1000, should_stop=lambda: len(seen) > 2,
                      progress=lambda done, total, msg: seen.append(done))


def test_invalid_utf8_names_the_file_and_offset_across_blocks() -> None:
    data = "héllo wörld ".encode() * 3 + b"\xe2\x82" + b"x"
    for block in (1, 2, 5, 100):
        with pytest.raises(TokenizerError) as err:
            count_streams([("ok.txt", io.BytesIO(b"fine")), ("bad.txt", io.BytesIO(data))], "gpt2", block_bytes=block)
        assert err.value.location == {"file": "bad.txt", "offset": len(data) - 3}
        assert "bad.txt is not UTF-8" in err.value.message


def test_distinct_pieces_are_capped_with_a_message() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    assert len(count_text([text], "none", max_distinct=100).counts) == 100
    with pytest.raises(TokenizerError, match="more than 99 distinct pre-tokens") as err:
        count_text([text], "none", max_distinct=99)
    assert err.value.field == "corpus"


def test_a_stretch_with_no_safe_cut_is_refused_with_a_message() -> None:
    ok = "x" * 50 + " " + "y" * 50
    assert count_streams(_streams([ok]), "gpt2", block_bytes=8, max_run_chars=60).pretokens == 2
    with pytest.raises(TokenizerError, match="more than 40 characters from byte offset 0"):
        count_streams(_streams(["...." * 20]), "gpt2", block_bytes=8, max_run_chars=40)


def test_unknown_scheme_and_level_are_errors() -> None:
    with pytest.raises(TokenizerError, match="pretokenize: expected one of"):
        count_text(["x"], "gpt9")
    with pytest.raises(TokenizerError, match="level: expected one of chars, bytes"):
        train_counts({"ab": 1}, "words", 1)
    with pytest.raises(TokenizerError, match="lone surrogate"):
        train_counts({"a\ud800": 1}, "bytes", 1)


@settings(max_examples=examples(100), deadline=None)
@given(docs=st.lists(st.text(alphabet="aab é日 \n", max_size=600), min_size=1, max_size=2),
       num_merges=st.integers(0, 30), level=st.sampled_from(["chars", "bytes"]))
def test_symbols_and_tokens_are_what_the_literal_run_leaves(docs: list[str], num_merges: int, level: str) -> None:
    # Long runs of one letter reach the long-word path (512 symbols and more) too.
    counts = count_text([d * 2 for d in docs], "none").counts
    result = train_counts(counts, level, num_merges)
    if level == "bytes":
        pieces = [piece.encode("utf-8") for piece, n in counts.items() for _ in range(n)]
        _, final = literal_byte_train(pieces, num_merges)
    else:
        pieces = [piece for piece, n in counts.items() for _ in range(n)]
        final = [list(p) for p in pieces]
        for (a, b), _ in literal_train(pieces, num_merges):
            final = [merge_word(symbols, (a, b)) for symbols in final]
    assert result.symbols == sum(map(len, pieces))
    assert result.tokens == sum(map(len, final))


@pytest.mark.parametrize("level", ["chars", "bytes"])
def test_long_pieces_count_their_tokens(level: str) -> None:
    counts = {"ab" * 400 + "é" * 300: 2, "ba" * 300: 1, "x": 5}
    result = train_counts(counts, level, 12)
    pieces = [p for p, n in counts.items() for _ in range(n)]
    if level == "bytes":
        expected, final = literal_byte_train([p.encode() for p in pieces], 12)
        assert list(zip(result.pairs, result.counts)) == expected
    else:
        final = [list(p) for p in pieces]
        for pair, _ in literal_train(pieces, 12):
            final = [merge_word(symbols, pair) for symbols in final]
    assert result.tokens == sum(map(len, final))
