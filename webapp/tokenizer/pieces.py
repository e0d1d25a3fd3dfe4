"""The seam between a splitter and a model: one text cut once into the pieces its model sees.

A splitter (stages/splitters.py) makes `Pieces`; a model (stages/models.py) turns them into
ids, or records its run over them as a Trace. `around_added` puts the added
tokens back into a record made over the text between them.
What it does not do: split text or merge.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable

from webapp.tokenizer.traces import EncodeTrace, MergeNode, Token, TraceLimits


@dataclass(frozen=True)
class Pieces:
    """`text` as its model sees it (normalized and prefixed for a file's pipeline), offsets in `unit`
    ("bytes": UTF-8, "chars": code points): the ordinary pieces' `spans` and texts (`strings`; `spell` turns
    one into what a library-order model reads, in the byte alphabet for a byte-level file), and the `added` tokens
    (start, end, id), each one token that no merge touches. `fuse_unk`: the file's model fuses unknown
    characters into one unknown token (`drop_unknown_first`: its bytes with no token are left out before
    merging, not after). `pretokens`: the spans a trace reports as its pre-tokens."""

    text: str
    unit: str
    spans: list[tuple[int, int]]
    strings: list[str]
    added: list[tuple[int, int, int]]
    pretokens: list[tuple[int, int]]
    rewritten: bool = False  # `text` is the splitter's own (a file's normalizer, prefix), not the input
    fuse_unk: bool = False
    drop_unknown_first: bool = False  # bytes with no token left out before merging (the library's way)
    spell: Callable[[str], str] = str  # (spelt only when a library-order model asks: list order reads offsets)

    def model_strings(self) -> list[str]:
        """Each ordinary piece as a library-order model reads it."""
        return list(map(self.spell, self.strings))

    @cached_property
    def encoded(self) -> bytes:
        return self.text.encode("utf-8", "surrogatepass")

    @property
    def shown(self) -> str | None:
        """A trace's `text`: the text its offsets index, None when that is the input itself."""
        return self.text if self.rewritten else None

    def value(self, start: int, end: int) -> bytes | str:
        """A token's value: its bytes (offsets in bytes) or its characters."""
        return self.encoded[start:end] if self.unit == "bytes" else self.text[start:end]

    def runs(self) -> list[list[tuple[int, int]]]:
        """The ordinary spans in runs, one run between two added tokens (a run may be empty)."""
        runs: list[list[tuple[int, int]]] = [[]]
        added = iter(sorted(self.added))
        nxt = next(added, None)
        for span in self.spans:
            while nxt is not None and nxt[0] <= span[0]:
                runs.append([])
                nxt = next(added, None)
            runs[-1].append(span)
        while nxt is not None:
            runs.append([])
            nxt = next(added, None)
        return runs

    def in_order(self, run_ids: list[list[int]]) -> list[int]:
        """The ids of each run (as `runs` gives them) with the added tokens' ids between them."""
        ids = list(run_ids[0])
        for (_, _, aid), more in zip(sorted(self.added), run_ids[1:]):
            ids.append(aid)
            ids.extend(more)
        return ids


def around_added(pieces: Pieces, record: Callable[[str, list[int]], EncodeTrace], ids: list[int] | None,
                 limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
    """A model's record over the text between the added tokens (`record(ordinary text, piece starts)`),
    with the added tokens put back in place as one token each; `ids`: the complete ids (None: the record's
    own, when there is no added token). Also the indexes of the added tokens among the recorded tokens."""
    added = sorted(pieces.added)
    if not added:  # (nothing to take out, put back or move)
        trace = record(pieces.text, [start for start, _ in pieces.spans])
        return replace(trace, ids=trace.ids if ids is None else ids, pretokens=pieces.pretokens,
                       text=pieces.shown), []
    if pieces.unit == "bytes":
        data = pieces.encoded
        ordinary = b"".join(data[a:b] for a, b in _between(added, len(data))).decode("utf-8", "surrogatepass")
    else:
        ordinary = "".join(pieces.text[a:b] for a, b in _between(added, len(pieces.text)))
    removed: list[tuple[int, int, int, int]] = []  # (ordinary offset, start, end, id)
    before = [0]  # before[k]: the units of the first k added tokens
    for start, end, aid in added:
        removed.append((start - before[-1], start, end, aid))
        before.append(before[-1] + end - start)
    at_ordinary = [at for at, _, _, _ in removed]
    ends = [end for _, _, end, _ in removed]

    def delta_at(position: int) -> int:
        """The units of the added tokens that stand before ordinary offset `position`."""
        return before[bisect_right(at_ordinary, position)]

    trace = record(ordinary, [start - before[bisect_right(ends, start)] for start, _ in pieces.spans])
    assert ids is not None  # (a record over text with added tokens taken out lacks their ids: the caller gives them)
    tokens: list[Token] = []
    added_at: list[int] = []
    waiting = iter(removed)
    nxt = next(waiting, None)

    def put_added(item: tuple[int, int, int, int]) -> None:
        _, start, end, aid = item
        added_at.append(len(tokens))
        tokens.append(Token(id=aid, value=pieces.value(start, end), start=start, end=end))

    for token in trace.tokens:
        while nxt is not None and nxt[0] <= token.start:
            put_added(nxt)
            nxt = next(waiting, None)
        delta = delta_at(token.start)
        tokens.append(token if not delta else
                      replace(token, start=token.start + delta, end=token.end + delta,
                              tree=_shifted(token.tree, delta) if token.tree is not None else None))
    if not trace.tokens_truncated:
        while nxt is not None:
            put_added(nxt)
            nxt = next(waiting, None)
    tokens = tokens[:limits.max_tokens]
    added_at = [i for i in added_at if i < len(tokens)]
    steps = [replace(step, window_start=step.window_start + delta_at(step.window_start))
             if step.window_start is not None else step for step in trace.steps]
    return replace(trace, ids=ids, tokens=tokens, tokens_truncated=len(ids) > len(tokens), steps=steps,
                   pretokens=pieces.pretokens, text=pieces.shown), added_at


def _between(added: list[tuple[int, int, int]], size: int) -> list[tuple[int, int]]:
    """The stretches of [0, size) outside the added tokens' spans."""
    out: list[tuple[int, int]] = []
    at = 0
    for start, end, _ in added:
        out.append((at, start))
        at = end
    out.append((at, size))
    return out


def _shifted(node: MergeNode, delta: int) -> MergeNode:
    return replace(node, start=node.start + delta, end=node.end + delta,
                   children=tuple(_shifted(child, delta) for child in node.children))


__all__ = ["Pieces", "around_added"]
