"""What the vocab API answers and the Vocabulary page shows, built from a `VocabIndex`.

- `token_json` / `search_json` / `card_json`: the JSON of the vocab routes (docs/api.md);
- `card_view`, `listing_view`, `reach_view`, `stats_view`: what templates/vocab.html shows,
  every figure taken from the same index and answers as the API's.

What it does not do: parse requests (webapp.infra.inputs), answer HTTP (routes.py) or
compute anything itself beyond arranging the index's answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence
from urllib.parse import urlencode

from webapp.opened.store import Loaded
from webapp.tokenizer import TokenizerError, VocabIndex
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.vocab.reach import GROUPS as VOCAB_GROUPS, Decider, self_ids
from webapp.tokenizer.vocab.stats import length_histogram, script_counts
from webapp.web.common.viewmodels import hex_bytes, hue_class, printable_bytes

#: Rules listed on a card among the token's children (the count is always exact).
CARD_CHILDREN = 20
#: Occurrences of the token in the page's text listed on its card.
CARD_OCCURRENCES = 50
#: Unreachable tokens listed per group on the page (the counts are exact; the API lists all).
PAGE_GROUP_TOKENS = 60


def witness_url(tokenizer_id: str, text: str, token_id: int) -> str:
    """The Bytes page with the witness as its text and the token outlined (`mark`)."""
    return "/bytes?" + urlencode({"tokenizer": tokenizer_id, "text": text, "mark": token_id})


def token_json(index: VocabIndex, token_id: int) -> dict[str, Any]:
    data = index.data[token_id]
    out: dict[str, Any] = {"id": token_id, "text": index.text(token_id), "bytes": list(data),
                           "rank": index.rank(token_id)}
    if token_id in index.special:
        out["special"] = True
    return out


def search_json(index: VocabIndex, q: bytes | None, offset: int, limit: int) -> dict[str, Any]:
    found = index.search(q)
    return {"total": len(found), "offset": offset, "limit": limit, "order": index.order,
            "tokens": [token_json(index, i) for i in found[offset:offset + limit]]}


def _rule_json(index: VocabIndex, rule: tuple[int, int, int, int]) -> dict[str, Any]:
    position, left, right, new = rule
    return {"index": position, "left": left, "right": right, "new": new}


def _tree_json(index: VocabIndex, node: dict[str, Any]) -> dict[str, Any]:
    return {"id": node["id"], "text": index.text(node["id"]),
            "children": [_tree_json(index, child) for child in node["children"]]}


def find_token(index: VocabIndex, raw: str) -> int:
    """A token id from the path or the query (`token_id` in messages), or a 404-worthy TokenizerError."""
    text = raw.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        raise TokenizerError(f"token_id: expected a token id (a whole number), got {raw[:20]!r}", field="token_id")
    token_id = int(text)
    if token_id not in index:
        top = index.ids[-1] if index.ids else 0
        raise TokenizerError(f"token_id: this tokenizer has no token with id {token_id:,} (its ids run from "
                             f"{index.ids[0] if index.ids else 0} to {top:,}, {len(index):,} tokens)",
                             field="token_id", location={"token_id": token_id})
    return token_id


def card_json(entry: Loaded, index: VocabIndex, token_id: int, decider: Decider) -> dict[str, Any]:
    """The card: the token, its rule and uses, what its own text encodes to, and its verdict: `status`
    ("reachable", "unreachable", "undecided"), `witness` (a text whose encode holds it; `own`: its own
    text), `group` and `reason` (why no text gives it)."""
    out = token_json(index, token_id)
    parts = index.made_from(token_id)
    out["made_from"] = [token_json(index, p) for p in parts] if parts is not None else None
    out["tree"] = _tree_json(index, index.tree(token_id))
    count, rules = index.used_by(token_id, CARD_CHILDREN)
    out["used_by"] = {"count": count, "first": _rule_json(index, rules[0]) if rules else None,
                      "rules": [_rule_json(index, r) for r in rules]}
    got = self_ids(index, decider.encode, token_id)
    verdict = decider.decide(token_id)
    out["self_ids"] = got
    out["partial"] = got is None
    out["status"] = verdict.status
    out["reachable"] = verdict.status == "reachable"
    out["witness"] = verdict.witness
    out["own"] = verdict.own
    out["group"] = verdict.group
    out["reason"] = dict(VOCAB_GROUPS).get(verdict.group) if verdict.group else None
    return out


# --- the page ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenChip:
    """A token as the page links it: id, its text shown (whitespace marked), its hue."""

    id: int
    shown: str
    hue: str
    special: bool = False


def chip(index: VocabIndex, token_id: int) -> TokenChip:
    return TokenChip(token_id, printable_bytes(index.data[token_id]) or "(empty)", hue_class(token_id),
                     token_id in index.special)


@dataclass(frozen=True)
class TreeNode:
    token: TokenChip
    children: tuple["TreeNode", ...]


def _tree_view(index: VocabIndex, node: dict[str, Any]) -> TreeNode:
    return TreeNode(chip(index, node["id"]), tuple(_tree_view(index, c) for c in node["children"]))


@dataclass(frozen=True)
class Occurrence:
    index: int  # the token's position among the text's ids
    before: str
    shown: str
    after: str


@dataclass(frozen=True)
class CardView:
    token: TokenChip
    card: dict[str, Any]
    hex: str
    parents: tuple[TokenChip, ...]
    tree: TreeNode
    children: tuple[tuple[int, TokenChip, TokenChip, TokenChip], ...]  # (rule index, left, right, new)
    self_chips: tuple[TokenChip, ...]
    group_label: str | None
    occurrences: tuple[Occurrence, ...] = ()
    occurrence_count: int = 0
    text_ids: int = 0
    witness_url: str | None = None


def card_view(entry: Loaded, index: VocabIndex, token_id: int, text: str, text_ids: Sequence[int] | None,
              decider: Decider) -> CardView:
    card = card_json(entry, index, token_id, decider)
    labels = dict(VOCAB_GROUPS)
    _, rules = index.used_by(token_id, CARD_CHILDREN)
    occurrences: list[Occurrence] = []
    count = 0
    if text_ids is not None:
        spans = _spans(index, text_ids)
        data = b"".join(index.data.get(i, b"") for i in text_ids)
        for position, tid in enumerate(text_ids):
            if tid != token_id:
                continue
            count += 1
            if len(occurrences) < CARD_OCCURRENCES:
                start, end = spans[position]
                occurrences.append(Occurrence(position, printable_bytes(data[max(0, start - 24):start]),
                                              printable_bytes(data[start:end]), printable_bytes(data[end:end + 24])))
    return CardView(
        token=chip(index, token_id),
        card=card,
        hex=hex_bytes(index.data[token_id]),
        parents=tuple(chip(index, p["id"]) for p in card["made_from"] or ()),
        tree=_tree_view(index, index.tree(token_id)),
        children=tuple((r[0], chip(index, r[1]), chip(index, r[2]), chip(index, r[3])) for r in rules),
        self_chips=tuple(chip(index, i) for i in card["self_ids"] or () if i in index),
        group_label=labels.get(card["group"]) if card["group"] else None,
        occurrences=tuple(occurrences),
        occurrence_count=count,
        text_ids=len(text_ids or ()),
        witness_url=witness_url(entry.id, card["witness"], token_id) if card["witness"] is not None else None,
    )


def _spans(index: VocabIndex, ids: Sequence[int]) -> list[tuple[int, int]]:
    """Each id's byte span in the bytes the ids join into (what the card quotes around each use:
    the tokens' own bytes, which a normalizer may make differ from the typed text)."""
    out: list[tuple[int, int]] = []
    at = 0
    for tid in ids:
        size = len(index.data.get(tid, b""))
        out.append((at, at + size))
        at += size
    return out


@dataclass(frozen=True)
class Listing:
    total: int
    offset: int
    limit: int
    tokens: tuple[tuple[TokenChip, int | None, str], ...]  # (chip, rank, hex)

    @property
    def previous(self) -> int | None:
        return max(0, self.offset - self.limit) if self.offset > 0 else None

    @property
    def next(self) -> int | None:
        return self.offset + self.limit if self.offset + self.limit < self.total else None


def listing_view(index: VocabIndex, q: bytes | None, offset: int, limit: int) -> Listing:
    found = index.search(q)
    shown = found[offset:offset + limit]
    return Listing(len(found), offset, limit,
                   tuple((chip(index, i), index.rank(i), hex_bytes(index.data[i])) for i in shown))


@dataclass(frozen=True)
class ReachGroup:
    name: str
    label: str
    count: int
    tokens: tuple[TokenChip, ...]


@dataclass(frozen=True)
class ReachView:
    count: int  # proven unreachable
    partial: int
    groups: tuple[ReachGroup, ...]
    witnessed: int = 0  # reachable only inside other text (a witness)
    witnessed_partial: int = 0  # of them, half-character tokens
    undecided: int = 0
    witness_tokens: tuple[tuple[TokenChip, str, str], ...] = field(default=())  # (chip, witness, its Bytes link)
    undecided_tokens: tuple[TokenChip, ...] = field(default=())


def reach_view(tokenizer_id: str, index: VocabIndex, answer: dict[str, Any]) -> ReachView:
    groups = tuple(
        ReachGroup(name, label, len(answer["groups"][name]),
                   tuple(chip(index, i) for i in answer["groups"][name][:PAGE_GROUP_TOKENS]))
        for name, label in VOCAB_GROUPS if answer["groups"].get(name)
    )
    witnesses = answer.get("witnesses", {})
    partial = set(answer["partial"])
    undecided = answer.get("undecided", [])
    return ReachView(answer["count"], len(answer["partial"]), groups, len(witnesses),
                     sum(1 for i in witnesses if int(i) in partial), len(undecided),
                     tuple((chip(index, int(i)), text, witness_url(tokenizer_id, text, int(i)))
                           for i, text in list(witnesses.items())[:PAGE_GROUP_TOKENS]),
                     tuple(chip(index, i) for i in undecided[:PAGE_GROUP_TOKENS]))


@dataclass(frozen=True)
class Bar:
    label: str
    count: int
    percent: int  # of the largest bar, 1..100 (a width class of vocab.css, no inline style)


@dataclass(frozen=True)
class StatsView:
    lengths: tuple[Bar, ...]
    scripts: tuple[Bar, ...]
    longest: int


def _bars(items: Sequence[tuple[str, int]]) -> tuple[Bar, ...]:
    top = max((c for _, c in items), default=1) or 1
    return tuple(Bar(label, count, max(1, round(100 * count / top))) for label, count in items)


#: Lengths past this many bytes share one bar ("33+"), so the histogram stays a screen high.
HISTOGRAM_LAST = 32


#: The page's statistics per tokenizer, made once per process (16 tokenizers; a few hundred bars each).
STATS: BoundedCache[str, StatsView] = BoundedCache(
    16, 16_000, weigh=lambda _key, value: 1 + len(value.lengths) + len(value.scripts), name="vocab.stats")


def stats_view(key: str, index: VocabIndex) -> StatsView:
    """Token lengths and scripts of the vocabulary, cached by the tokenizer's id."""
    hit = STATS.get(key)
    if hit is None:
        hit = _stats(index)
        STATS.put(key, hit)
    return hit


def _stats(index: VocabIndex) -> StatsView:
    lengths = length_histogram(index)
    rows: list[tuple[str, int]] = [(str(n), c) for n, c in lengths.items() if n <= HISTOGRAM_LAST]
    tail = sum(c for n, c in lengths.items() if n > HISTOGRAM_LAST)
    if tail:
        rows.append((f"{HISTOGRAM_LAST + 1}+", tail))
    return StatsView(_bars(rows), _bars(list(script_counts(index).items())), max(lengths, default=0))
