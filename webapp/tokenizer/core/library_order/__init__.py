"""The libraries' orders: at each step the best pair present fires (tiktoken, `tokenizers`, SentencePiece).

merges.py is the rank order, score_order.py SentencePiece's (the highest
score first). Nothing here imports from core/list_order/. This package
exports nothing (import from the modules).
"""
