"""The engine: exact BPE encoding and decoding, with traces, at both levels.

- engine: the shared ordered-rule merge engine (`RuleTable`), segment by segment
- byte_level: byte-level encode / encode_trace / compile_byte_merges / implied_byte_vocab
- byte_splits: the split table of a byte-level list (which byte pairs a rule can ever join)
- batch: many byte-level pieces encoded at once with numpy
- char_level: character-level encode / encode_text_trace / compile_char_merges
- byte_decode: ids -> text through a byte vocab
- tracing: the bounded `EncodeTrace` built from the engine's merge events
- precompiled: a compiled byte-level list (and its whole-token table) as a fast-loading blob
- int_pool: one shared int object per id or rank for the big tables

This package imports only the shared leaf modules of `webapp.tokenizer`
(errors, caches, traces, validation, token_sizes), never pre-tokenization,
training, Hugging Face pipelines, file formats or presets. Import names from
the modules (or the public ones from `webapp.tokenizer`); this module exports
nothing.
"""
