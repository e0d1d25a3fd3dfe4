"""The real OpenAI tokenizers and the open models' files as presets, and the tiktoken-like handles.

The top layer of the package: it may import every other one; no other layer
imports it. Which module holds what: docs/architecture.md. Import names from
the modules (or the public ones from `webapp.tokenizer`); this module
exports nothing.
"""
