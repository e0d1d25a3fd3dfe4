"""The Python API: one handle, `Encoding` (tiktoken's API over the one `Tokenizer`), and the names that give it.

`get_encoding` / `encoding_for_model` give tiktoken's defaults (or `tokenizers`' for a
tokenizer.json), `get_tokenizer` the playground's. What it does not do: parse files or
build presets (it asks presets/ and formats/), HTTP. Map: docs/architecture.md.
"""

from webapp.tokenizer.api.encoding import Defaults, Encoding
from webapp.tokenizer.api.registry import (
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    get_tokenizer,
    list_encoding_names,
    register_resolver,
)

__all__ = [
    "Defaults", "Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "get_tokenizer",
    "list_encoding_names", "register_resolver",
]
