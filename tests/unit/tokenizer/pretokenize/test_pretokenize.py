"""Optional pre-tokenization: the regex splits, per-piece encoding, and the combined trace.

The splits are checked against the libraries' own regex engines (the
`tokenizers` ByteLevel pre-tokenizer for GPT-2's pattern, a `tokenizers`
Split with the cl100k pattern), per-piece encoding against a direct oracle
(encode every pre-token on its own and concatenate), and the fast trace against
the slow one built from the engine's public `encode_trace` per pre-token.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tokenizers import Regex, pre_tokenizers

from tests import reference_pretokenize
from webapp.tokenizer import reference
from webapp.tokenizer import TokenizerError, TraceLimits, compile_byte_merges, encode, encode_trace
from webapp.tokenizer.pretokenize import patterns
from webapp.tokenizer.pretokenize import pretokenized as pt

TEXTS = [
    "Hello world, the other hello there!! 123456 don't\n\n  x",
    "I'M HERE, they'll say: we've 1234567 ideas...\r\n\r\n  \tend   ",
    "Zürich und 東京、Русский текст 🙂🙂 ok",
    "",
    " ",
    "   leading and trailing   ",
]
MERGES = [
    [104, 101, 256],  # he
    [256, 108, 257],  # hel
    [32, 119, 258],  # " w"
    [111, 114, 259],  # or
    [257, 108, 260],  # hell
    [32, 116, 261],  # " t"
    [261, 104, 262],  # " th"
    [32, 32, 263],  # two spaces
    [49, 50, 264],  # 12
    [260, 111, 265],  # hello
]


@pytest.mark.parametrize("text", TEXTS)
def test_gpt2_split_matches_the_tokenizers_byte_level_regex(text):
    library = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    expected = [pretoken for pretoken, _ in library.pre_tokenize_str(text)]
    ours = [
        _to_alphabet(p) for p in pt.split_text(text, "gpt2")
    ]
    assert ours == expected


def _to_alphabet(pretoken: str) -> str:
    from webapp.tokenizer.formats import bytes_to_token

    return bytes_to_token(pretoken.encode("utf-8"))


@pytest.mark.parametrize("text", TEXTS)
def test_cl100k_split_matches_a_tokenizers_split(text):
    library = pre_tokenizers.Split(Regex(patterns.CL100K_PATTERN), behavior="isolated")
    assert pt.split_text(text, "cl100k") == [pretoken for pretoken, _ in library.pre_tokenize_str(text)]


@pytest.mark.parametrize("scheme", patterns.SCHEMES)
@pytest.mark.parametrize("text", TEXTS)
def test_pretokens_cover_the_text_in_byte_offsets(scheme, text):
    spans = pt.split_pretokens(text, scheme)
    data = text.encode("utf-8")
    assert b"".join(data[s:e] for s, e in spans) == data
    assert all(s < e for s, e in spans)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert [data[s:e].decode("utf-8") for s, e in spans] == pt.split_text(text, scheme)


@pytest.mark.parametrize("scheme", ["gpt2", "cl100k"])
@pytest.mark.parametrize("text", TEXTS)
def test_each_pretoken_is_encoded_on_its_own(scheme, text):
    expected = [i for pretoken in pt.split_text(text, scheme) for i in encode(pretoken, MERGES)]
    assert pt.pretokenized_encode(text, MERGES, scheme) == expected


PIECE_ALPHABET = "ab 1'é日\n"
PIECE_IDS = sorted(set(PIECE_ALPHABET.encode())) + [256, 257, 258, 259]


@settings(max_examples=examples(200), deadline=None)
@given(
    text=st.text(PIECE_ALPHABET, max_size=80),
    scheme=st.sampled_from(["gpt2", "cl100k"]),
    merges=st.one_of(
        # odd lists: forward references, repeats, new below 256 or equal to an operand
        st.lists(st.lists(st.sampled_from(PIECE_IDS), min_size=3, max_size=3), max_size=20),
        # well-formed lists (the engine's batched path): operands exist before their rule
        st.integers(0, 20).flatmap(lambda n: st.tuples(*[
            st.tuples(st.sampled_from(PIECE_IDS[:-4] + list(range(256, 256 + i))),
                      st.sampled_from(PIECE_IDS[:-4] + list(range(256, 256 + i))))
            for i in range(n)
        ]).map(lambda pairs: [[a, b, 256 + i] for i, (a, b) in enumerate(pairs)])),
    ),
)
def test_pretokens_match_the_literal_algorithm_pretoken_by_pretoken(text, scheme, merges):
    # The text twice: the second call meets pre-tokens the first one cached.
    for sample in (text, text + " " + text):
        expected = [i for pretoken in pt.split_text(sample, scheme) for i in reference.encode(pretoken, merges)]
        assert pt.pretokenized_encode(sample, merges, scheme) == expected


@pytest.mark.parametrize("text", TEXTS)
def test_none_is_the_specified_algorithm(text):
    assert pt.pretokenized_encode(text, MERGES, "none") == encode(text, MERGES)
    trace = pt.pretokenized_encode_trace(text, MERGES, "none")
    assert trace == encode_trace(text, MERGES)
    assert trace.pretokens == []


def test_pre_tokenization_stops_merges_across_pretokens():
    # "  " (two spaces) merges with scheme none, but GPT-2 puts a space before a word
    text = "a  b"
    assert pt.pretokenized_encode(text, MERGES, "none") == [97, 263, 98]
    assert pt.split_text(text, "gpt2") == ["a", " ", " b"]
    assert pt.pretokenized_encode(text, MERGES, "gpt2") == [97, 32, 32, 98]


@pytest.mark.parametrize("scheme", patterns.SCHEMES)
@pytest.mark.parametrize("text", TEXTS)
def test_fast_trace_equals_the_per_pretoken_trace(scheme, text):
    compiled = compile_byte_merges(MERGES)
    fast = pt.pretokenized_encode_trace(text, MERGES, scheme)
    slow = reference_pretokenize.trace_by_pretokens(text, compiled, scheme, max_steps=200, max_tokens=3000, max_sequence=2000)
    assert reference_pretokenize.without_changes(fast) == reference_pretokenize.without_changes(slow)


@settings(max_examples=examples(60), deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("hel o wrt12 \n'sÜ東")), max_size=40),
    scheme=st.sampled_from(patterns.SCHEMES),
    caps=st.tuples(st.integers(0, 6), st.integers(0, 8), st.integers(0, 30)),
)
def test_fast_trace_equals_the_per_pretoken_trace_property(text, scheme, caps):
    max_steps, max_tokens, max_sequence = caps
    compiled = compile_byte_merges(MERGES)
    fast = pt.pretokenized_encode_trace(
        text, MERGES, scheme, limits=TraceLimits(max_steps=max_steps, max_tokens=max_tokens, max_sequence=max_sequence)
    )
    slow = reference_pretokenize.trace_by_pretokens(
        text, compiled, scheme, max_steps=max_steps, max_tokens=max_tokens, max_sequence=max_sequence
    )
    assert fast.ids == slow.ids == pt.pretokenized_encode(text, MERGES, scheme)
    assert fast.tokens == slow.tokens
    assert [(s.rule, s.matches) for s in fast.steps] == [(s.rule, s.matches) for s in slow.steps]
    assert (fast.rules_fired, fast.rules_idle, fast.pretokens) == (slow.rules_fired, slow.rules_idle, slow.pretokens)
    assert fast.tokens_truncated == slow.tokens_truncated and fast.steps_truncated == slow.steps_truncated


def test_trace_tokens_stay_inside_their_pretokens():
    text = "hello there, hello world 12 12"
    trace = pt.pretokenized_encode_trace(text, MERGES, "gpt2")
    assert trace.pretokens == pt.split_pretokens(text, "gpt2")
    for token in trace.tokens:
        assert any(s <= token.start and token.end <= e for s, e in trace.pretokens)
    assert [t.id for t in trace.tokens] == trace.ids
    assert trace.steps and trace.steps[-1].sequence == tuple(trace.ids)
    hello = [s for s in trace.steps if s.rule == 9]
    assert hello and hello[0].matches == 2


def test_relabel_shows_other_ids_everywhere():
    relabel = {104: 0, 265: 7}
    trace = pt.pretokenized_encode_trace("hello h", MERGES, "gpt2", relabel=relabel)
    assert trace.ids == [7, 32, 0]
    assert [t.id for t in trace.tokens] == [7, 32, 0]
    assert trace.initial is not None and trace.initial[0] == 0
    assert trace.tokens[0].tree is not None and trace.tokens[0].tree.symbol == 7
    assert all(104 not in (s.sequence or ()) for s in trace.steps)


def test_unknown_scheme_is_refused():
    with pytest.raises(TokenizerError) as info:
        pt.pretokenized_encode("x", MERGES, "llama")
    assert info.value.field == "pretokenize"
    assert info.value.message == "pretokenize: expected one of none, gpt2, cl100k, o200k, got 'llama'"


def test_lone_surrogate_is_refused():
    with pytest.raises(TokenizerError) as info:
        pt.pretokenized_encode("ab\ud800", MERGES, "gpt2")
    assert info.value.field == "text"


def test_scheme_for_pattern_knows_published_variants():
    assert patterns.scheme_for_pattern(patterns.GPT2_PATTERN) == "gpt2"
    assert patterns.scheme_for_pattern(patterns.CL100K_PATTERN) == "cl100k"
    tiktoken_r50k = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
    tiktoken_cl100k = (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    )
    assert patterns.scheme_for_pattern(tiktoken_r50k) == "gpt2"
    assert patterns.scheme_for_pattern(tiktoken_cl100k) == "cl100k"
    assert patterns.scheme_for_pattern(r"\w+|\s+") is None
