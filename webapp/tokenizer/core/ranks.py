"""`INF`, the rank of a pair no rule has: shared by both merge orders (list_order/ and library_order/).

Both orders rank every neighbouring pair by the rule that would join it
next (list order: the next rule at or after the current visit; library
order: the pair's rank in the file, or a SentencePiece score level) and
take the smallest; a pair no rule joins ranks `INF`, above every real rank,
so a minimum over ranks is `INF` exactly when nothing can merge.

It holds nothing else: the engines keep their own tables.
"""

from __future__ import annotations

INF = 1 << 62  # "no rule left for this pair"; larger than any rule index

__all__ = ["INF"]
