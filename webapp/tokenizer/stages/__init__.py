"""A loaded tokenizer as an object made of its stages (see tokenizer.py for the picture).

`tokenizer_of` (tokenizer.py) is the one place that reads a loaded
tokenizer's fields and builds its stages: splitters.py before the model,
models.py the model, special.py special tokens in text.

What it does not do: parse files (formats/), load presets (presets/), HTTP.
"""

from webapp.tokenizer.stages.special import allowed_set, split_special
from webapp.tokenizer.stages.tokenizer import Tokenizer, build_tokenizer, needs_compiled, tokenizer_of

__all__ = ["Tokenizer", "allowed_set", "build_tokenizer", "needs_compiled", "split_special", "tokenizer_of"]
