"""Every preset by name: the OpenAI four (openai.py) and the open models (open_models.py).

What it does not do: read any file itself, or encode.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.models import LIBRARY_MODEL
from webapp.tokenizer.presets import open_models, openai
from webapp.tokenizer.presets.openai import PresetMissing
from webapp.tokenizer.presets.protocol import CatalogPreset

PRESET_NAMES: tuple[str, ...] = (*openai.PRESET_NAMES, *open_models.OPEN_MODELS)
PRESETS: dict[str, CatalogPreset] = {**openai.PRESETS, **open_models.OPEN_MODELS}
#: Every preset's rules once (the bound of the caches that keep every preset).
PRESET_RULES = openai.PRESET_RANKS + open_models.OPEN_MODEL_RULES


#: (vendor, canonical names) in the order the buttons show them.
VENDORS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (vendor, tuple(n for n in PRESET_NAMES if PRESETS[n].vendor == vendor))
    for vendor in dict.fromkeys(PRESETS[n].vendor for n in PRESET_NAMES)
)


def is_preset(name: object) -> bool:
    return isinstance(name, str) and name in PRESETS


def is_open_model(name: object) -> bool:
    return isinstance(name, str) and name in open_models.OPEN_MODELS


def get_preset(name: object) -> CatalogPreset:
    """The preset for a name or alias, or a TokenizerError listing the names."""
    return openai.find_preset(name, PRESETS)


def unknown_preset(name: object) -> TokenizerError:
    """The error for a name that is no preset, listing every preset."""
    return openai.unknown_preset(name, PRESETS)


def is_installed(name: str) -> bool:
    return get_preset(name).installed()


PREPARING_MARKER = ".preparing"  # in the cache folder: the pid of a set-up step still preparing presets


class PresetPreparing(PresetMissing):
    """The preset is being prepared by the set-up step right now (a 503, like a missing one)."""


@contextmanager
def marked_preparing(cache_dir: str | os.PathLike[str]) -> Iterator[None]:
    """While the set-up step runs: the presets it has not finished show as being prepared."""
    marker = Path(cache_dir) / PREPARING_MARKER
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(os.getpid()), encoding="ascii")
    except OSError:
        pass
    try:
        yield
    finally:
        try:
            if marker.read_text(encoding="ascii") == str(os.getpid()):
                marker.unlink()
        except OSError:
            pass


def is_preparing(name: str, cache_dir: str | os.PathLike[str] | None = None) -> bool:
    """Is another process's set-up step still preparing this preset (not prepared yet, its marker alive)?"""
    where = Path(cache_dir) if cache_dir else openai.get_cache_dir()
    if where is None:
        return False
    try:
        pid = int((where / PREPARING_MARKER).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return False
    if pid == os.getpid() or is_prepared(where, name):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False  # a step that died: the preset is converted where it is used, as without set-up
    except OSError:
        pass  # (alive, another user's)
    return True


def load_preset(name: str, cache_dir: str | os.PathLike[str] | None = None) -> LoadedTokenizer:
    preset = get_preset(name)
    if is_preparing(preset.name, cache_dir):
        raise PresetPreparing(
            f"tokenizer: the preset {preset.name} is still being prepared by the set-up step (it runs in the "
            "background after the server starts); it is ready in a minute or two", field="tokenizer")
    return preset.loaded(cache_dir)


def load_compiled(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Any:
    """A list-order preset's compiled list (precompiled when the cache has it); None for the library's order."""
    return get_preset(name).compiled(cache_dir)


def is_prepared(cache_dir: str | os.PathLike[str], name: str) -> bool:
    return get_preset(name).prepared_in(cache_dir)


def prepare(cache_dir: str | os.PathLike[str], names: tuple[str, ...] | None = None) -> dict[str, float]:
    """Every preset (or `names`) converted into `cache_dir`; seconds per preset (see openai.prepare and
    open_models.prepare: each holds one preset at a time)."""
    spent: dict[str, float] = {}
    for name in names or PRESET_NAMES:
        spent.update(get_preset(name).prepare_in(cache_dir))
    return spent


def make_tables(tok: LoadedTokenizer, compiled: Any = None) -> None:
    """What a preset read from its stored form leaves to its first encodes, made now (for a server, which
    makes it once before it serves, and before gunicorn forks): the whole-token table of `compiled`, and
    the pair map and new ids of a library-order model. The Python API leaves them to first use."""
    if compiled is not None and getattr(compiled, "whole_deferred", False):
        _ = compiled.whole
    model = tok.built.peek(LIBRARY_MODEL)
    if model is not None:
        model.merges.make_tables()


def clear_caches() -> None:
    openai.clear_caches()
    open_models.clear_caches()


__all__ = [
    "CatalogPreset", "PREPARING_MARKER", "PRESETS", "PRESET_NAMES", "PRESET_RULES", "PresetPreparing", "VENDORS",
    "clear_caches", "get_preset", "make_tables", "is_installed", "is_open_model", "is_prepared", "is_preparing", "is_preset",
    "load_compiled", "load_preset", "marked_preparing", "prepare", "unknown_preset",
]
