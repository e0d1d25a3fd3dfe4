"""Unreachable tokens, proven: for every token a witness text, a reason no text gives it, or "undecided".

`Decider.decide(id)`, with the same encode as everything else (no special tokens): its own
text encodes to `[id]` (reachable); else the first reason of GROUPS that holds for every text
(forms.py, pieces.py, edges.py, normal.py; docs/explain.md#what-is-proven-for-every-text);
else a witness found by trying contexts and checked by encoding it (witness.py); else
undecided. `unreachable` decides a whole vocabulary: `ids` (proven, half characters
included), `groups`, `witnesses`, `partial` (half characters), `undecided`. What it does not
do: decide when this runs as a job, or cache the answer (the web layer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from webapp.tokenizer.core.collector import collector_paused
from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges, implied_byte_vocab
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.tokenizer import tokenizer_of
from webapp.tokenizer.vocab.forms import NEVER_UNKNOWN, NO_PIECE, TAKEN, former, utf8_inside
from webapp.tokenizer.vocab.index import VocabIndex
from webapp.tokenizer.vocab.normal import never_normalized, normal_form
from webapp.tokenizer.vocab.witness import find_witnesses

#: The reasons, in the order they are tried, with what each says (shown on the page and the card).
GROUPS: tuple[tuple[str, str], ...] = (
    ("special", "special or added tokens no rule makes: only an allowed special token gives them, "
                "never ordinary text"),
    ("normalizer", "never in normalized text: the file's NFC or NFKC normalizer always replaces a character "
                   "of theirs, or joins two of them"),
    ("not_utf8", "bytes no UTF-8 text holds: every text is UTF-8, so no piece ever holds them"),
    ("byte_fallback", "byte tokens never fallen back to: every character holding the byte is a vocab token "
                      "(or one the normalizer replaces in every text)"),
    ("unknown", "the unknown token, never used: every character the vocab lacks falls back to its bytes"),
    ("pre_tokenizer", "never inside one piece: no match of the split pattern can hold their text, and merges "
                      "never cross pieces"),
    ("last_byte", "never formed: they end with a character's first byte, and whichever character follows, "
                  "its own rule takes that byte before the token's rule can"),
    ("inside", "never formed: their own symbols, merged alone as one piece, end as other tokens, so no "
               "text gives them (rules take them as an operand, but never fire)"),
    ("unused", "never formed: their own symbols, merged alone as one piece, end as other tokens, so no "
               "text gives them; no rule uses them"),
)
GROUP_NAMES = tuple(name for name, _ in GROUPS)
REACHABLE, UNREACHABLE, UNDECIDED = "reachable", "unreachable", "undecided"

Progress = Callable[[int, int], None]  # (tokens done, tokens in all)


@dataclass(frozen=True)
class Verdict:
    """One token's answer: `status`, with its `group` (unreachable) or `witness` (reachable: a text
    whose encode holds it; its own text when that gives exactly it, `own` True)."""

    status: str
    group: str | None = None
    witness: str | None = None
    own: bool = False


@dataclass(frozen=True)
class Reach:
    """The proven unreachable tokens (`ids`), the partial ones, the groups, the witnesses, the undecided."""

    ids: list[int]
    partial: list[int]
    groups: dict[str, list[int]] = field(default_factory=dict)
    witnesses: dict[int, str] = field(default_factory=dict)
    undecided: list[int] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"count": len(self.ids), "ids": self.ids, "partial": self.partial,
                "groups": {name: self.groups.get(name, []) for name in GROUP_NAMES},
                "witnesses": {str(i): text for i, text in sorted(self.witnesses.items())},
                "undecided": self.undecided}


def encoder(tok: LoadedTokenizer, compiled: Any = None) -> Callable[[str], list[int]]:
    """The whole pipeline's encode with no special tokens (the tiktoken-like handle's `encode`)."""
    stages = tokenizer_of(tok, compiled=compiled)
    nothing: frozenset[str] = frozenset()
    return lambda text: stages.encode(text, nothing)


def self_ids(index: VocabIndex, encode: Callable[[str], list[int]], token_id: int) -> list[int] | None:
    """What the token's own text encodes to (None: its bytes are not UTF-8 alone)."""
    text = index.text(token_id)
    return None if text is None else encode(text)


class Decider:
    """`decide(id)` for one tokenizer (see the module docstring); made once, used for every token."""

    def __init__(self, index: VocabIndex, tok: LoadedTokenizer, compiled: Any = None) -> None:
        self.index = index
        self.encode = encoder(tok, compiled)
        stages = tokenizer_of(tok, compiled=compiled)
        nothing: frozenset[str] = frozenset()
        self.encode_batch: Callable[[list[str]], list[list[int]]] = lambda texts: stages.encode_batch(texts, nothing)
        self.forms, self.hints = former(tok, stages.model, index)
        self.metaspace = stages.writes_metaspace
        form = normal_form(tok.pipeline)
        self.never_normal = never_normalized(form) if form is not None else None

    def reason(self, token_id: int) -> str | None:
        """The first group of GROUPS that holds for the token, None when none is proven."""
        index = self.index
        data = index.data[token_id]
        made = index.rank(token_id) is not None
        if token_id in index.special and not made:
            return "special"
        if self.never_normal is not None and token_id not in index.special and self.never_normal(data):
            return "normalizer"
        can = self.forms(token_id)
        if can == NO_PIECE:
            return "pre_tokenizer"
        if can == TAKEN:
            return "last_byte"
        if can == NEVER_UNKNOWN:
            return "unknown"
        if can is not False:
            return None
        if not utf8_inside(data):
            return "not_utf8"
        if not made and data and len(data) == 1 and index.level == "chars":
            return "byte_fallback"
        return "inside" if index.used_by(token_id, some=0)[0] else "unused"

    def decide(self, token_id: int, own: list[int] | None = None) -> Verdict:
        """The token's verdict; `own`: what its own text encodes to, when the caller has it already."""
        return self.settle(token_id, own) or self.by_witness(self.witnesses([token_id])[token_id])

    def settle(self, token_id: int, own: list[int] | None = None) -> Verdict | None:
        """The verdict its own text or a reason gives, None when only a witness can still decide it."""
        text = self.index.text(token_id)
        if text is not None and (own if own is not None else self.encode(text)) == [token_id]:
            return Verdict(REACHABLE, witness=text, own=True)
        group = self.reason(token_id)
        return Verdict(UNREACHABLE, group=group) if group is not None else None

    def witnesses(self, token_ids: list[int]) -> dict[int, str | None]:
        """Each token's witness (`find_witnesses`: the tokens searched together), None where none is found."""
        data = self.index.data
        return find_witnesses(self.encode_batch, [(t, data[t], self.hints(t)) for t in token_ids], self.metaspace)

    @staticmethod
    def by_witness(witness: str | None) -> Verdict:
        return Verdict(REACHABLE, witness=witness) if witness is not None else Verdict(UNDECIDED)


def typed_reach(compiled: CompiledByteMerges, scheme: str = "none") -> Reach:
    """The answer for typed byte rules (list order, split by a playground scheme or not): made inline."""
    tok = LoadedTokenizer(level="bytes", merges=compiled.rules, vocab=implied_byte_vocab(compiled),
                          pretokenize=scheme, source="playground")
    return unreachable(VocabIndex.build(tok), tok, compiled)


def group_of(index: VocabIndex, tok: LoadedTokenizer, token_id: int) -> str | None:
    """The reason a token is proven unreachable (GROUPS), None when it is not proven so."""
    return Decider(index, tok).decide(token_id).group


def unreachable(index: VocabIndex, tok: LoadedTokenizer, compiled: Any = None,
                progress: Progress | None = None, every: int = 10_000) -> Reach:
    """Every token decided (see the module docstring), with the collector paused (core/collector.py)."""
    with collector_paused():
        return _decide_every_token(index, tok, compiled, progress, every)


def _decide_every_token(index: VocabIndex, tok: LoadedTokenizer, compiled: Any, progress: Progress | None,
                        every: int) -> Reach:
    decider = Decider(index, tok, compiled)
    ids: list[int] = []
    partial: list[int] = []
    undecided: list[int] = []
    witnesses: dict[int, str] = {}
    groups: dict[str, list[int]] = {name: [] for name in GROUP_NAMES}
    total = len(index.ids)
    for start in range(0, total, every):
        if progress is not None:
            progress(start, total)
        chunk = index.ids[start:start + every]
        texts = {t: text for t in chunk if (text := index.text(t)) is not None}
        # (the tokens' own texts in one batch: most tokens are decided by this alone)
        owns = dict(zip(texts, decider.encode_batch(list(texts.values()))))
        settled = {token_id: decider.settle(token_id, owns.get(token_id)) for token_id in chunk}
        # (the tokens left to a witness searched together: one encode per round of their batches)
        found = decider.witnesses([token_id for token_id, verdict in settled.items() if verdict is None])
        for token_id in chunk:
            if token_id not in texts:
                partial.append(token_id)
            verdict = settled[token_id] or decider.by_witness(found[token_id])
            if verdict.status == UNREACHABLE:
                ids.append(token_id)
                groups[verdict.group or "unused"].append(token_id)
            elif verdict.status == UNDECIDED:
                undecided.append(token_id)
            elif not verdict.own and verdict.witness is not None:
                witnesses[token_id] = verdict.witness
    return Reach(ids, partial, groups, witnesses, undecided)
