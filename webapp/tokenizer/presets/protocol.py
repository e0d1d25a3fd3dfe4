"""What every preset answers, whichever files it is read from: the protocol the catalog asks.

What it does not do: implement anything (the two kinds do, in their modules).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import os
from typing import Protocol

from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges
from webapp.tokenizer.loaded import LoadedTokenizer


class CatalogPreset(Protocol):
    """One preset, as the catalog, the listings and the pages see it (frozen dataclasses implement it)."""

    @property
    def name(self) -> str:
        """The canonical name (`PRESET_NAMES`)."""

    @property
    def aliases(self) -> tuple[str, ...]:
        """Other names it is found by (gpt2 for r50k_base)."""

    @property
    def description(self) -> str: ...

    @property
    def scheme(self) -> str:
        """The page's pre-tokenization choice that splits text as this preset does."""

    @property
    def sha256(self) -> str:
        """The SHA-256 of the file it is read from (checked before use)."""

    @property
    def n_vocab(self) -> int:
        """The largest id (special tokens included) plus one, as tiktoken's `n_vocab`."""

    @property
    def pattern(self) -> str | None:
        """The split pattern (None when the file's own pre-tokenizer splits)."""

    @property
    def vendor(self) -> str:
        """Who published the tokenizer (the preset buttons group by it)."""

    def describe(self) -> dict[str, object]:
        """JSON-able facts for the listings (`GET /api/tokenizers`)."""

    def installed(self) -> bool:
        """Is the package holding its file installed (nothing is read)?"""

    def loaded(self, cache_dir: str | os.PathLike[str] | None = None) -> LoadedTokenizer:
        """The tokenizer: its stored form from the cache folder when prepared, else converted (and stored)."""

    def compiled(self, cache_dir: str | os.PathLike[str] | None = None) -> CompiledByteMerges | None:
        """Its compiled merge list (precompiled when the cache has it); None for the library's order."""

    def prepared_in(self, cache_dir: str | os.PathLike[str]) -> bool:
        """Is its stored form in `cache_dir`, under today's file name?"""

    def prepare_in(self, cache_dir: str | os.PathLike[str]) -> dict[str, float]:
        """The set-up step for this preset: converted and stored into `cache_dir`; seconds spent, by name."""

__all__ = ["CatalogPreset"]
