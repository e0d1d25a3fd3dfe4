"""A loaded tokenizer as one object made of its stages: before the model, the model, after it.

`tokenizer_of` is the one place that reads a loaded tokenizer's fields and
builds its stages; special tokens in text are cut here too.

What it does not do: parse files (formats/), load presets (presets/), HTTP.
Map: docs/architecture.md.
"""

from webapp.tokenizer.stages.special import allowed_set, split_special
from webapp.tokenizer.stages.tokenizer import Tokenizer, build_tokenizer, needs_compiled, tokenizer_of

__all__ = ["Tokenizer", "allowed_set", "build_tokenizer", "needs_compiled", "split_special", "tokenizer_of"]
