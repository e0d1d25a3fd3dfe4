"""Hugging Face tokenizer.json pipelines and BPE model, and SentencePiece's normalizer and decoder.

Above the engine and pre-tokenization, below stages, file formats and
presets. Which module holds what: docs/architecture.md. Import names from the
modules (or the public ones from `webapp.tokenizer`); this module exports
nothing.
"""
