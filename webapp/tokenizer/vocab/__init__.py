"""A tokenizer's vocabulary, explored: search, token cards, unreachable tokens, statistics.

It does no HTTP, keeps no cache (the web layer does) and never changes the
tokenizer. Map and import rules: docs/architecture.md.
"""
