"""A tokenizer's vocabulary, explored: search, token cards, unreachable tokens, statistics.

- index: `VocabIndex`, every token of a loaded tokenizer in the file's ids, with the rule
  that makes it (its parents), the rules that use it (its children), its merge tree and
  the `q` search over its bytes
- reach: every token decided (`unreachable`): reachable with a witness text, unreachable
  with a reason that holds for every text, or undecided; the proofs in forms (a token
  forms from its own symbols alone or never), pieces (split patterns), edges (a character
  that takes a token's last byte first), normal (NFC / NFKC), the witnesses in witness
- stats: the histogram of token lengths in bytes and the Unicode scripts of the tokens

The top layer of the package beside presets/: it may import every other layer; nothing in
the package imports it (only `webapp.tokenizer` re-exports its names). It does no HTTP,
keeps no cache (the web layer does) and never changes the tokenizer.
"""
