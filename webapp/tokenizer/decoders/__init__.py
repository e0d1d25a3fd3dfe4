"""Decoders: a tokenizer.json's (decoders.py); ids to bytes through a byte vocab is core/byte_decode.py.

This module exports nothing. Map and import rules: docs/architecture.md.
"""
