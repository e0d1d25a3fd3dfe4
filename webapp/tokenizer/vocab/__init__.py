"""A tokenizer's vocabulary, explored: search, token cards, unreachable tokens, statistics.

- index: `VocabIndex`, every token of a loaded tokenizer in the file's ids, with the rule
  that makes it (its parents), the rules that use it (its children), its merge tree and
  the `q` search over its bytes
- reach: which tokens their own text does not encode to (`unreachable`), each grouped by
  a cause that is true by construction
- stats: the histogram of token lengths in bytes and the Unicode scripts of the tokens

The top layer of the package beside presets/: it may import every other layer; nothing in
the package imports it (only `webapp.tokenizer` re-exports its names). It does no HTTP,
keeps no cache (the web layer does) and never changes the tokenizer.
"""
