"""The tool pages and the pre-tokenization choices, defined once for views and templates.

What it does not do: routes or rendering (webapp.web.playground.pages), or splitting text
(webapp.tokenizer.pretokenize.patterns, whose SCHEMES the choices follow).
"""

from __future__ import annotations
from webapp.tokenizer import SCHEMES


#: The tool pages, in menu order.
TOOLS: tuple[str, ...] = ("bytes", "chars", "train")
#: The pages that can open a tokenizer file (or preset) in place of typed merges.
FILE_TOOLS: tuple[str, ...] = ("bytes", "chars")

_SCHEME_LABELS = {"none": "none (as specified)", "gpt2": "GPT-2 pattern", "cl100k": "cl100k pattern",
                  "o200k": "o200k pattern"}
#: (value, label) of every pre-tokenization scheme, for the select boxes.
PRETOKENIZE_CHOICES: tuple[tuple[str, str], ...] = tuple((s, _SCHEME_LABELS.get(s, f"{s} pattern")) for s in SCHEMES)


def template_constants() -> dict[str, object]:
    """What every template may use (an app context processor registers it)."""
    return {"tools": TOOLS, "file_tools": FILE_TOOLS, "pretokenize_choices": PRETOKENIZE_CHOICES}
