"""Where a prompt ends: the tokens no appended text can change, witnesses for the others, token healing.

`prompt_end(tokenizer, text)` (ends.py) answers the prompt routes; splits.py (with normalizers.py)
and crossing.py are the two halves of its proof (docs/explain.md, "Where a prompt ends").
"""

from webapp.tokenizer.prompt.ends import PromptEnd, prompt_end, typed_tokenizer

__all__ = ["PromptEnd", "prompt_end", "typed_tokenizer"]
