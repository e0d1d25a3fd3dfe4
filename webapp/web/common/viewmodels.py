"""Traces -> what the templates show.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence
from webapp.tokenizer import EncodeTrace
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.traces import MergeNode


HUE_COUNT = 12
# Marks that make whitespace and control characters visible. The newline mark
# is followed by a real line break in the template so lines still break.
_WS_MARKS = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍", "\u00a0": "⍽"}
_TREE_NODE_CAP = 63  # a tree bigger than this is cut with an ellipsis line


def hue_class(token_id: int | None) -> str:
    """A palette class from the id: the same id gets the same color everywhere.

    Multiplying by 7 (coprime to 12) sends consecutive ids - typical of rules
    added one after another - to hues far apart on the wheel.
    """
    if token_id is None:
        return "hue-none"
    return f"hue-{(token_id * 7) % HUE_COUNT}"


@dataclass(frozen=True)
class Segment:
    """A run of token text: kind is text | ws | nl | ctrl | hex."""

    kind: str
    text: str


def text_segments(text: str) -> list[Segment]:
    """Split a string into plain runs and visible marks for whitespace/control chars."""
    out: list[Segment] = []
    run: list[str] = []
    for ch in text:
        mark = None
        kind = "ws"
        if ch == "\n":
            mark, kind = _WS_MARKS[ch], "nl"
        elif ch in _WS_MARKS:
            mark = _WS_MARKS[ch]
        elif ord(ch) < 0x20:
            mark, kind = chr(0x2400 + ord(ch)), "ctrl"  # Unicode "control pictures"
        elif ch == "\x7f":
            mark, kind = "␡", "ctrl"
        elif ch.isspace():
            mark = "␣"
        if mark is None:
            run.append(ch)
            continue
        if run:
            out.append(Segment("text", "".join(run)))
            run = []
        out.append(Segment(kind, mark))
    if run:
        out.append(Segment("text", "".join(run)))
    return out


def byte_segments(value: bytes) -> tuple[list[Segment], bool]:
    """Segments of a byte token; bytes that are not UTF-8 on their own show as hex.

    Returns the segments and whether the whole token was valid UTF-8.
    """
    out: list[Segment] = []
    rest = value
    valid = True
    while rest:
        try:
            out.extend(text_segments(rest.decode("utf-8")))
            break
        except UnicodeDecodeError as exc:
            valid = False
            if exc.start:
                out.extend(text_segments(rest[: exc.start].decode("utf-8")))
            bad_end = max(exc.end, exc.start + 1)
            out.append(Segment("hex", " ".join(f"{b:02X}" for b in rest[exc.start : bad_end])))
            rest = rest[bad_end:]
    return out, valid


# Cached: real text repeats the same tokens (and tree nodes) over and over. Each cache
# holds 65,536 entries and 4 Mi characters / bytes of keys at most (a token may be
# 64 KiB long: an entry count alone would not bound the memory).
PRINTABLE_TEXT: BoundedCache[str, str] = BoundedCache(65536, 4 * 2**20, name="viewmodels.printable")
PRINTABLE_BYTES: BoundedCache[bytes, str] = BoundedCache(65536, 4 * 2**20, name="viewmodels.printable_bytes")


def printable(text: str) -> str:
    """One-line plain form of token text for details and trees (marks for whitespace)."""
    shown = PRINTABLE_TEXT.get(text)
    if shown is None:
        shown = "".join(seg.text for seg in text_segments(text))
        PRINTABLE_TEXT.put(text, shown)
    return shown


def printable_bytes(value: bytes) -> str:
    """The same for a token's bytes: bytes that are not UTF-8 show as <hex>."""
    shown = PRINTABLE_BYTES.get(value)
    if shown is None:
        segs, _ = byte_segments(value)
        shown = "".join(seg.text if seg.kind != "hex" else f"<{seg.text}>" for seg in segs)
        PRINTABLE_BYTES.put(value, shown)
    return shown


def hex_bytes(value: bytes) -> str:
    return value.hex(" ").upper()


# --- merge trees --------------------------------------------------------------


def tree_lines(node: MergeNode | None, label: Callable[[MergeNode], str]) -> list[str]:
    """A merge tree as indented text lines (├ └ │), capped in size."""
    if node is None:
        return ["(not recorded: the input was too large)"]
    lines: list[str] = []

    def walk(n: MergeNode, prefix: str, connector: str, child_prefix: str) -> None:
        if len(lines) >= _TREE_NODE_CAP:
            if lines[-1] != "…":
                lines.append("…")
            return
        made = f"  rule {n.rule + 1}" if n.rule is not None else ""
        lines.append(f"{prefix}{connector}{label(n)}{made}")
        kids = n.children
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            walk(kid, prefix + child_prefix, "└ " if last else "├ ", "  " if last else "│ ")

    walk(node, "", "", "")
    return lines


# --- tokens -----------------------------------------------------------------


@dataclass
class TokenView:
    """One rendered token span."""

    index: int  # position in the output (0-based)
    id: int | None
    hue: str
    segments: list[Segment]
    text: str  # printable one-line text for the details panel
    hex: str
    start: int
    end: int
    unit: str  # "bytes" or "chars"
    tree: str
    valid: bool = True
    missing: bool = False
    pretoken_start: bool = False
    special: bool = False  # a recognised special token (<|endoftext|> ...), not made by merges
    differs: bool = False  # in a comparison: a boundary of this token is not one of the other side's
    tab_stop: bool = False  # the one token of the list reached with Tab (arrow keys move on)

    @property
    def position(self) -> str:
        return f"token {self.index + 1} · {self.unit} {self.start}–{self.end}"

    @property
    def breaks(self) -> bool:
        """Whether a line break follows the token box (its text holds a newline)."""
        return any(seg.kind == "nl" for seg in self.segments)


@dataclass
class TokenGroup:
    """Consecutive tokens; more than one when together they form whole characters."""

    tokens: list[TokenView]
    chars: str = ""  # the characters the group forms (only for multi-token groups)

    @property
    def grouped(self) -> bool:
        return len(self.tokens) > 1


def neighbour_hue(previous: str | None, token_id: int | None) -> str:
    """The id's hue, moved one step round the wheel when the left neighbour has it.

    Twelve hues cannot give every id its own, so two different ids side by
    side (`t` and a space are both hue 8) could look like one token. Bumping
    only on a clash keeps it deterministic (the same text always looks the
    same) and keeps most ids on their own hue.
    """
    hue = hue_class(token_id)
    if hue != previous or token_id is None:
        return hue
    return f"hue-{(int(hue[4:]) + 1) % HUE_COUNT}"


def distinct_neighbour_hues(groups: Sequence[TokenGroup]) -> list[TokenGroup]:
    """Recolor token views in order so that no two neighbours share a hue (see neighbour_hue)."""
    previous: str | None = None
    for group in groups:
        for view in group.tokens:
            view.hue = neighbour_hue(previous, view.id)
            previous = view.hue
    return list(groups)


def _char_start(data: bytes, offset: int) -> bool:
    """Whether a UTF-8 character starts at byte `offset` (the end counts as one)."""
    return offset >= len(data) or data[offset] & 0xC0 != 0x80


def byte_token_views(trace: EncodeTrace, text: str, special_ids: frozenset[int] = frozenset(),
                     first: int = 0) -> list[TokenGroup]:
    """Byte-level tokens from the `first` recorded one on, grouped where token boundaries fall inside a character.

    Tokens whose id is in `special_ids` are marked special (their text is
    never made by merges, so the id alone tells them apart).
    """
    data = text.encode("utf-8")
    pretoken_starts = {s for s, _ in trace.pretokens[1:]} if trace.pretokens else set()

    def label(n: MergeNode) -> str:
        return f'{n.symbol}  "{printable_bytes(data[n.start:n.end])}"'

    groups: list[TokenGroup] = []
    for index, tok in enumerate(trace.tokens[first:], start=first):
        value = tok.value if isinstance(tok.value, bytes) else data[tok.start : tok.end]
        segments, valid = byte_segments(value)
        view = TokenView(
            index=index,
            id=tok.id,
            hue=hue_class(tok.id),
            segments=segments,
            text=printable_bytes(value),
            hex=hex_bytes(value),
            start=tok.start,
            end=tok.end,
            unit="bytes",
            tree="\n".join(tree_lines(tok.tree, label)),
            valid=valid,
            pretoken_start=tok.start in pretoken_starts,
            special=tok.id in special_ids,
            tab_stop=index == first,
        )
        if groups and not _char_start(data, tok.start):
            groups[-1].tokens.append(view)
        else:
            groups.append(TokenGroup([view]))
    for group in groups:
        if group.grouped:
            lo, hi = group.tokens[0].start, group.tokens[-1].end
            group.chars = data[lo:hi].decode("utf-8", errors="replace")
    return distinct_neighbour_hues(groups)


def char_token_views(trace: EncodeTrace, first: int = 0) -> list[TokenGroup]:
    """Character-level tokens from the `first` recorded one on (never split inside a code point, so no grouping)."""

    def label(n: MergeNode) -> str:
        return f'"{printable(str(n.symbol))}"'

    groups = []
    for index, tok in enumerate(trace.tokens[first:], start=first):
        value = str(tok.value)
        groups.append(
            TokenGroup(
                [
                    TokenView(
                        index=index,
                        id=tok.id,
                        hue=hue_class(tok.id),
                        segments=text_segments(value),
                        text=printable(value),
                        hex=hex_bytes(value.encode("utf-8", "surrogatepass")),
                        start=tok.start,
                        end=tok.end,
                        unit="chars",
                        tree="\n".join(tree_lines(tok.tree, label)),
                        tab_stop=index == first,
                    )
                ]
            )
        )
    return distinct_neighbour_hues(groups)


def unknown_char_token_views(tokens: Sequence[str], vocab: dict[str, int], limit: int) -> list[TokenGroup]:
    """Char-level tokens when the vocab lacks some: known ones get their id, the rest are flagged."""
    groups = []
    offset = 0
    for index, value in enumerate(tokens[:limit]):
        token_id = vocab.get(value)
        groups.append(
            TokenGroup(
                [
                    TokenView(
                        index=index,
                        id=token_id,
                        hue=hue_class(token_id),
                        segments=text_segments(value),
                        text=printable(value),
                        hex=hex_bytes(value.encode("utf-8", "surrogatepass")),
                        start=offset,
                        end=offset + len(value),
                        unit="chars",
                        tree="(not in the vocab)" if token_id is None else "",
                        missing=token_id is None,
                    )
                ]
            )
        )
        offset += len(value)
    return distinct_neighbour_hues(groups)


# --- stats and trace tables -------------------------------------------------------


@dataclass(frozen=True)
class Stat:
    label: str
    value: str
    key: str


def encode_stats(text: str, ids: Sequence[int], rules_fired: int | None, rules_total: int) -> list[Stat]:
    """Tokens, characters, UTF-8 bytes, bytes per token, rules that fired (None: not counted, no card)."""
    n_bytes = len(text.encode("utf-8", "surrogatepass"))
    per = f"{n_bytes / len(ids):.2f}" if ids else "–"
    stats = [
        Stat("tokens", f"{len(ids):,}", "tokens"),
        Stat("characters", f"{len(text):,}", "chars"),
        Stat("UTF-8 bytes", f"{n_bytes:,}", "bytes"),
        Stat("bytes / token", per, "bytes-per-token"),
    ]
    if rules_fired is not None:
        stats.append(Stat("rules fired", f"{rules_fired:,} of {rules_total:,}", "rules-fired"))
    return stats
