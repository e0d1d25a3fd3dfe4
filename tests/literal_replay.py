"""The literal replays the explanation tests check claims against, every snapshot kept.

A token is (symbol, start, end): its symbol and the span of initial symbols (bytes or
characters) it covers. `literal_list` visits each rule once in list order, as the seeds'
algorithm says; `literal_library` fires, again and again, the present pair of lowest rank
(leftmost on ties), as tiktoken and `tokenizers` do. Both are deliberately naive (one
snapshot per step, quadratic): they are the oracle, not the engine.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

Token = tuple[Hashable, int, int]  # (symbol, start, end) in initial symbol indexes
Rule = tuple[Hashable, Hashable, Hashable]  # (left, right, new)


def literal_list(symbols: Sequence[Hashable], rules: Sequence[Rule]) -> list[list[Token]]:
    """snapshots[t + 1]: the tokens after visiting rule t (snapshots[0]: the start)."""
    tokens: list[Token] = [(s, i, i + 1) for i, s in enumerate(symbols)]
    snaps = [tokens]
    for left, right, new in rules:
        out: list[Token] = []
        i = 0
        while i < len(tokens):
            if i + 1 < len(tokens) and tokens[i][0] == left and tokens[i + 1][0] == right:
                out.append((new, tokens[i][1], tokens[i + 1][2]))
                i += 2
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
        snaps.append(tokens)
    return snaps


def literal_library(symbols: Sequence[Hashable], rules: Sequence[Rule],
                    rank: Mapping[tuple[Hashable, Hashable], int]) -> tuple[list[list[Token]], list[int]]:
    """snapshots[s + 1]: the tokens after firing s, and the rank of each firing (`rank`: pair -> the
    rule index that joins it, chosen by the caller for a pair listed twice)."""
    tokens: list[Token] = [(s, i, i + 1) for i, s in enumerate(symbols)]
    snaps, fired = [tokens], []
    while True:
        present = [(rank[(a[0], b[0])], i) for i, (a, b) in enumerate(zip(tokens, tokens[1:])) if (a[0], b[0]) in rank]
        if not present:
            return snaps, fired
        r, i = min(present)
        tokens = [*tokens[:i], (rules[r][2], tokens[i][1], tokens[i + 1][2]), *tokens[i + 2:]]
        snaps.append(tokens)
        fired.append(r)
