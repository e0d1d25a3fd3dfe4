"""tiktoken's `Encoding` for an open model's tokenizer.json, where `encode` follows the `tokenizers` library.

What it does not do: the registry of named encodings (tiktoken_api.py), the
encode itself (the tokenizer's stages, stages/).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Iterable

from webapp.tokenizer.hf import pipeline as hf_pipeline
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets.tiktoken_encoding import Encoding, SpecialCollection, SpecialSet


class OpenModelEncoding(Encoding):
    """An open model's tokenizer.json with the Encoding API; `encode` follows the `tokenizers` library."""

    def __init__(self, name: str, loaded: LoadedTokenizer) -> None:  # noqa: D107 - not tiktoken's signature
        if not loaded.pipeline:
            raise ValueError("OpenModelEncoding is for a tokenizer.json with its pipeline; use encoding_for_loaded")
        self.setup_from(name, loaded, None)

    def setup_from(self, name: str, loaded: LoadedTokenizer, compiled: Any) -> None:
        super().setup_from(name, loaded, compiled)
        added = hf_pipeline.compile_pipeline(loaded.pipeline).added
        self._special = frozenset(token.content for token in added if token.special)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the playground leaves out of the file (post-processor, unsupported steps)."""
        return self._loaded.notes

    def encode(  # (the library's arguments and defaults)
        self,
        text: str,
        *,
        add_special_tokens: bool = True,
        allowed_special: SpecialSet = "all",
        disallowed_special: SpecialCollection = (),
    ) -> list[int]:
        """The library's ids for `text` (`tokenizers.Tokenizer.encode(text, add_special_tokens=...).ids`)."""
        _check_add_special(add_special_tokens)
        ids = super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return self._tokenizer.post_process(ids) if add_special_tokens else ids

    def encode_batch(
        self,
        text: Iterable[str],
        *,
        num_threads: int = 8,
        add_special_tokens: bool = True,
        allowed_special: SpecialSet = "all",
        disallowed_special: SpecialCollection = (),
    ) -> list[list[int]]:
        _check_add_special(add_special_tokens)
        batch = super().encode_batch(
            text, num_threads=num_threads, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return [self._tokenizer.post_process(ids) for ids in batch] if add_special_tokens else batch


def _check_add_special(value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"add_special_tokens should be True or False, got {type(value).__name__}")


def encoding_for_loaded(loaded: LoadedTokenizer, name: str = "loaded", *, compiled: Any = None) -> Encoding:
    """An Encoding for any loaded tokenizer: OpenModelEncoding for a tokenizer.json with its pipeline."""
    cls = OpenModelEncoding if loaded.pipeline else Encoding
    return cls.from_loaded(name, loaded, compiled)
