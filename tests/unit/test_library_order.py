"""The library-order engine (core/library_order.py) against its literal statement and the library itself.

`reference.library_order_merge` is the order written literally (lowest rank
present fires, leftmost among equals, one occurrence at a time). The engine
must equal it on any rule list: out-of-order rules, rules listed twice,
rules whose new id equals an operand, long words (the heap path) and short
ones (the scan). Then small files built from such lists must give the ids
`tokenizers` gives.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from webapp.tokenizer import reference
from webapp.tokenizer.core.library_order import SHORT_WORD, LibraryMerges
from webapp.tokenizer.hf.model import LibraryModel, model_piece, model_pieces, read_model_options

ids = st.integers(min_value=0, max_value=7)
rule_lists = st.lists(st.tuples(ids, ids, st.integers(min_value=0, max_value=12)), max_size=25)
words = st.lists(ids, max_size=3 * SHORT_WORD)


@settings(max_examples=400, deadline=None)
@given(rule_lists, words)
def test_engine_equals_the_literal_order(rules, word):
    merges = LibraryMerges(rules)
    expected = reference.library_order_merge(word, rules)
    assert merges.merge(word) == expected
    firings: list[tuple[int, int, int]] = []
    assert merges.merge(word, firings) == expected  # the heap path, whatever the length
    assert len(firings) == len(word) - len(expected)
    assert [r for r, _, _ in firings] == _fired_ranks(word, rules)


def _fired_ranks(word, rules):
    """The literal order once more, recording the rank of each merge."""
    rank = {(a, b): i for i, (a, b, _) in enumerate(rules)}
    seq, out = list(word), []
    while True:
        present = [(rank[p], i) for i, p in enumerate(zip(seq, seq[1:])) if p in rank]
        if not present:
            return out
        best, i = min(present)
        out.append(best)
        seq[i : i + 2] = [rules[best][2]]


def test_worked_examples():
    # rule 0 needs "bb", made only by rule 1: the seed order never fires it, the library's does
    rules = [(10, 10, 11), (1, 1, 10)]
    assert LibraryMerges(rules).merge([1, 1, 1, 1]) == [11]
    assert reference.encode(bytes([1, 1, 1, 1]).decode(), [[10, 10, 11], [1, 1, 10]]) == [10, 10]
    # a pair listed twice: the last listing's rank and new id
    assert LibraryMerges([(1, 2, 5), (3, 3, 6), (1, 2, 7)]).merge([3, 3, 1, 2]) == [6, 7]
    # one occurrence at a time: a lower rule made meanwhile fires before the next occurrence
    rules = [(4, 1, 5), (1, 2, 4)]  # (ab, a) before (a, b)
    assert LibraryMerges(rules).merge([1, 2, 1, 2]) == [5, 2]


# --- small files against the library ------------------------------------------------------

LETTERS = "abcd"


def _file(rules: list[tuple[str, str]]) -> str:
    vocab: dict[str, int] = {}
    for ch in LETTERS:
        vocab.setdefault(ch, len(vocab))
    kept = []
    for a, b in rules:
        if a in vocab and b in vocab:
            vocab.setdefault(a + b, len(vocab))
            kept.append([a, b])
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": kept},
    }
    return json.dumps(doc)


tokens = st.text(alphabet=LETTERS, min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(tokens, tokens), max_size=20), st.text(alphabet=LETTERS, max_size=40))
def test_small_files_follow_the_library(rules, text):
    content = _file(rules)
    doc = json.loads(content)
    library = Tokenizer.from_str(content)
    vocab = doc["model"]["vocab"]
    merges = LibraryMerges([(vocab[a], vocab[b], vocab[a + b]) for a, b in doc["model"]["merges"]])
    expected = library.encode(text, add_special_tokens=False).ids if text else []
    assert merges.merge([vocab[ch] for ch in text]) == expected


@pytest.mark.parametrize("size", [2, SHORT_WORD, SHORT_WORD + 1, 500])
def test_runs_of_one_symbol(size):
    rules = [(0, 0, 1), (1, 1, 2), (2, 2, 3)]
    expected = reference.library_order_merge([0] * size, rules)
    assert LibraryMerges(rules).merge([0] * size) == expected


@settings(max_examples=300, deadline=None)
@given(rule_lists, st.lists(st.integers(min_value=0, max_value=40), max_size=SHORT_WORD))
def test_symbols_no_rule_knows(rules, word):
    """Ids above every rule's ids (a character no rule uses, an unknown token) take the checked scan."""
    assert LibraryMerges(rules).merge(word) == reference.library_order_merge(word, rules)


# --- the model: whole tokens and pieces in a row ---------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(tokens, tokens), max_size=20), st.lists(st.text(alphabet=LETTERS + "e", max_size=12),
                                                                  max_size=12))
def test_whole_tokens_are_what_the_model_gives(rules, pieces):
    """`find_whole` marks exactly the tokens whose own text encodes to them; the table changes no answer."""
    doc = json.loads(_file(rules))
    vocab = doc["model"]["vocab"]
    options, _ = read_model_options(doc["model"])
    rule_ids = [(vocab[a], vocab[b], vocab[a + b]) for a, b in doc["model"]["merges"]]
    plain = LibraryModel(vocab, rule_ids, options, None)
    fast = LibraryModel(vocab, rule_ids, options, None)
    fast.whole = fast.find_whole()
    for token, token_id in vocab.items():
        assert fast.whole[token_id] == (plain.tokenize(token) == (token_id,))
    expected = [i for piece in pieces for i in plain.tokenize(piece)]
    assert fast.encode_pieces(list(pieces)) == expected
    assert fast.encode_pieces(list(pieces)) == expected  # (now from the cache)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=6), max_size=8), st.booleans(), st.booleans())
def test_model_pieces_spell_each_piece(pieces, byte_level, spelt):
    assert model_pieces(pieces, byte_level, spelt) == [model_piece(p, byte_level, spelt) for p in pieces]
