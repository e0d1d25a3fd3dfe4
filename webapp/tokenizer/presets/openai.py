"""The real OpenAI tokenizers as presets: r50k_base (alias gpt2), p50k_base, cl100k_base, o200k_base.

What it does not do: encode (see stages/ and api/),
Flask, or any network access.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, TypeVar

from webapp.tokenizer.caches import BoundedCache, value_length
from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges, compile_byte_merges
from webapp.tokenizer.core.list_order.precompiled import PRECOMPILED_VERSION, find_whole_tokens
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.building import build_byte_level
from webapp.tokenizer.formats.tiktoken_ranks import recover_rank_merges
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets.cache import get_cache_dir, resolve, set_cache_dir, write_atomic
from webapp.tokenizer.presets.openai_form import FORM_VERSION, dumps_preset_form, loads_preset_form
from webapp.tokenizer.pretokenize.patterns import PATTERNS

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

#: The npm package (and version, pinned in package.json) that ships the ranks.
JS_TIKTOKEN_VERSION = "1.0.21"
INSTALL_HINT = "run `make setup` (or `npm ci`) in the project directory to install the pinned js-tiktoken package"


@dataclass(frozen=True)
class Preset:
    """One real tokenizer: its names, how it splits text, its special tokens, its rank file's hash
    (a protocol.CatalogPreset: vendor OpenAI, loaded and prepared by this module).
    """

    name: str
    scheme: str
    sha256: str
    special_tokens: Mapping[str, int]
    n_ranks: int
    n_vocab: int
    aliases: tuple[str, ...] = ()
    rank_file: str = ""  # the js-tiktoken file stem; defaults to `name`
    description: str = ""

    @property
    def pattern(self) -> str:
        return PATTERNS[self.scheme]

    @property
    def vendor(self) -> str:
        return "OpenAI"

    # What the catalog asks of every preset (protocol.CatalogPreset), answered by this module's functions.

    def installed(self) -> bool:
        return is_installed(self.rank_file or self.name)

    def loaded(self, cache_dir: str | os.PathLike[str] | None = None) -> LoadedTokenizer:
        return load_preset(self.name, cache_dir)

    def compiled(self, cache_dir: str | os.PathLike[str] | None = None) -> CompiledByteMerges:
        return load_compiled(self.name, cache_dir)

    def prepared_in(self, cache_dir: str | os.PathLike[str]) -> bool:
        return is_prepared(cache_dir, self.name)

    def prepare_in(self, cache_dir: str | os.PathLike[str]) -> dict[str, float]:
        return prepare(cache_dir, (self.name,))

    def describe(self) -> dict[str, object]:
        """JSON-able facts about the preset (for listings)."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "description": self.description,
            "pattern": self.pattern,
            "pretokenize": self.scheme,
            "special_tokens": dict(self.special_tokens),
            "ranks": self.n_ranks,
            "vocab_size": self.n_ranks + len(self.special_tokens),  # tokens, special ones included
            "n_vocab": self.n_vocab,  # the largest id plus one, as tiktoken's n_vocab
            "sha256": self.sha256,
            "source": f"npm js-tiktoken {JS_TIKTOKEN_VERSION}",
        }


# The SHA-256 values and the special tokens with their ids are the ones in
# tiktoken's `tiktoken_ext/openai_public.py` (tiktoken 0.14.0), where each
# encoding's constructor passes `expected_hash` for its published rank file.
# p50k_base's special tokens are those of tiktoken's `p50k_base` (its FIM
# tokens belong to the separate `p50k_edit` encoding).
_PRESET_LIST: tuple[Preset, ...] = (
    Preset(
        name="r50k_base",
        aliases=("gpt2",),
        scheme="gpt2",
        sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        special_tokens={ENDOFTEXT: 50256},
        n_ranks=50256,
        n_vocab=50257,
        description="GPT-2 and GPT-3",
    ),
    Preset(
        name="p50k_base",
        scheme="gpt2",
        sha256="94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        special_tokens={ENDOFTEXT: 50256},
        n_ranks=50280,
        n_vocab=50281,
        description="Codex, text-davinci-002/003",
    ),
    Preset(
        name="cl100k_base",
        scheme="cl100k",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        special_tokens={
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
        n_ranks=100256,
        n_vocab=100277,
        description="GPT-3.5 and GPT-4",
    ),
    Preset(
        name="o200k_base",
        scheme="o200k",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        special_tokens={ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
        n_ranks=199998,
        n_vocab=200019,
        description="GPT-4o",
    ),
)

PRESET_NAMES: tuple[str, ...] = tuple(p.name for p in _PRESET_LIST)
#: Every accepted name, aliases included -> its preset.
PRESETS: dict[str, Preset] = {
    **{p.name: p for p in _PRESET_LIST},
    **{alias: p for p in _PRESET_LIST for alias in p.aliases},
}
ALIASES: dict[str, str] = {alias: p.name for p in _PRESET_LIST for alias in p.aliases}


class PresetMissing(TokenizerError):
    """The preset's rank file is not installed (or not readable)."""


def is_preset(name: object) -> bool:
    return isinstance(name, str) and name in PRESETS


P = TypeVar("P")


def get_preset(name: object) -> Preset:
    """The preset for a name or alias, or a TokenizerError listing the names."""
    return find_preset(name, PRESETS)


def find_preset(name: object, presets: Mapping[str, P]) -> P:
    """The preset of `presets` for a name, or a TokenizerError listing their names (catalog.py's too)."""
    if isinstance(name, str) and name in presets:
        return presets[name]
    raise unknown_preset(name, presets)


def unknown_preset(name: object, presets: Mapping[str, object] | None = None) -> TokenizerError:
    """The error for a name that is no preset (it lists the names there are: these, or `presets`)."""
    shown = name if isinstance(name, str) and len(name) <= 40 else "that"
    names = sorted(PRESETS if presets is None else presets)
    return TokenizerError(f"tokenizer: no preset is called {shown!r}; the presets are {', '.join(names)}",
                          field="tokenizer")


#: The project's folder (resolved once: Counts asks whether each preset is installed on every count).
PROJECT_DIR = Path(__file__).resolve().parents[3]


def ranks_dir() -> Path:
    """Where js-tiktoken's rank files are: PLAYGROUND_JS_TIKTOKEN_RANKS, else the project's node_modules."""
    override = os.environ.get("PLAYGROUND_JS_TIKTOKEN_RANKS")
    if override:
        return Path(override)
    return PROJECT_DIR / "node_modules" / "js-tiktoken" / "dist" / "ranks"


def is_installed(name: str) -> bool:
    """Whether the preset's rank file is where `ranks_dir()` looks (nothing is read)."""
    return (ranks_dir() / f"{name}.js").is_file()


def _rank_lines_from_js(source: str, where: str) -> list[str]:
    """The `base64 rank` lines of tiktoken's file, rebuilt from a js-tiktoken ranks module."""
    head = "export default "
    body = source.strip()
    if not body.startswith(head):
        raise TokenizerError(f"tokenizer: {where} does not look like a js-tiktoken ranks module", field="tokenizer")
    try:
        data = json.loads(body[len(head):].rstrip(";"))
        packed = data["bpe_ranks"]
    except (ValueError, KeyError, TypeError):
        raise TokenizerError(f"tokenizer: {where} has no readable bpe_ranks", field="tokenizer") from None
    lines: list[str] = []
    for line in packed.split("\n"):
        if not line:
            continue
        parts = line.split(" ")
        # parts[0] is a label js-tiktoken ignores; parts[1] the first rank of the line.
        if len(parts) < 2 or not (parts[1].isascii() and parts[1].isdigit()):
            raise TokenizerError(f"tokenizer: {where} has a malformed bpe_ranks line", field="tokenizer")
        first = int(parts[1])
        lines.extend(f"{token} {first + i}\n" for i, token in enumerate(parts[2:]))
    return lines


def rank_file_bytes(name: str) -> bytes:
    """tiktoken's rank file for a preset, rebuilt from js-tiktoken and checked against its SHA-256."""
    preset = get_preset(name)
    path = ranks_dir() / f"{preset.rank_file or preset.name}.js"
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        raise PresetMissing(
            f"tokenizer: the preset {preset.name} is not installed ({path} is missing); {INSTALL_HINT}",
            field="tokenizer",
        ) from None
    content = "".join(_rank_lines_from_js(source, str(path))).encode("ascii")
    digest = hashlib.sha256(content).hexdigest()
    if digest != preset.sha256:
        raise TokenizerError(
            f"tokenizer: the installed ranks of {preset.name} ({path}) have SHA-256 {digest}, not the "
            f"{preset.sha256} tiktoken publishes; {INSTALL_HINT}",
            field="tokenizer",
        )
    return content


def parse_rank_bytes(content: bytes) -> dict[bytes, int]:
    """{token: rank} from a checked rank file (ours, so only light checks)."""
    ranks: dict[bytes, int] = {}
    for line in content.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


_LOCK = threading.Lock()
# The in-process caches of the presets, keyed by canonical name. Bound: at most one
# entry per preset (4) and, in weight, every preset's ranks or rules once
# (PRESET_RANKS, 400,790 in all): about 46 MB for the ranks of all four and 96 MB
# for their LoadedTokenizers (tracemalloc), so the bound is exactly "every preset
# once" and a preset is never dropped and converted again while the process runs.
PRESET_RANKS = sum(preset.n_ranks for preset in _PRESET_LIST)
_RANKS: BoundedCache[str, dict[bytes, int]] = BoundedCache(
    len(PRESET_NAMES), PRESET_RANKS, weigh=value_length, name="presets.ranks"
)
_LOADED: BoundedCache[str, LoadedTokenizer] = BoundedCache(
    len(PRESET_NAMES), PRESET_RANKS, weigh=lambda _name, tok: tok.rule_count, name="presets.loaded"
)
def load_ranks(name: str) -> dict[bytes, int]:
    """{token bytes: rank} of a preset (or alias), checked against tiktoken's hash; cached.

    The dict is shared: treat it as read-only (copy it before changing it).
    """
    preset = get_preset(name)
    with _LOCK:
        cached = _RANKS.get(preset.name)
    if cached is not None:
        return cached
    content = rank_file_bytes(preset.name)  # PresetMissing / hash errors pass through as they are
    try:
        ranks = parse_rank_bytes(content)
    except (ValueError, binascii.Error):
        raise TokenizerError(f"tokenizer: the ranks of {preset.name} cannot be read", field="tokenizer") from None
    with _LOCK:
        _RANKS.put(preset.name, ranks)
    return ranks


def cache_file_name(name: str) -> str:
    """The converted form's file name (openai_form.py): the preset, its rank file's hash, the form versions."""
    preset = get_preset(name)
    return f"preset-{preset.name}-{preset.sha256[:16]}-c{PRECOMPILED_VERSION}-f{FORM_VERSION}.npz"


def convert_preset(name: str) -> LoadedTokenizer:
    """The preset as a LoadedTokenizer: merges recovered from the ranks, ids = ranks."""
    preset = get_preset(name)
    ranks = load_ranks(preset.name)
    triples = recover_rank_merges(ranks)
    rules = [(ranks[a], ranks[b], ranks[t]) for a, b, t in triples]
    file_bytes = {rank: token for token, rank in ranks.items()}
    return build_byte_level(
        file_bytes,
        rules,
        source="preset",
        pretokenize=preset.scheme,
        special=preset.special_tokens,
        notes=[f"{preset.name}: tiktoken's published ranks (SHA-256 checked), from js-tiktoken {JS_TIKTOKEN_VERSION}"],
    )


def load_preset(name: str, cache_dir: str | os.PathLike[str] | None = None) -> LoadedTokenizer:
    """A preset as a LoadedTokenizer, converted once per process and, with a cache folder, once per machine."""
    return _load(name, cache_dir)[0]


def load_compiled(name: str, cache_dir: str | os.PathLike[str] | None = None) -> CompiledByteMerges:
    """The preset's compiled merge list, once per process; with a cache folder, precompiled once per machine."""
    preset = get_preset(name)
    with _LOCK:
        hit = _COMPILED.get(preset.name)
    if hit is not None:
        return hit
    tok, compiled = _load(preset.name, cache_dir)
    if compiled is None:
        compiled = compile_byte_merges(list(tok.merges))
        compiled.share_rules(tok.merges)  # (one tuple of rules for both)
    with _LOCK:
        if _COMPILED.get(preset.name) is not compiled:  # (`_load` may have stored it: a second store of a
            _COMPILED.put(preset.name, compiled)         # full cache's key would evict another preset)
    return compiled


def _load(name: str, cache_dir: str | os.PathLike[str] | None) -> tuple[LoadedTokenizer, CompiledByteMerges | None]:
    """The preset's tokenizer and, when read or written as a file, its precompiled list (kept in memory)."""
    preset = get_preset(name)
    with _LOCK:
        tok = _LOADED.get(preset.name)
        compiled = _COMPILED.get(preset.name)
    if tok is not None:
        return tok, compiled
    where = resolve(cache_dir)
    path = where / cache_file_name(preset.name) if where is not None else None
    found = _read_form(preset, path) if path is not None else None
    if found is not None:
        tok, compiled = found
    else:
        tok = convert_preset(preset.name)
        if path is not None:  # precompiled once, for every later process
            compiled = compile_byte_merges(list(tok.merges))
            find_whole_tokens(compiled)
            compiled.share_rules(tok.merges)
            write_atomic(path, dumps_preset_form(tok, compiled, preset.name, preset.sha256))
    with _LOCK:
        _LOADED.put(preset.name, tok)
        if compiled is not None and _COMPILED.get(preset.name) is None:
            _COMPILED.put(preset.name, compiled)
    return tok, compiled


def _read_form(preset: Preset, path: Path) -> tuple[LoadedTokenizer, CompiledByteMerges] | None:
    """The preset's form from `path`; None when it is missing, damaged or stale (it is then made again)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not (ranks_dir() / f"{preset.rank_file or preset.name}.js").is_file():
        rank_file_bytes(preset.name)  # raises PresetMissing: the package is the source of truth
    try:
        return loads_preset_form(data, preset.name, preset.sha256, preset.special_tokens, preset.n_ranks - 256,
                                 preset.scheme)
    except (ValueError, KeyError, TypeError, IndexError, OSError, EOFError, zipfile.BadZipFile):
        return None  # (ValueError: what the form's reader says; the others: what a damaged zip can raise)


# Compiled preset lists: the same bound as _RANKS / _LOADED (one per preset, every
# preset's rules once; about 85 MB for all four precompiled, tracemalloc).
_COMPILED: BoundedCache[str, CompiledByteMerges] = BoundedCache(
    len(PRESET_NAMES), PRESET_RANKS, weigh=value_length, name="presets.compiled"
)


def compiled_file_name(name: str) -> str:
    """The precompiled form's file name: the same file as the converted form (openai_form.py holds both)."""
    return cache_file_name(name)


def prepare(cache_dir: str | os.PathLike[str], names: tuple[str, ...] | None = None) -> dict[str, float]:
    """Convert every preset (or `names`) and precompile it into `cache_dir`, ahead of any request."""
    spent: dict[str, float] = {}
    for name in names or PRESET_NAMES:
        canonical = get_preset(name).name
        started = time.perf_counter()
        load_compiled(canonical, cache_dir)  # writes the converted and precompiled form
        spent[canonical] = time.perf_counter() - started
        clear_caches()
    return spent


def is_prepared(cache_dir: str | os.PathLike[str], name: str) -> bool:
    """Is the preset's converted and precompiled file in `cache_dir` (under today's name)?"""
    return (Path(cache_dir) / cache_file_name(name)).is_file()


def clear_caches() -> None:
    """Forget the in-process ranks and converted presets (tests)."""
    with _LOCK:
        _RANKS.clear()
        _LOADED.clear()
        _COMPILED.clear()


__all__ = [
    "ALIASES", "ENDOFPROMPT", "ENDOFTEXT", "FIM_MIDDLE", "FIM_PREFIX", "FIM_SUFFIX", "INSTALL_HINT",
    "JS_TIKTOKEN_VERSION", "PRESETS", "PRESET_NAMES", "PRESET_RANKS", "Preset", "PresetMissing", "cache_file_name",
    "clear_caches", "compiled_file_name", "convert_preset", "get_cache_dir", "get_preset", "is_prepared", "is_preset",
    "load_compiled", "load_preset", "load_ranks", "parse_rank_bytes", "prepare", "rank_file_bytes", "ranks_dir", "set_cache_dir",
    "find_preset",
    "unknown_preset",
    "write_atomic",
]
