"""The libraries' orders: at each step the best pair present fires (tiktoken, `tokenizers`, SentencePiece).

By rank or by SentencePiece's score. Nothing here imports from
core/list_order/. This package exports nothing (import from the modules).
Map: docs/architecture.md.
"""
