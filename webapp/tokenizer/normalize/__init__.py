"""Normalizers: a tokenizer.json's (normalizers.py) and SentencePiece's (sentencepiece.py, its charsmap
checked rule by rule in charsmap.py).

This module exports nothing. Map and import rules: docs/architecture.md.
"""
