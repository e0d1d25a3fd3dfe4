"""The vocabulary index and the statistics, against oracles of their own (the unreachable tokens:
tests/unit/tokenizer/vocab/test_reachability.py).

- `made_from` of a rank file against rank-order BPE of the token's bytes with lower ranks
  only (written here, in the way tiktoken's educational module describes);
- search, used_by, trees and scripts against direct scans.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

import pytest
import regex

from webapp.tokenizer import LoadedTokenizer, VocabIndex, load_preset, is_installed
from webapp.tokenizer.presets.catalog import load_compiled
from webapp.tokenizer.vocab.stats import length_histogram, script_counts


def need(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")


@lru_cache(maxsize=4)
def preset(name: str) -> tuple[LoadedTokenizer, Any, VocabIndex]:
    tok = load_preset(name)
    compiled = load_compiled(name)
    index = VocabIndex.build(tok, tok.unit.page_bytes(tok) if tok.library_order else None)
    return tok, compiled, index


# (which tokens some text gives, and the proofs for the others: tests/unit/tokenizer/vocab/test_reachability.py)


def test_a_rule_making_a_byte_or_looping_gives_no_parents() -> None:
    tok = LoadedTokenizer(level="bytes", merges=((97, 97, 97), (97, 98, 256), (256, 256, 256)),
                          vocab={256: b"ab"}, source="playground")
    index = VocabIndex.build(tok)
    assert index.made_from(97) is None
    assert index.made_from(256) == (97, 98)  # the first rule; the loop (256 + 256 -> 256) is not its rule
    assert index.tree(256) == {"id": 256, "children": [{"id": 97, "children": []}, {"id": 98, "children": []}]}


# --- made_from, used_by, trees, search --------------------------------------------------------


def lower_rank_split(token: bytes, ranks: dict[bytes, int]) -> list[bytes]:
    """Rank-order BPE of `token`'s bytes using only ranks below the token's own."""
    limit = ranks[token]
    parts = [bytes([b]) for b in token]
    while True:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < limit and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return parts
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def test_made_from_is_the_lower_rank_split_of_a_rank_file() -> None:
    need("cl100k_base")
    from webapp.tokenizer.presets.openai import load_ranks
    ranks = dict(load_ranks("cl100k_base"))
    _, _, index = preset("cl100k_base")
    for token in random.Random(29).sample(sorted(ranks), 1500):
        rank = ranks[token]
        if len(token) == 1:
            assert index.made_from(rank) is None and index.rank(rank) is None
            continue
        left, right = lower_rank_split(token, ranks)
        assert index.made_from(rank) == (ranks[left], ranks[right])
        assert index.rank(rank) == rank - 256  # the rule list is in rank order, after the 256 bytes


@pytest.mark.slow
def test_used_by_trees_and_search_against_direct_scans() -> None:
    need("r50k_base")
    tok, _, index = preset("r50k_base")
    for token_id in random.Random(7).sample(list(index.ids), 300):
        file_id = tok.id_map.get  # (the rules are in the playground's numbering: bytes 0..255)
        users = [i for i, (a, b, _) in enumerate(tok.merges) if token_id in (file_id(a, a), file_id(b, b))]
        count, first = index.used_by(token_id, some=3)
        assert count == len(users) and [r[0] for r in first] == users[:3]
        # the tree's leaves spell the token, and each inner node is its rule's two parts
        stack, leaves = [index.tree(token_id)], b""
        order = []
        while stack:
            node = stack.pop()
            if node["children"]:
                assert tuple(c["id"] for c in node["children"]) == index.made_from(node["id"])
                assert index.data[node["id"]] == b"".join(index.data[c["id"]] for c in node["children"])
                stack.extend(reversed(node["children"]))
            else:
                order.append(node["id"])
        leaves = b"".join(index.data[i] for i in order)
        assert leaves == index.data[token_id] and all(len(index.data[i]) == 1 for i in order)
    for q in (b" the", b"\xe4", b"ing", b"<|"):
        assert index.search(q) == [i for i in sorted(index.data) if q in index.data[i]]
    assert index.search(None) == sorted(index.data)


# --- statistics -----------------------------------------------------------------------------


def test_lengths_and_scripts_count_what_the_tokens_hold() -> None:
    tok = LoadedTokenizer(level="chars", merges=(("п", "р"), ("a", "b")),
                          vocab={"п": 0, "р": 1, "пр": 2, "a": 3, "b": 4, "ab": 5, "1": 6, "a日": 7, "\u0301": 8},
                          source="playground")
    index = VocabIndex.build(tok)
    assert length_histogram(index) == {1: 3, 2: 4, 4: 2}  # a b 1 | п р ab U+0301 | пр a日
    counts = script_counts(index)
    assert counts == {"Latin": 4, "Cyrillic": 3, "Common": 1, "Han": 1, "Inherited": 1}
    # each character's script is the one \p{Script=...} that matches it
    for ch, name in (("п", "Cyrillic"), ("日", "Han"), ("1", "Common"), ("\u0301", "Inherited")):
        assert regex.fullmatch(r"\p{Script=" + name + "}", ch)


def test_every_character_of_a_vocab_gets_exactly_one_script() -> None:
    need("qwen3")
    from webapp.tokenizer.vocab.stats import script_names, scripts_of_chars
    _, _, index = preset("qwen3")
    chars = "".join(t for t in (index.text(i) for i in index.ids) if t)
    found = scripts_of_chars(chars)
    assert set(found) == set(chars)
    for ch in random.Random(3).sample(sorted(found), 300):
        assert [n for n in script_names() if regex.fullmatch(r"\p{Script=" + n + "}", ch)] == [found[ch]]
