"""Every claim of a boundary explanation, checked in a literal replay (docs/explain.md).

The explainer replays a piece's merges with its own heap (explain/replay.py).
Here the merges are replayed again, literally, from reference.py's statements:
list order one visit per rule (`reference.merge`), library order one firing at
a time (lowest rank present, leftmost among equals). Every snapshot of the
sequence is kept, so the pairs that met at every offset are known
independently, and each claim is checked against them:

- the final ids are the engine's (and the literal algorithm's);
- no_rule: no pair that met at the offset has a rule;
- blocked / overlap: the would-join pair met there, its rule exists with that
  index or rank and is the earliest (lowest) of all the pairs that met there;
  the taking rule fired first, just before it the pair still met there, and it
  consumed the named operand (with its other neighbour); in library order its
  rank is lower (overlap: the same rule, the left operand);
- made_later: the rule's index is at or before the visit that made the named
  side, the pair met only from then on.

Random rule lists with odd rules (operands made later, pairs listed twice,
new ids equal to an operand) in both orders; a second test shows every cause
is reached.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from tests.literal_replay import literal_library, literal_list
from webapp.tokenizer import reference
from webapp.tokenizer.core.list_order.engine import RuleTable
from webapp.tokenizer.core.library_order.merges import LibraryMerges
from webapp.tokenizer.explain.explain import explain_stages, library_model_of, list_model
from webapp.tokenizer.explain.stages import Piece, Stages

Token = tuple[int, int, int]  # (id, start, end) in initial symbol indexes

ids = st.integers(min_value=0, max_value=4)
rule_lists = st.lists(st.tuples(ids, ids, st.integers(min_value=0, max_value=9)), max_size=14)
words = st.lists(ids, min_size=1, max_size=24)


def _stages(word: list[int]) -> Stages:
    text = "".join(chr(0x61 + s) for s in word)
    return Stages(segments=[Piece(0, list(word), [1] * len(word), text, 0, model_text=text)], text=text)


def explain_list(word: list[int], rules: list[tuple[int, int, int]]) -> dict[str, Any]:
    table = RuleTable(rules, 15)
    return explain_stages(_stages(word), list_model(table, rules.__getitem__, lambda i: i), "chars", None)


def explain_library(word: list[int], rules: list[tuple[int, int, int]]) -> dict[str, Any]:
    model = library_model_of(LibraryMerges(rules), rules.__getitem__, frozenset())
    return explain_stages(_stages(word), model, "chars", None)


# --- the literal replays, every snapshot kept ----------------------------------------


def library_ranks(rules: list[tuple[int, int, int]]) -> dict[tuple[int, int], int]:
    return {(a, b): r for r, (a, b, _n) in enumerate(rules)}


def _literal_ids(word: list[int], rules: list[tuple[int, int, int]]) -> list[int]:
    sequence = list(word)
    for left, right, new in rules:
        sequence = reference.merge(sequence, left, right, new)
    return sequence


def pair_at(tokens: list[Token], offset: int) -> tuple[Token, Token] | None:
    for a, b in zip(tokens, tokens[1:]):
        if a[2] == offset:
            return a, b
    return None


def met(snaps: list[list[Token]], offset: int) -> list[tuple[int, tuple[int, int]]]:
    """(snapshot index, pair of ids) of every snapshot where a boundary stood at `offset`."""
    out = []
    for t, tokens in enumerate(snaps):
        found = pair_at(tokens, offset)
        if found is not None:
            out.append((t, (found[0][0], found[1][0])))
    return out


def _consumed(before: list[Token], after: list[Token], offset: int, side: str, new: int) -> bool:
    """Was the token on `side` of `offset` merged with its other neighbour into `new`?"""
    old = pair_at(before, offset)
    now = pair_at(after, offset)
    assert old is not None and now is not None  # (the offset stays a boundary)
    if side == "left":
        return now[0][0] == new and now[0][2] == offset and now[0][1] < old[0][1]
    return now[1][0] == new and now[1][1] == offset and now[1][2] > old[1][2]


# --- the checks --------------------------------------------------------------------------


def check_list(word: list[int], rules: list[tuple[int, int, int]]) -> list[str]:
    answer = explain_list(word, rules)
    snaps = literal_list(word, rules)
    assert answer["ids"] == [t[0] for t in snaps[-1]] == _literal_ids(word, rules)
    assert len(answer["boundaries"]) == max(0, len(answer["ids"]) - 1)
    for b in answer["boundaries"]:
        o = b["at"]
        assert answer["tokens"][b["right"]]["start"] == o == answer["tokens"][b["left"]]["end"]
        pairs = met(snaps, o)
        indices = {p: [k for k, r in enumerate(rules) if (r[0], r[1]) == p] for _, p in pairs}
        if b["cause"] == "no_rule":
            assert not any(indices.values())
            continue
        w = b["would_join"]
        k = w["index"]
        assert rules[k] == (w["left"], w["right"], w["new"])
        assert (w["left"], w["right"]) in indices  # the pair met here
        assert k == min(i for found in indices.values() for i in found)  # the earliest rule
        times = [t for t, p in pairs if p == (w["left"], w["right"])]
        if b["cause"] == "made_later":
            m = b["made_by"]["index"]
            assert k <= m and rules[m] == (b["made_by"]["left"], b["made_by"]["right"], b["made_by"]["new"])
            assert min(times) == m + 1  # the pair first met after visit m, which made the side
            side = pair_at(snaps[m + 1], o)
            assert side is not None and side[0 if b["made_by"]["side"] == "left" else 1][0] == rules[m][2]
            continue
        t = b["taken_by"]["index"]
        assert rules[t] == (b["taken_by"]["left"], b["taken_by"]["right"], b["taken_by"]["new"])
        assert pair_at(snaps[t], o) is not None and (pair_at(snaps[t], o)[0][0], pair_at(snaps[t], o)[1][0]) == (
            w["left"], w["right"])  # it met there just before visit t
        assert _consumed(snaps[t], snaps[t + 1], o, b["taken_by"]["took"], rules[t][2])
        if b["cause"] == "overlap":
            assert t == k and b["taken_by"]["took"] == "left"
        else:
            assert b["cause"] == "blocked" and t < k
    return [b["cause"] for b in answer["boundaries"]]


def check_library(word: list[int], rules: list[tuple[int, int, int]]) -> list[str]:
    answer = explain_library(word, rules)
    snaps, fired = literal_library(word, rules, library_ranks(rules))
    assert answer["ids"] == [t[0] for t in snaps[-1]] == reference.library_order_merge(word, rules)
    rank = library_ranks(rules)
    for b in answer["boundaries"]:
        o = b["at"]
        pairs = met(snaps, o)
        ranks = [rank[p] for _, p in pairs if p in rank]
        if b["cause"] == "no_rule":
            assert not ranks
            continue
        assert b["cause"] in ("blocked", "overlap")
        w, taken = b["would_join"], b["taken_by"]
        assert rank.get((w["left"], w["right"])) == w["rank"] == min(ranks)  # the lowest-ranked pair that met here
        assert rules[w["rank"]] == (w["left"], w["right"], w["new"])
        s = taken["step"]
        before = pair_at(snaps[s], o)
        assert before is not None and (before[0][0], before[1][0]) == (w["left"], w["right"])
        assert fired[s] == taken["rank"] and rules[taken["rank"]] == (taken["left"], taken["right"], taken["new"])
        assert _consumed(snaps[s], snaps[s + 1], o, taken["took"], taken["new"])
        if b["cause"] == "overlap":
            assert taken["rank"] == w["rank"] and taken["took"] == "left"
        else:
            assert taken["rank"] < w["rank"]
    return [b["cause"] for b in answer["boundaries"]]


@settings(max_examples=examples(400), deadline=None)
@given(rule_lists, words)
def test_list_order_claims_hold_in_a_literal_replay(rules, word):
    check_list(word, rules)


@settings(max_examples=examples(400), deadline=None)
@given(rule_lists, words)
def test_library_order_claims_hold_in_a_literal_replay(rules, word):
    check_library(word, rules)


def test_every_cause_is_reached_in_both_orders():
    rng = random.Random(29)
    seen_list: set[str] = set()
    seen_library: set[str] = set()
    for _ in range(600):
        rules = [(rng.randrange(5), rng.randrange(5), rng.randrange(10)) for _ in range(rng.randrange(1, 12))]
        word = [rng.randrange(5) for _ in range(rng.randrange(2, 20))]
        seen_list.update(check_list(word, rules))
        seen_library.update(check_library(word, rules))
    assert seen_list == {"no_rule", "blocked", "overlap", "made_later"}
    assert seen_library == {"no_rule", "blocked", "overlap"}


def test_the_issue_examples():
    aaa = [0, 0, 0]
    assert check_list(aaa, [(0, 0, 5)]) == ["overlap"]
    assert check_library(aaa, [(0, 0, 5)]) == ["overlap"]
    # a rule naming a token only a later rule makes: list order says made_later, library order merges it
    assert check_list([0, 1, 2], [(5, 2, 6), (0, 1, 5)]) == ["made_later"]
    assert explain_library([0, 1, 2], [(5, 2, 6), (0, 1, 5)])["ids"] == [6]
    # w+est took w before lo+w could: blocked, in both orders
    assert check_list([0, 1, 2, 3], [(1, 2, 5), (0, 1, 6)]) == ["blocked", "no_rule"]
