"""Where the converted presets are kept on disk, and how a file gets there safely.

What it does not do: read, convert or name any preset file, or delete old ones.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path
from typing import Mapping

#: The environment variable naming the preset cache folder ("" = memory only).
CACHE_ENV = "PLAYGROUND_PRESET_CACHE"
#: The folder under the user's cache folder.
USER_CACHE_SUBDIR = Path("bpe-playground") / "presets"
#: The project's folder (the one holding the `webapp` package).
PROJECT_DIR = Path(__file__).resolve().parents[3]


class PresetCacheWarning(RuntimeWarning):
    """The preset cache folder cannot be written: presets are kept in memory only."""


_CHOSEN: list[Path | None] = [None]  # set_cache_dir's folder, or None for the default
_LOCK = threading.Lock()
_WARNED: set[str] = set()  # folders already warned about in this process


def set_cache_dir(path: str | os.PathLike[str] | None) -> None:
    """Keep converted presets in `path` from now on; None goes back to the default (see the module doc)."""
    _CHOSEN[0] = Path(path) if path else None


def is_checkout(project: Path = PROJECT_DIR) -> bool:
    """Is the package run from the project's checkout (its Makefile and webapp/ side by side)?"""
    return (project / "Makefile").is_file() and (project / "webapp" / "__init__.py").is_file()


def user_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/bpe-playground/presets`, else `~/.cache/bpe-playground/presets`."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path(env.get("HOME") or Path.home()) / ".cache"
    return root / USER_CACHE_SUBDIR


def default_cache_dir(environ: Mapping[str, str] | None = None,
                      project: Path = PROJECT_DIR) -> Path | None:
    """The folder without `set_cache_dir`: the environment variable, the checkout's, or the user's; None = memory."""
    env = os.environ if environ is None else environ
    if CACHE_ENV in env:
        named = env[CACHE_ENV]
        return Path(named).expanduser() if named else None
    if is_checkout(project):
        return project / "instance" / "presets"
    return user_cache_dir(env)


def get_cache_dir() -> Path | None:
    """Where converted presets are kept now (None: in memory only)."""
    chosen = _CHOSEN[0]
    return chosen if chosen is not None else default_cache_dir()


def resolve(cache_dir: str | os.PathLike[str] | None) -> Path | None:
    """The folder a call uses: its own `cache_dir` when given, else `get_cache_dir()`."""
    return Path(cache_dir) if cache_dir else get_cache_dir()


def write_atomic(path: Path, data: bytes) -> bool:
    """Write `data` to `path` through a temporary file and a rename; False (and a warning) if it cannot."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
        return True
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        _warn_unwritable(path.parent, exc)
        return False


def _warn_unwritable(folder: Path, exc: OSError) -> None:
    key = str(folder)
    with _LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    reason = exc.strerror or type(exc).__name__
    warnings.warn(
        f"preset cache: cannot write to {folder} ({reason}); converted presets are kept in this process's "
        f"memory only, so the next process converts them again. Set {CACHE_ENV} to a folder you can write "
        f"(or to an empty value to keep them in memory without this warning).",
        PresetCacheWarning,
        stacklevel=3,
    )


def forget_warnings() -> None:
    """Warn again about folders already warned about (tests)."""
    with _LOCK:
        _WARNED.clear()


__all__ = [
    "CACHE_ENV", "PROJECT_DIR", "PresetCacheWarning", "USER_CACHE_SUBDIR", "default_cache_dir", "forget_warnings",
    "get_cache_dir", "is_checkout", "resolve", "set_cache_dir", "user_cache_dir", "write_atomic",
]
