"""Hugging Face tokenizer.json pipelines and BPE model, and SentencePiece's normalizer and decoder.

Normalizers, pre-tokenizers, decoders, post-processors, the model in the
library's merge order, and the bounds on what a file brings. What it does
not do: read files (formats/), choose a tokenizer's stages (stages/), HTTP.
This module exports nothing. Map and import rules: docs/architecture.md.
"""
