"""Traces and other schemes for tokenizers whose merges follow the library's order.

What it does not do: the seed order's traces (core/list_order/tracing.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Callable

from webapp.tokenizer.core.list_order.tracing import WINDOW_RADIUS
from webapp.tokenizer.models.library import LibraryModel
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.pretokenized import split_text
from webapp.tokenizer.pieces import Pieces
from webapp.tokenizer.traces import EncodeTrace, MergeNode, Token, TraceLimits, TraceStep


def library_scheme_ids(model: LibraryModel, tok: LoadedTokenizer, text: str, scheme: str) -> list[int]:
    """Ids of `text` split by a playground scheme, each piece through the file's model."""
    ids: list[int] = []
    pieces = split_text(text, scheme) if scheme != "none" else [text]
    for piece in pieces:
        ids.extend(model.tokenize(tok.unit.spell(piece)))
    return ids


def library_trace(tok: LoadedTokenizer, model: LibraryModel, pieces: Pieces,
                  limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
    """The record of the model's run over `pieces` (see the module doc), and the indexes of the added tokens
    among its recorded tokens. The ids are the run's own, complete whatever the limits.

    Offsets in `pieces.unit`: "bytes" (symbols as ids, the Bytes page) or "chars" (symbols as token
    strings, the Characters page).
    """
    unit = pieces.unit
    spans, model_pieces, added = pieces.spans, pieces.model_strings(), pieces.added
    names = tok.unit.token_names(tok) if unit == "chars" else None
    show = (lambda i: names.get(i, str(i))) if names is not None else (lambda i: i)  # noqa: E731
    value = pieces.value
    added_index: list[int] = []
    ids: list[int] = []

    symbol_unit = tok.unit.symbol_unit(unit)
    tokens: list[Token] = []
    steps: list[TraceStep] = []
    fired: set[int] = set()
    initial: list[Any] = []
    steps_truncated = False
    added_at = {start: (end, aid) for start, end, aid in added}
    for (start, end), piece in zip(spans, model_pieces):
        # added tokens that stand before this piece
        for a_start in sorted(s for s in added_at if s < start):
            a_end, aid = added_at.pop(a_start)
            if len(tokens) < limits.max_tokens:
                added_index.append(len(tokens))
                tokens.append(Token(id=aid, value=value(a_start, a_end), start=a_start, end=a_end))
            initial.append(show(aid))
            ids.append(aid)
        symbols, sizes, firings, whole = model.tokenize_trace(piece, symbol_unit)
        nodes: list[MergeNode | None] = []
        at = start
        for sym, size in zip(symbols, sizes):
            nodes.append(MergeNode(symbol=show(sym), start=at, end=at + size))
            at += size
        initial.extend(show(s) for s in symbols)
        current = list(symbols)
        if whole:  # ignore_merges: the piece is one vocab token, no merge fired
            current = [model.vocab[piece]]
            nodes = [MergeNode(symbol=show(current[0]), start=start, end=end)]
        # The live symbols' indices, kept only while steps are recorded: after that nothing reads
        # them, and removing from a list per firing made a long piece quadratic (a 200,000-letter
        # piece took minutes).
        alive: list[int] | None = list(range(len(symbols))) if len(steps) < limits.max_steps else None
        for rank, left, right in firings:
            new = model.merges.news[rank]
            left_node, right_node = nodes[left], nodes[right]
            assert left_node is not None and right_node is not None
            nodes[left] = MergeNode(symbol=show(new), start=left_node.start, end=right_node.end, rule=rank,
                                    children=(left_node, right_node))
            nodes[right] = None
            fired.add(rank)
            if alive is not None and len(steps) < limits.max_steps:
                steps.append(_step(rank, left, right, new, alive, current, nodes, show, start))
            else:
                steps_truncated = True
                alive = None
            current[left] = new
            if alive is not None:
                alive.remove(right)
        ids.extend(token_id for node, token_id in zip(nodes, current) if node is not None)
        for node, token_id in zip(nodes, current):
            if node is not None and len(tokens) < limits.max_tokens:
                tokens.append(Token(id=token_id, value=value(node.start, node.end),
                                    start=node.start, end=node.end, tree=node))
    for a_start in sorted(added_at):
        a_end, aid = added_at[a_start]
        if len(tokens) < limits.max_tokens:
            added_index.append(len(tokens))
            tokens.append(Token(id=aid, value=value(a_start, a_end), start=a_start, end=a_end))
        initial.append(show(aid))
        ids.append(aid)
    return EncodeTrace(
        ids=ids, tokens=tokens, tokens_truncated=len(ids) > len(tokens),
        initial=tuple(initial) if len(initial) <= limits.max_sequence else None,
        steps=steps, steps_truncated=steps_truncated, rules_fired=len(fired),
        rules_idle=len(model.merges) - len(fired),
        pretokens=pieces.pretokens, text=pieces.shown,
    ), added_index


def _step(rank: int, left: int, right: int, new: int, alive: list[int], current: list[int],
          nodes: list[MergeNode | None], show: Callable[[int], Any], piece_start: int) -> TraceStep:
    """One firing as a step: the piece's live symbols right after it, or, for a long piece, a
    window of WINDOW_RADIUS of them on each side (as the seed order's traces show a long
    sequence), so a step costs at most that much whatever the piece's length."""
    position = alive.index(left)
    lo = max(0, position - WINDOW_RADIUS)
    hi = min(len(alive), position + WINDOW_RADIUS + 2)  # (+2: the left symbol and the right one, dropped)
    shown = [i for i in alive[lo:hi] if i != right]
    first = nodes[shown[0]]
    assert first is not None
    return TraceStep(
        rule=rank, left=show(current[left]), right=show(current[right]), new=show(new), matches=1,
        window=tuple(show(current[i]) if i != left else show(new) for i in shown),
        window_start=first.start, changed=(position - lo,), window_more=(lo > 0, hi < len(alive)),
        piece_start=piece_start,
    )


__all__ = ["library_scheme_ids", "library_trace"]
