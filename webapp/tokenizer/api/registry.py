"""Encodings by name: `get_encoding` (tiktoken's defaults), `get_tokenizer` (the playground's), one cache.

Presets by name or alias, tiktoken's OpenAI encoding names, model names, and opened files by id
(through the resolvers the web layer registers). What it does not do: encode (encoding.py).
"""

from __future__ import annotations

import copyreg
import threading
from typing import Any, Callable, Mapping

from webapp.tokenizer.api.encoding import DEFAULTS, PLAYGROUND, Encoding, library_defaults
from webapp.tokenizer.api.parts import preset_parts, with_special
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets import catalog
from webapp.tokenizer.presets import openai as presets

Resolver = Callable[[str], Any]  # id -> LoadedTokenizer, or None when unknown

# --------------------------------------------------------------------------
# The OpenAI encodings tiktoken 0.14.0 lists, as presets plus special tokens


def _harmony_special_tokens() -> dict[str, int]:
    """o200k_harmony: o200k_base's special tokens, its chat-format tokens, the rest reserved."""
    named = {
        "<|startoftext|>": 199998,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|call|>": 200012,
    }
    taken = set(named.values())
    reserved = {f"<|reserved_{i}|>": i for i in range(200000, 201088) if i not in taken}
    return {**presets.get_preset("o200k_base").special_tokens, **named, **reserved}


def _p50k_edit_special_tokens() -> dict[str, int]:
    """p50k_edit: p50k_base's end of text, and the three fill-in-the-middle tokens after its ranks."""
    fim = {presets.FIM_PREFIX: 50281, presets.FIM_MIDDLE: 50282, presets.FIM_SUFFIX: 50283}
    return {**presets.get_preset("p50k_base").special_tokens, **fim}


#: tiktoken's encoding name -> (the preset with its ranks, merges and pattern; its own special tokens or None).
OPENAI_ENCODINGS: dict[str, tuple[str, Mapping[str, int] | None]] = {
    "gpt2": ("r50k_base", None),
    "r50k_base": ("r50k_base", None),
    "p50k_base": ("p50k_base", None),
    "p50k_edit": ("p50k_base", _p50k_edit_special_tokens()),
    "cl100k_base": ("cl100k_base", None),
    "o200k_base": ("o200k_base", None),
    "o200k_harmony": ("o200k_base", _harmony_special_tokens()),
}

# Model names, by encoding (tiktoken 0.14.0's tables).
_MODELS: dict[str, tuple[str, ...]] = {
    "o200k_base": ("o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"),
    "cl100k_base": (
        "gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
        "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large",
    ),
    "p50k_base": (
        "text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001",
        "code-cushman-002", "code-cushman-001", "davinci-codex", "cushman-codex",
    ),
    "p50k_edit": ("text-davinci-edit-001", "code-davinci-edit-001"),
    "r50k_base": (
        "text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001",
        "davinci", "curie", "babbage", "ada",
        "text-similarity-davinci-001", "text-similarity-curie-001", "text-similarity-babbage-001",
        "text-similarity-ada-001", "text-search-davinci-doc-001", "text-search-curie-doc-001",
        "text-search-babbage-doc-001", "text-search-ada-doc-001",
        "code-search-babbage-code-001", "code-search-ada-code-001",
    ),
    "gpt2": ("gpt2", "gpt-2"),
}
# Model-name prefixes (dated and fine-tuned variants), by encoding.
_MODEL_PREFIXES: dict[str, tuple[str, ...]] = {
    "o200k_base": (
        "o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-", "ft:gpt-4o",
    ),
    "cl100k_base": (
        "gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-",
        "ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002", "ft:babbage-002",
    ),
    "o200k_harmony": ("gpt-oss-",),
}
MODEL_TO_ENCODING: dict[str, str] = {model: enc for enc, models in _MODELS.items() for model in models}
# Longest first: where two prefixes fit a name ("ft:gpt-4o..." and "ft:gpt-4"), the longer one decides.
MODEL_PREFIX_TO_ENCODING: tuple[tuple[str, str], ...] = tuple(
    sorted(((p, enc) for enc, ps in _MODEL_PREFIXES.items() for p in ps), key=lambda item: -len(item[0]))
)


# --------------------------------------------------------------------------
# The one cache


def _one(_key: tuple[str, str], _encoding: Encoding) -> int:
    return 1


#: Named encodings by (name, defaults), made once per process and shared: one per OpenAI encoding and
#: preset under tiktoken's or its library's defaults, and one per preset under the playground's
#: (`get_tokenizer`), which shares the first's stages and decode table (about 10 MB for o200k_base,
#: tracemalloc). 64 entries at most, so in practice nothing is evicted.
ENCODINGS: BoundedCache[tuple[str, str], Encoding] = BoundedCache(64, 64, weigh=_one, name="api.encodings")
_LOCK = threading.Lock()
_RESOLVERS: list[Resolver] = []


def _cached(key: tuple[str, str], make: Callable[[], Encoding]) -> Encoding:
    found = ENCODINGS.get(key)
    if found is not None:
        return found
    made = make()
    with _LOCK:
        found = ENCODINGS.get(key)
        if found is None:
            ENCODINGS.put(key, made)
        return found or made


def register_resolver(resolver: Resolver) -> None:
    """Let `get_tokenizer` and `get_encoding` open ids they do not know (the web layer's stored files)."""
    if resolver not in _RESOLVERS:
        _RESOLVERS.append(resolver)


def _resolve(name: str) -> LoadedTokenizer | None:
    for resolver in _RESOLVERS:
        loaded: LoadedTokenizer | None = resolver(name)
        if loaded is not None:
            return loaded
    return None


def list_encoding_names() -> list[str]:
    """The names `get_encoding` knows: tiktoken's OpenAI encodings, then any other presets."""
    others = [name for name in catalog.PRESET_NAMES if name not in OPENAI_ENCODINGS]
    return [*OPENAI_ENCODINGS, *others]


def _unknown_encoding(name: str) -> ValueError:
    return ValueError(
        f"get_encoding: there is no encoding called {name[:60]!r}; the encodings are "
        f"{', '.join(list_encoding_names())} (an opened file's id works too, once the web app registered it)"
    )


def _build(name: str) -> Encoding:
    preset, special = OPENAI_ENCODINGS.get(name, (name, None))
    loaded, compiled = preset_parts(preset)
    if special is not None:
        loaded = with_special(loaded, special)
    return Encoding.from_loaded(name, loaded, compiled)


def get_encoding(encoding_name: str) -> Encoding:
    """An encoding by name ("cl100k_base", "gpt2", ...; see list_encoding_names) or an opened file's id.

    Arguments `encode` is not given follow the file's library: tiktoken's, or `tokenizers`' for a tokenizer.json.

    >>> from webapp.tokenizer import get_encoding
    >>> enc = get_encoding("cl100k_base")
    >>> enc, enc.n_vocab, enc.eot_token
    (<Encoding 'cl100k_base'>, 100277, 100257)
    >>> get_encoding("cl100k_base") is enc
    True
    >>> get_encoding("gpt5")
    Traceback (most recent call last):
    ValueError: get_encoding: there is no encoding called 'gpt5'; ...
    """
    if not isinstance(encoding_name, str):
        raise ValueError(f"get_encoding takes an encoding name (a str), got {type(encoding_name).__name__}")
    if encoding_name in OPENAI_ENCODINGS or encoding_name in catalog.PRESET_NAMES:
        return _cached((encoding_name, "library"), lambda: _build(encoding_name))
    if catalog.is_preset(encoding_name):  # an alias of a preset that is not one of tiktoken's names
        return get_encoding(catalog.get_preset(encoding_name).name)
    loaded = _resolve(encoding_name)
    if loaded is None:
        raise _unknown_encoding(encoding_name)
    return Encoding.from_loaded(encoding_name, loaded)


def get_tokenizer(name_or_id: str) -> Encoding:
    """A preset by name ("cl100k_base", "gpt2", ...) or an opened file by its id, with the playground's defaults:
    special-token text is text unless allowed, `allowed_special` a list of names, nothing added.

    >>> from webapp.tokenizer import get_tokenizer
    >>> tok = get_tokenizer("cl100k_base")
    >>> tok.name, tok.level, tok.n_vocab
    ('cl100k_base', 'bytes', 100277)
    >>> get_tokenizer("gpt5")
    Traceback (most recent call last):
    webapp.tokenizer.errors.TokenizerError: tokenizer: no preset is called 'gpt5'; ...
    """
    if catalog.is_preset(name_or_id):
        canonical = catalog.get_preset(name_or_id).name
        return _cached((canonical, PLAYGROUND.name), lambda: get_encoding(canonical).with_defaults(PLAYGROUND))
    loaded = _resolve(str(name_or_id))
    if loaded is None:
        raise catalog.unknown_preset(name_or_id)  # the message lists the preset names
    return Encoding.from_loaded(str(name_or_id), loaded, defaults=PLAYGROUND)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding a model uses: its exact name, else the longest known prefix. KeyError if neither."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, encoding in MODEL_PREFIX_TO_ENCODING:
        if model_name.startswith(prefix):
            return encoding
    raise KeyError(
        f"encoding_for_model: no encoding is known for the model {model_name[:80]!r}; "
        "name the encoding with get_encoding (see list_encoding_names)"
    )


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding of a model ("gpt-4o", "gpt-3.5-turbo-0613", ...). KeyError for an unknown model."""
    return get_encoding(encoding_name_for_model(model_name))


# --------------------------------------------------------------------------
# Pickling: a cached encoding by its name (as tiktoken's), any other by its tokenizer


def _reduce(encoding: Encoding) -> tuple[Any, ...]:
    kind = "library" if encoding.defaults is library_defaults(encoding.loaded) else encoding.defaults.name
    if ENCODINGS.get((encoding.name, kind)) is encoding:
        return (_named, (encoding.name, kind))
    return (_restore, (encoding.name, encoding.loaded, encoding.defaults.name))


def _named(name: str, kind: str) -> Encoding:
    return get_tokenizer(name) if kind == PLAYGROUND.name else get_encoding(name)


def _restore(name: str, loaded: LoadedTokenizer, defaults: str) -> Encoding:
    return Encoding.from_loaded(name, loaded, defaults=DEFAULTS[defaults])


copyreg.pickle(Encoding, _reduce)

__all__ = [
    "ENCODINGS", "Encoding", "MODEL_PREFIX_TO_ENCODING", "MODEL_TO_ENCODING", "OPENAI_ENCODINGS",
    "encoding_for_model", "encoding_name_for_model", "get_encoding", "get_tokenizer", "list_encoding_names",
    "register_resolver",
]
