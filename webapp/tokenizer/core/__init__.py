"""The engine: exact BPE encoding and decoding, with traces, grouped by which merge order a module runs.

Two merge orders, one subpackage each (a module goes where its semantics are,
not where its level is):

- list_order/: the seeds' algorithm (docs/algorithms.md), every rule visited
  once in list order, at both levels:
  - engine: the shared ordered-rule merge engine (`RuleTable`), segment by segment
  - byte_level: byte-level encode / encode_trace / compile_byte_merges / implied_byte_vocab
  - byte_splits: the split table of a byte-level list (which byte pairs a rule can ever join)
  - batch: many segments of a well-formed byte-level list at once with numpy
    (it takes a `BatchTables` value from `CompiledByteMerges.batch_tables()`)
  - char_level: character-level encode / encode_text_trace / compile_char_merges
  - tracing: the bounded `EncodeTrace` built from the list-order engine's merge events
  - precompiled: a compiled byte-level list (and its whole-token table) as a fast-loading blob
- library_order/: the orders the libraries run, where the best pair present
  fires next, again and again (tiktoken, Hugging Face `tokenizers`, SentencePiece):
  - merges: `LibraryMerges`, the lowest rank first (the file's merges as a map pair -> rank)
  - early_pairs: pairs of a word's first symbols that provably fire first (fewer steps)
  - score_order: SentencePiece's order, the highest piece score first (built on `LibraryMerges`)

And four modules shared by both, kept here:

- ranks: `INF`, the rank of a pair no rule has
- token_sizes: the byte lengths a rule list implies for its tokens, checked
  against limits before any vocabulary is built (`ImpliedVocab`, `check_sizes`)
- int_pool: one shared int object per id or rank for the big tables
- byte_decode: ids -> text through a byte vocab (it does not depend on how the ids were merged)

Why this split: a newcomer changing how a file's merges fire reads one
folder, and the two orders share nothing but the four modules above
(library_order/ imports nothing from list_order/, nor the other way round).

This package imports only the shared leaf modules of `webapp.tokenizer`
(errors, caches, traces, validation), never pre-tokenization,
training, Hugging Face pipelines, file formats or presets. Import names from
the modules (or the public ones from `webapp.tokenizer`); this module and
the two subpackages export nothing.
"""
