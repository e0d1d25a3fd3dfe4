"""A loaded tokenizer as an object made of its stages (see tokenizer.py for the picture).

- special.py: special tokens in text for a playground scheme (`allowed_set`,
  `split_special`, the trace with special tokens put back);
- splitters.py: the stages before the model, one class per way a file has
  them (a playground scheme, a tokenizer.json's pipeline, the whole text);
- models.py: the model stage, one class per merge order (list order in bytes
  or characters, the library's order);
- tokenizer.py: `Tokenizer` and `tokenizer_of`, the one place that reads a
  loaded tokenizer's fields and builds its stages.

What it does not do: parse files (formats/), load presets (presets/), HTTP.
"""

from webapp.tokenizer.stages.special import allowed_set, split_special
from webapp.tokenizer.stages.tokenizer import Tokenizer, build_tokenizer, needs_compiled, tokenizer_of

__all__ = ["Tokenizer", "allowed_set", "build_tokenizer", "needs_compiled", "split_special", "tokenizer_of"]
