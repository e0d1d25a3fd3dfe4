"""The libraries' orders: at each step the best pair present fires (tiktoken, `tokenizers`, SentencePiece).

merges.py is the rank order (`LibraryMerges`: the lowest rank first, the
leftmost on ties), early_pairs.py the pairs of a word's first symbols that
provably fire before anything else, score_order.py SentencePiece's order
(the highest piece score first) built on the same structures.

The seeds' list order (every rule visited once) is in core/list_order/;
nothing here imports from it. This package exports nothing (import from the
modules).
"""
