"""The engine: exact BPE encoding and decoding, with traces, in the seeds' list order and in the libraries' order.

What it does not do: pre-tokenize, read files, normalize, HTTP. It imports
only the shared modules beside it (errors, validation, caches, traces).
This module exports nothing. Which module holds what: docs/architecture.md;
why: docs/engine.md.
"""
