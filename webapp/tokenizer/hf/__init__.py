"""Hugging Face tokenizer.json pipelines, and encoding with any loaded tokenizer in its file's ids.

- alphabet: GPT-2's byte <-> character table (ByteLevel's, and how byte-level
  files write bytes as text)
- text: the character classes and the `split` primitive of `tokenizers`
- normalizers, pre_tokenizers, post_processors, decoders: a tokenizer.json's
  stages of those kinds, one module each (fields: what the readers of the
  normalizers, pre-tokenizers and decoders share)
- pipeline: what a tokenizer.json does around its BPE model (added tokens,
  normalizer, pre-tokenizer, decoder), read and compiled
- encoding: a `LoadedTokenizer`'s ids, traces and decoding in the file's ids,
  through its pipeline where it has one, else playground pre-tokenization
  and the id map

Above the engine and pre-tokenization, below file formats (whose readers use
the alphabet and read pipelines) and presets. Import names from the modules
(or the public ones from `webapp.tokenizer`); this module exports nothing.
"""
