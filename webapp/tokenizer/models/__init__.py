"""The library-order model: a Hugging Face or SentencePiece file's BPE as its library fires it (library.py,
over core/library_order/), long pieces (long_pieces.py, row_symbols.py) and its recorded run (library_trace.py).

This module exports nothing. Map and import rules: docs/architecture.md.
"""
