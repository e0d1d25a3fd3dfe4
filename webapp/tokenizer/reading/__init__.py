"""What a file's parts are read with: bounded text operations (text.py), a file's fields checked (fields.py),
patterns measured before they compile (regex_size.py), linear-time longest matches (longest_match.py).

This module exports nothing. Map and import rules: docs/architecture.md.
"""
