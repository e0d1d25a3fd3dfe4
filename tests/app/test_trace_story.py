"""The Trace's boundary story is true: every step it shows, checked in a literal replay of the encode.

The Bytes page with `view=trace&story=<n>` shows boundary n's story (webapp.web.explain.story). Here
the piece around the boundary is replayed again, literally, from the tokenizer's own rule list
(list order: one visit per rule, left to right; library order: the lowest rank present fires, the
leftmost among equals), every snapshot kept: typed merges (odd ones too), cl100k_base, r50k_base,
llama3, and the SentencePiece presets mistral_v1 / mistral_v3 over their characters. For each pair that stood across the boundary between
two snapshots, the story must show exactly that pair, in that order: the rule that made one of its
tokens (none from the start), the rule that took one of them and which one (none at the end), the
pair's own rule; and every link to a Trace row must land on the row where that very rule fired
(list order: the pass of that rule; library order: that firing of that piece). The rendered page
is checked too: a plain GET with the boundary in the URL shows the story (no JavaScript).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.literal_replay import literal_library, literal_list
from webapp.tokenizer import get_tokenizer, is_installed, split_text
from webapp.opened import active as act
from webapp.web.playground.compute import compute_bytes
from webapp.web.playground.fields import normalize_state

Token = tuple[int, int, int]  # (id, start, end) in the piece's bytes

LOWEST = "108 111 256\n119 101 257\n257 115 258\n258 116 259\n256 119 260"
# odd ones: a rule naming an id made later (rule 1 uses 257), a pair listed twice, an overlap (aaa)
ODD = "257 97 300\n97 97 256\n98 99 257\n97 97 258\n256 98 259\n259 99 260\n98 98 261"


def first_ranks(rules: list[tuple[Any, Any, Any]]) -> dict[tuple[Any, Any], int]:
    """pair -> the first rule that joins it (a pair listed twice keeps its first rank)."""
    rank: dict[tuple[Any, Any], int] = {}
    for r, (a, b, _new) in enumerate(rules):
        rank.setdefault((a, b), r)
    return rank


def meetings(snaps: list[list[Token]], offset: int) -> list[tuple[int, int, tuple[Token, Token]]]:
    """(first snapshot, last snapshot, pair) of every pair that stood across `offset`, in order."""
    out: list[tuple[int, int, tuple[Token, Token]]] = []
    for t, tokens in enumerate(snaps):
        pair = next(((a, b) for a, b in zip(tokens, tokens[1:]) if a[2] == offset), None)
        assert pair is not None, "the boundary stands at the end, so at every snapshot"
        if out and out[-1][2] == pair:
            out[-1] = (out[-1][0], t, pair)
        else:
            out.append((t, t, pair))
    return out


def number(label: str | None, order: str) -> int | None:
    """The index or rank a story's rule label names ("(rule 5)" counts from 1, "(rank 4, rule 5)")."""
    if label is None:
        return None
    found = re.search(r"\(rank ([\d,]+)" if order == "library" else r"\(rule ([\d,]+)\)", label)
    assert found, label
    value = int(found.group(1).replace(",", ""))
    return value if order == "library" else value - 1


def page_story(app: Any, state: dict[str, str]) -> tuple[Any, list[Any]]:
    with app.test_request_context():
        full = normalize_state("bytes", {**state, "view": "trace"})
        result = compute_bytes(full, act.resolve("bytes", full))["result"]
    assert result is not None
    return result["story"], result["rows"]


def check_story(app: Any, state: dict[str, str], text: str, index: int, rules: list[tuple[int, int, int]],
                order: str, scheme: str) -> int:
    """Check boundary `index`'s story against the literal replay; returns the steps checked."""
    story, rows = page_story(app, {**state, "story": str(index)})
    assert story.error is None, story.error
    data = text.encode("utf-8")
    at = story.at
    start = 0
    for piece in split_text(text, scheme) if scheme != "none" else [text]:
        size = len(piece.encode("utf-8"))
        if start < at < start + size:
            break
        start += size
    else:
        assert not story.steps, "a boundary between pieces has no meetings"
        return 0
    piece_bytes = data[start:start + size]
    if order == "list":
        snaps, fired = literal_list(piece_bytes, rules), list(range(len(rules)))
    else:
        snaps, fired = literal_library(piece_bytes, rules, first_ranks(rules))
    final = len(snaps) - 1
    expected = meetings(snaps, at - start)
    # list order: a pair made and taken by one rule visit never stood between two visits
    shown = [s for s in story.steps
             if not (s.began and s.ended and number(s.began.text, order) == number(s.ended.text, order)
                     and order == "list")]
    assert len(shown) == len(expected), (story.steps, expected)
    spell = lambda tok: piece_bytes[tok[1]:tok[2]].decode("utf-8", "backslashreplace")  # noqa: E731
    own_rank: dict[tuple[int, int], int] = {}
    for r, (a, b, _n) in enumerate(rules):
        own_rank.setdefault((a, b), r)
    piece_rows = [n for n, row in enumerate(rows) if row.rule_index is not None and row.piece_at == start]
    for step, (first, last, (left, right)) in zip(shown, expected):
        assert (step.left, step.right) == (spell(left), spell(right))
        assert number(step.own.text if step.own else None, order) == own_rank.get((left[0], right[0]))
        if first == 0:
            assert step.began is None
        else:
            made = fired[first - 1]
            assert number(step.began.text, order) == made
            new_sides = [side for side, tok in (("left", left), ("right", right)) if tok not in snaps[first - 1]]
            assert step.made in new_sides  # (one visit may make both: the story names the one made last)
        if last == final:
            assert step.ended is None and step.took is None
        else:
            took_rule = fired[last]
            assert number(step.ended.text, order) == took_rule
            after = snaps[last + 1]
            gone = [side for side, tok in (("left", left), ("right", right)) if tok not in after]
            # both gone in one list-order visit: its left-to-right scan took the left one first
            assert step.took in gone and (len(gone) == 1 or (order == "list" and step.took == "left"))
            assert step.taken == (step.left if step.took == "left" else step.right)
        for link, time in ((step.began, first - 1), (step.ended, last)):
            if link is None:
                continue
            assert link.row is not None, "short texts: every merge of the story has its Trace row"
            row = rows[int(link.row.rsplit("-", 1)[1])]
            assert row.rule_index == fired[time] and row.story_notes
            if order == "list":
                assert row.label.startswith("pass") and row.rule.startswith(f"rule {fired[time] + 1}:")
            else:  # that firing of this very piece
                assert row.piece_at == start and piece_rows.index(rows.index(row)) == time
    return len(shown)


@pytest.mark.parametrize("text, merges, scheme", [
    ("lowest", LOWEST, "none"),
    ("lowest low slowest", LOWEST, "gpt2"),
    ("aaabcaabbc abcaaa", ODD, "none"),
    ("aaaa aaabcc", ODD, "gpt2"),
])
def test_typed_merges_story_is_the_literal_replay(app, text, merges, scheme):
    rules = [tuple(int(x) for x in line.split()) for line in merges.splitlines()]
    state = {"text": text, "merges": merges, "pretokenize": scheme}
    steps = 0
    with app.test_request_context():
        count = len(compute_bytes(normalize_state("bytes", state),
                                  act.resolve("bytes", normalize_state("bytes", state)))["result"]["ids"]) - 1
    for index in range(count):
        steps += check_story(app, state, text, index, rules, "list", scheme)  # type: ignore[arg-type]
    assert steps >= count  # at least one meeting per boundary inside a piece


@pytest.mark.parametrize("name, text", [
    ("cl100k_base", " lowest distinctively unbelievable"),
    ("llama3", " lowest distinctively unbelievable"),
    ("r50k_base", " antidisestablishmentarianism"),
])
def test_preset_story_is_the_literal_replay(app, name, text):
    if not is_installed(name):
        pytest.skip(f"{name} is not installed here")
    tok = get_tokenizer(name)
    loaded = tok.loaded
    order = "library" if loaded.library_order else "list"
    rules = [tuple(r) for r in loaded.merges]
    state = {"text": text, "tokenizer": name}
    count = len(tok.encode(text)) - 1
    checked = sum(check_story(app, state, text, index, rules, order, loaded.pretokenize)  # type: ignore[arg-type]
                  for index in range(count))
    assert checked > count


def test_a_plain_link_shows_the_story_without_javascript(client):
    r = client.get("/bytes", query_string={"text": "lowest", "merges": LOWEST, "view": "trace", "story": "0"})
    page = r.get_data(as_text=True)
    assert r.status_code == 200 and 'id="trace-story"' in page
    assert "The story of boundary 0" in page
    # would_join points at the story's row of the pair it would have joined; the taker at its Trace pass
    assert re.search(r'data-story-rule="would">Would have joined them: <a href="#story-meeting-2">', page)
    assert re.search(r'data-story-rule="taker">Took a side first: <a href="#trace-row-2">', page)
    assert re.search(r'<tr id="trace-row-2" tabindex="-1" class="story-step">\s*<th scope="row">pass 2</th>', page)
    assert 'name="story" id="story-field" value="0"' in page


def test_bad_story_values_are_told_inline_and_nothing_is_lost(client):
    for value, words in (("7", "boundary 7 does not exist"), ("x", "story: expected the index"),
                         ("\u00b2", "story: expected the index"), ("9" * 5000, "at most 12 digits")):
        r = client.get("/bytes", query_string={"text": "lowest", "merges": LOWEST, "view": "trace", "story": value})
        page = r.get_data(as_text=True)
        assert r.status_code == 200 and 'id="story-error"' in page and words in page
        assert "\nlowest</textarea>" in page  # the text as typed


def test_a_preset_story_links_to_vocabulary_cards(client):
    if not is_installed("cl100k_base"):
        pytest.skip("cl100k_base is not installed here")
    r = client.get("/bytes", query_string={"text": " distinctively", "tokenizer": "cl100k_base", "view": "trace", "story": "0"})
    page = r.get_data(as_text=True)
    assert re.search(r'href="/vocab\?tokenizer=cl100k_base&amp;token=\d+#card" class="story-card"', page)


@pytest.mark.parametrize("name", ["mistral_v1", "mistral_v3"])
def test_sentencepiece_story_is_the_literal_replay(app, name):
    """mistral_v1 / mistral_v3 (SentencePiece, the library's order over characters, one piece: no
    pre-tokenizer): the text the model sees (spaces as ▁, a ▁ in front) replayed over its characters
    with the file's own string rules; each story step and each linked Trace row checked."""
    if not is_installed(name):
        pytest.skip(f"{name} is not installed here")
    tok = get_tokenizer(name)
    loaded = tok.loaded
    assert loaded.library_order and loaded.level == "chars"
    text = " lowest distinctively unbelievable"
    seen = "\u2581" + text.replace(" ", "\u2581")  # the model's text: add_dummy_prefix, spaces as ▁
    rules = [(a, b, a + b) for a, b in loaded.merges]
    snaps, fired = literal_library(list(seen), rules, first_ranks(rules))
    final = len(snaps) - 1
    count = len(tok.encode(text)) - 1
    assert [seen[s:e] for _t, s, e in snaps[-1]] == [loaded_names(loaded)[i] for i in tok.encode(text)]
    own_rank: dict[tuple[str, str], int] = {}
    for r, (a, b, _n) in enumerate(rules):
        own_rank.setdefault((a, b), r)
    checked = 0
    for index in range(count):
        story, rows = page_story(app, {"text": text, "tokenizer": name, "story": str(index)})
        assert story.error is None, story.error
        at = len(seen.encode("utf-8")[:story.at].decode("utf-8"))  # bytes of the model text -> characters
        expected = meetings(snaps, at)
        assert len(story.steps) == len(expected)
        piece_rows = [n for n, row in enumerate(rows) if row.rule_index is not None and row.piece_at == 0]
        for step, (first, last, (left, right)) in zip(story.steps, expected):
            assert (step.left, step.right) == (seen[left[1]:left[2]], seen[right[1]:right[2]])
            assert number(step.own.text if step.own else None, "library") == own_rank.get((left[0], right[0]))
            assert (step.began is None) == (first == 0)
            if step.began is not None:
                assert number(step.began.text, "library") == fired[first - 1]
            assert (step.ended is None) == (last == final)
            if step.ended is not None:
                assert number(step.ended.text, "library") == fired[last]
                gone = [side for side, t in (("left", left), ("right", right)) if t not in snaps[last + 1]]
                assert gone == [step.took]
            for link, time in ((step.began, first - 1), (step.ended, last)):
                if link is not None:
                    assert link.row is not None
                    row = rows[int(link.row.rsplit("-", 1)[1])]
                    assert row.rule_index == fired[time] and piece_rows.index(rows.index(row)) == time
            checked += 1
    assert checked > count


def loaded_names(loaded: Any) -> dict[int, str]:
    return {i: t for t, i in loaded.vocab.items()}
