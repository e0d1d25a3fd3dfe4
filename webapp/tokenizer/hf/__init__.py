"""A tokenizer.json's pipeline put together: normalizer, added tokens, pre-tokenizer, model pieces,
post-processor and decoder, compiled once (pipeline.py).

The stages it strings together live in normalize/, pretokenize/, models/ and decoders/. What it does not
do: read files (formats/), choose a tokenizer's stages (stages/), HTTP.
This module exports nothing. Map and import rules: docs/architecture.md.
"""
