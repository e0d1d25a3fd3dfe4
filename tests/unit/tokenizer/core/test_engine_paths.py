"""Every path of the byte-level engine against the literal algorithm (webapp.tokenizer.reference).

The engine has several ways to apply the same rules: the list-rebuild loop
for short segments and the bucket queue for long ones (engine.SMALL_SEGMENT),
the numpy batch for well-formed lists, whole-text pair ranks up to
WHOLE_TEXT_RANKS bytes and per segment beyond, segments too long for the cache,
and 64-bit keys or Python ints for huge ids. These strategies are built to
reach each of them: long segments over a small alphabet so pairs repeat, odd
lists (a pair listed twice, an operand that only a later rule makes), and
well-formed lists with segments on both sides of every length bound.
"""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer.core.list_order import byte_level, engine
from webapp.tokenizer import reference
from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges, encode

ALPHABET = (97, 98, 99)  # "abc": few symbols, so long segments repeat their pairs


def _fresh(merges: list[list[int]]) -> byte_level.CompiledByteMerges:
    compiled = compile_byte_merges(merges)
    compiled.segment_cache.clear()  # every example starts with an empty segment cache
    return compiled


@st.composite
def odd_lists(draw: st.DrawFn) -> list[list[int]]:
    """Rules over a, b, c and four made ids, in any order: pairs listed twice, operands made later."""
    made = list(range(256, 260))
    symbols = list(ALPHABET) + made
    count = draw(st.integers(1, 12))
    rules = [[draw(st.sampled_from(symbols)), draw(st.sampled_from(symbols)), draw(st.sampled_from(made))]
             for _ in range(count)]
    # Repeat some pairs further down: a pair whose first rule is behind re-ranks to its later one
    # (random draws alone rarely list a pair twice in an order that fires both).
    for _ in range(draw(st.integers(0, 3))):
        left, right, _new = rules[draw(st.integers(0, len(rules) - 1))]
        rules.insert(draw(st.integers(0, len(rules))), [left, right, draw(st.sampled_from(made))])
    return rules


@st.composite
def well_formed_lists(draw: st.DrawFn) -> list[list[int]]:
    """Rules numbered 256, 257, ... whose operands are bytes of "abc" or earlier rules' ids.

    Half of them start by joining every pair of a, b, c, so that no cut falls
    inside a run of "abc" and long segments stay long.
    """
    rules: list[list[int]] = []
    if draw(st.booleans()):
        rules = [[x, y, 256 + i] for i, (x, y) in enumerate((x, y) for x in ALPHABET for y in ALPHABET)]
    for index in range(len(rules), len(rules) + draw(st.integers(1, 10))):
        known = list(ALPHABET) + [256 + i for i in range(index)]
        rules.append([draw(st.sampled_from(known)), draw(st.sampled_from(known)), 256 + index])
    return rules


# Segments of every length class: single bytes, short (<= SMALL_SEGMENT), long, over the cache's segment bound.
segment_lengths = st.sampled_from([1, 2, 5, engine.SMALL_SEGMENT, engine.SMALL_SEGMENT + 1, 60, 255, 257, 300])


@st.composite
def texts_of_segments(draw: st.DrawFn) -> str:
    """Runs of "abc" of every length class, separated by spaces (no rule touches a space: a cut)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    lengths = draw(st.lists(segment_lengths, min_size=1, max_size=6))
    return " ".join("".join(rng.choice("abc") for _ in range(n)) for n in lengths)


@settings(max_examples=examples(250), deadline=None)
@given(merges=odd_lists(), text=st.text(alphabet="abc", min_size=engine.SMALL_SEGMENT + 1, max_size=150))
def test_odd_lists_on_long_segments(merges, text):
    """The bucket queue with stale ranks: a pair listed twice, re-ranked after a merge."""
    assert encode(text, _fresh(merges)) == reference.encode(text, merges)


@settings(max_examples=examples(250), deadline=None)
@given(merges=odd_lists(), text=st.text(alphabet="abc ", max_size=40))
def test_odd_lists_on_short_segments(merges, text):
    assert encode(text, _fresh(merges)) == reference.encode(text, merges)


@settings(max_examples=examples(200), deadline=None)
@given(merges=well_formed_lists(), text=texts_of_segments())
def test_well_formed_lists_with_segments_of_every_length(merges, text):
    """The batch, and long segments before and after a short miss, cached or too long for the cache."""
    compiled = _fresh(merges)
    expected = reference.encode(text, merges)
    assert encode(text, compiled) == expected
    assert encode(text, compiled) == expected  # again, from the segment cache


@settings(max_examples=examples(100), deadline=None)
@given(merges=odd_lists(), text=texts_of_segments())
def test_odd_lists_with_segments_of_every_length(merges, text):
    compiled = _fresh(merges)
    expected = reference.encode(text, merges)
    assert encode(text, compiled) == expected
    assert encode(text, compiled) == expected


def test_a_text_over_the_whole_text_ranks_bound():
    """Beyond WHOLE_TEXT_RANKS bytes the initial pair ranks are converted per segment."""
    rng = random.Random(5)
    text = "".join(rng.choice("ab  ") for _ in range(byte_level.WHOLE_TEXT_RANKS + 5000))
    merges = [[97, 98, 256], [256, 97, 257], [97, 98, 258], [257, 256, 256], [98, 98, 259]]  # odd: a pair twice
    assert encode(text, _fresh(merges)) == reference.encode(text, merges)


def test_ids_too_large_for_64_bit_pair_keys():
    """Well-formed rules with ids near 2**31: pair keys no longer fit the fast sort, nor int64 in the table."""
    big = 2**31
    merges = [[97, 98, big], [big, 99, big + 1], [big + 1, big + 1, big + 2]]
    for text in ["abc", "abcabc abc", "abcabc" * 20 + " ab", "x" + "abc" * 15]:
        assert encode(text, _fresh(merges)) == reference.encode(text, merges)


def test_a_long_segment_that_misses_after_a_short_one():
    """A short miss sends the rest of the text to the batch; a long segment there goes to the engine."""
    merges = [[x, y, 256 + i] for i, (x, y) in enumerate((x, y) for x in ALPHABET for y in ALPHABET)]
    merges += [[256, 260, 265], [265, 99, 266]]
    for text in ["ab " + "abc" * 20, "ab " + "abc" * 100 + " ca " + "cab" * 15]:
        compiled = _fresh(merges)
        assert encode(text, compiled) == reference.encode(text, merges)
        assert encode(text, compiled) == reference.encode(text, merges)


def _replay(initial: list[int], rules: list[list[int]], events: list[engine.Event]) -> list[tuple[int, int, tuple[int, ...]]]:
    """The engine's merge events applied one by one to `initial`, in reference.steps' form.

    Each event must join two neighbouring operands that hold the rule's pair;
    the events of one rule must come together, rules in list order.
    """
    starts = list(range(len(initial)))  # offsets of the current symbols' first original symbol
    symbols = list(initial)
    out: list[tuple[int, int, tuple[int, ...]]] = []
    for rule, left, right in events:
        i = starts.index(left)
        left_id, right_id, new = rules[rule]
        assert starts[i + 1] == right and (symbols[i], symbols[i + 1]) == (left_id, right_id)
        symbols[i] = new
        del symbols[i + 1], starts[i + 1]
        if out and out[-1][0] == rule:
            out[-1] = (rule, out[-1][1] + 1, tuple(symbols))
        else:
            assert not out or out[-1][0] < rule
            out.append((rule, 1, tuple(symbols)))
    return out


@settings(max_examples=examples(250), deadline=None)
@given(merges=odd_lists(), text=st.one_of(st.text(alphabet="abc", min_size=2, max_size=engine.SMALL_SEGMENT),
                                          st.text(alphabet="abc", min_size=engine.SMALL_SEGMENT + 1, max_size=120)))
def test_merge_events_of_both_loops_replay_to_the_literal_steps(merges, text):
    """Events recorded by the list loop (short) and the bucket queue (long), stale re-ranks included."""
    initial = list(text.encode())
    table = engine.RuleTable([tuple(rule) for rule in merges], 255)
    events: list[engine.Event] = []
    out = table.run(initial, events)
    expected = reference.steps(initial, merges)
    assert _replay(initial, merges, events) == expected
    assert out == list(expected[-1][2] if expected else initial)
