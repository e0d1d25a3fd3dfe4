"""The real OpenAI tokenizers as presets, and the tiktoken-like handle on presets and opened files.

- openai: the presets (r50k_base / gpt2, p50k_base, cl100k_base, o200k_base):
  js-tiktoken's ranks, checked against tiktoken's hashes, converted to merges
  and precompiled, cached on disk
- real: `get_tokenizer(name or opened file id)` -> a tiktoken-like `TokenizerHandle`
  (its encode goes through the tokenizer's stages, stages/)
- prepare: the set-up step `python -m webapp.tokenizer.presets.prepare`

The top layer of the package: it may import every other one (formats, hf,
training, pre-tokenization, the engine); no other layer imports it (only
`webapp.tokenizer` re-exports its public names).
Import names from the modules (or the public ones from `webapp.tokenizer`);
this module exports nothing.
"""
