"""Where a prompt ends: the tokens no appended text can change, witnesses for the others, token healing.

`prompt_end(tokenizer, text)` answers the prompt routes (docs/explain.md, "Where a prompt
ends"). What it does not do: HTTP or limits (the web layer). Map: docs/architecture.md.
"""

from webapp.tokenizer.prompt.ends import PromptEnd, prompt_end, typed_tokenizer

__all__ = ["PromptEnd", "prompt_end", "typed_tokenizer"]
