"""A tokenizer's vocabulary, explored: search, token cards, unreachable tokens, statistics.

Which module holds what: docs/architecture.md. The top layer of the package
beside presets/; nothing in the package imports it. It does no HTTP, keeps
no cache (the web layer does) and never changes the tokenizer.
"""
