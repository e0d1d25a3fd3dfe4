"""Pre-tokenization: split text with a published regex pattern, encode each pre-token.

The patterns, chunking (with its caches), class splits and pre-tokenized
encoding over the list-order engine. What it does not do: a tokenizer.json's
own pre-tokenizers (hf/), file formats. Import names from the modules (or the
public ones from `webapp.tokenizer`); this module exports nothing. Map:
docs/architecture.md.
"""
