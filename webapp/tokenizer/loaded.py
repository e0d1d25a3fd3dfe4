"""`LoadedTokenizer`: any imported tokenizer in the playground's terms.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
import operator
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, Hashable, Iterable, TypeVar, Union

import numpy as np

from webapp.tokenizer.core.byte_decode import decode, join_texts
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.core.alphabet import bytes_to_token

_T = TypeVar("_T")
#: The two fields a stored form may leave to be made on first use (`LoadedTokenizer.deferred`).
DEFERRABLE = ("merges", "vocab")


class Contents:
    """The values of a tokenizer's `merges` and `vocab`, each given or made on first read."""

    __slots__ = ("_values", "_makers", "_lock", "rule_count")

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = dict(values or {})
        self._makers: dict[str, Callable[[], Any]] = {}
        self._lock = threading.Lock()
        self.rule_count: int | None = None  # the number of merges, known before they are made (deferred only)

    def get(self, name: str) -> Any:
        if name not in self._values:
            with self._lock:
                if name not in self._values:
                    self._values[name] = self._makers[name]()
                    del self._makers[name]  # (only once made: a maker that raised is tried again)
        return self._values[name]

    def set(self, name: str, value: Any) -> None:
        self._values[name] = value

    def defer(self, makers: dict[str, Callable[[], Any]], rule_count: int) -> None:
        """Forget the given values of `makers`' fields: each is made by its maker when first read."""
        for name in makers:
            del self._values[name]
        self._makers.update(makers)
        self.rule_count = rule_count

    def pending(self) -> frozenset[str]:
        """The fields not made yet."""
        return frozenset(self._makers)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Contents, ({name: self.get(name) for name in DEFERRABLE},))


class _Deferrable:
    """`merges` or `vocab` of a `LoadedTokenizer`: kept in its `contents` (see `Contents`)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            raise AttributeError(self.name)  # (read by the dataclass as "no default")
        return obj.contents.get(self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        obj.contents.set(self.name, value)


@dataclass(frozen=True)
class Part(Generic[_T]):
    """The typed name of one thing built from a tokenizer's fields: `Built.get(part, make)` gives a `_T`.

    Each is defined beside the type it holds (stages/models.py's `LIBRARY_MODEL`, say); `variant`
    tells apart the parts of one kind (the stages split by each page scheme)."""

    name: str
    variant: Hashable = None


class Built:
    """What encoding makes from a loaded tokenizer's fields (its stages, the library model), kept with it."""

    __slots__ = ("_lock", "_made")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._made: dict[Part[Any], Any] = {}

    def get(self, part: Part[_T], make: Callable[[], _T]) -> _T:
        """The value of `part`, made by `make` the first time."""
        found = self._made.get(part)
        if found is None:
            with self._lock:
                found = self._made.get(part)
                if found is None:
                    found = self._made[part] = make()
        return found  # (kept under its part: a _T)

    def peek(self, part: Part[_T]) -> _T | None:
        """The value of `part`, or None when none is made yet."""
        return self._made.get(part)

    def keep(self, part: Part[_T], value: _T) -> None:
        """Keep an already made value (a preset's precompiled model, say)."""
        with self._lock:
            self._made[part] = value

    def carry(self, other: "Built", part: Part[_T]) -> None:
        """Keep `other`'s value of `part` too, when it has one (a copy of a tokenizer whose fields it reads)."""
        value = other.peek(part)
        if value is not None:
            self.keep(part, value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Built, ())


@dataclass(frozen=True)
class LoadedTokenizer:
    """A tokenizer in the playground's terms."""

    # (first, and not an argument: `__init__` sets `merges` and `vocab` into it)
    contents: Contents = field(default_factory=Contents, init=False, compare=False, repr=False)
    level: str
    if TYPE_CHECKING:
        merges: tuple[Any, ...]
        vocab: dict[Any, Any]
    else:
        merges: tuple[Any, ...] = _Deferrable()
        vocab: dict[Any, Any] = _Deferrable()
    source: str = "seed"  # the playground JSON format's old name, kept in stored ids (see formats/playground.py)
    pretokenize: str = "none"
    id_map: dict[int, int] = field(default_factory=dict)
    unknown_bytes: frozenset[int] = frozenset()
    unk_id: int | None = None
    special_tokens: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # A tokenizer.json's normalizer / pre-tokenizer / decoder / added tokens as
    # hf/pipeline.py describes them (canonical JSON; "" for other formats).
    pipeline: str = ""
    # A tokenizer_config.json's chat template opened beside the file (webapp/tokenizer/chat/templates.py's
    # ChatTemplate as canonical JSON; "" for none).
    chat: str = ""
    # A tokenizer.json's BPE model options (models/library.py, canonical JSON): its merges follow the
    # `tokenizers` library's order, not the playground's seed order. "" for the seed order.
    model: str = ""
    # What encoding builds from the fields above (see Built).
    built: Built = field(default_factory=Built, init=False, compare=False, repr=False)

    @property
    def unit(self) -> Unit:
        """What the rules work on, bytes or characters, with what differs between the two (`ByteUnit`)."""
        return UNITS[self.level]

    @property
    def library_order(self) -> bool:
        """Do the merges fire in the library's order (a Hugging Face file) rather than list order?"""
        return bool(self.model)

    @classmethod
    def deferred(
        cls, makers: dict[str, Callable[[], Any]], rule_count: int, **fields: Any
    ) -> "LoadedTokenizer":
        """A tokenizer whose `merges` and / or `vocab` (the keys of `makers`) are made on first use."""
        unknown = set(makers) - set(DEFERRABLE)
        if unknown:
            raise ValueError(f"only {', '.join(DEFERRABLE)} can be deferred, not {', '.join(sorted(unknown))}")
        made = cls(**{"merges": (), "vocab": {}, **fields})
        made.contents.defer(makers, rule_count)  # (the placeholders above are forgotten)
        return made

    @property
    def rule_count(self) -> int:
        count = self.contents.rule_count
        return count if count is not None else len(self.merges)

    def file_ids(self, ids: Iterable[int]) -> list[int]:
        """Playground ids -> the file's ids (bytes it has no token for: unk or dropped)."""
        mapping = self.id_map
        unknown = self.unknown_bytes
        if not unknown:  # the usual case: one C-level pass
            return list(map(mapping.get, ids, ids)) if mapping else list(ids)
        out: list[int] = []
        for i in ids:
            if i in unknown:
                if self.unk_id is not None:
                    out.append(self.unk_id)
                continue
            out.append(mapping.get(i, i))
        return out

    def file_vocab(self) -> dict[int, bytes]:
        """{file id: bytes} for the byte level: what `decode` needs for the file's ids."""
        return self.unit.file_vocab(self)

    def summary(self) -> dict[str, Any]:
        """A small JSON-able description for the UI and the API."""
        return {
            "level": self.level,
            "source": self.source,
            "rules": len(self.merges),
            "vocab": self.unit.vocab_size(self),
            "pretokenize": self.pretokenize,
            "relabelled_ids": len(self.id_map),
            "special_tokens": len(self.special_tokens),
            "notes": list(self.notes),
            "file_pipeline": _pipeline_summary(self.pipeline),
            "chat_template": bool(self.chat),
            "merge_order": "library" if self.model else "list",
        }


# --- the unit a tokenizer's rules work on ------------------------------------------------


class ByteUnit:
    """Byte-level rules: the symbols are the 256 bytes, playground ids 0..255 (see the module doc).

    Each method answers what the two units answer differently; `LoadedTokenizer.unit`
    picks the unit, so no caller asks which one it holds."""

    name = "bytes"
    #: The pages whose model can run this unit's rules (a library-order model also shows on the Bytes page).
    pages: tuple[str, ...] = ("bytes",)
    #: Can a playground scheme split the text instead of the file's own pre-tokenization?
    takes_page_scheme = True

    def file_vocab(self, tok: LoadedTokenizer) -> dict[int, bytes]:
        out = {tok.id_map.get(b, b): bytes([b]) for b in range(256) if b not in tok.unknown_bytes}
        for pid, data in tok.vocab.items():
            out[tok.id_map.get(pid, pid)] = data
        return out

    def ordinary_bytes(self, tok: LoadedTokenizer) -> dict[int, bytes]:
        """{file id: bytes} of the tokens text is merged into."""
        return tok.file_vocab()

    def page_bytes(self, tok: LoadedTokenizer) -> dict[int, bytes]:
        """{file id: bytes} the Bytes page decodes with."""
        return tok.file_vocab()

    def vocab_size(self, tok: LoadedTokenizer) -> int:
        return len(tok.vocab) + 256 - len(tok.unknown_bytes)

    def base_ids(self, tok: LoadedTokenizer) -> list[int]:
        """The file ids of the tokens no rule makes (the bytes it has a token for)."""
        return [tok.id_map.get(b, b) for b in range(256) if b not in tok.unknown_bytes]

    def spell(self, piece: str) -> str:
        """A piece of text as a library model's vocab spells it (GPT-2's byte alphabet)."""
        return bytes_to_token(piece.encode("utf-8", "surrogatepass"))

    def symbol_unit(self, offsets: str) -> str:
        """How a library model's trace measures its first symbols, for a trace in `offsets` ("bytes" or "chars")."""
        return "alphabet"

    def token_names(self, tok: LoadedTokenizer) -> dict[int, str]:
        """{file id: the token as the file's vocab spells it}."""
        return {i: bytes_to_token(b) for i, b in tok.file_vocab().items()}

    def name_lookup(self, tok: LoadedTokenizer) -> Callable[[int], str | None]:
        """A file id's spelling (None for an id it lacks), spelt only for the ids asked (a decoder's)."""
        by_id = tok.file_vocab()
        return lambda i: bytes_to_token(by_id[i]) if i in by_id else None

    def file_rule(self, tok: LoadedTokenizer, index: int) -> tuple[int, int, int]:
        """Rule `index` as (left, right, new) file ids."""
        fid = tok.id_map.get
        left, right, new = tok.merges[index]
        return fid(left, left), fid(right, right), fid(new, new)

    def file_rule_rows(self, tok: LoadedTokenizer) -> np.ndarray:
        """Every rule as a (left, right, new) row of file ids."""
        if not tok.merges:
            return np.zeros((0, 3), dtype=np.int64)
        rules = np.asarray(tok.merges, dtype=np.int64).reshape(-1, 3)
        if tok.id_map:
            relabel = np.arange(int(max(int(rules.max()), max(tok.id_map))) + 1, dtype=np.int64)
            for pid, fid in tok.id_map.items():
                relabel[pid] = fid
            rules = relabel[rules]
        return rules

    def library_parts(self, tok: LoadedTokenizer) -> tuple[dict[str, int], Any]:
        """(vocab by spelling, rules as file-id triples): what a library-order model is built from."""
        fid = tok.id_map.get
        strings = {bytes_to_token(data): i for i, data in tok.file_vocab().items()}
        return strings, [(fid(a, a), fid(b, b), fid(n, n)) for a, b, n in tok.merges]

    def own_scheme(self, tok: LoadedTokenizer) -> str | None:
        """The playground pre-tokenization the file comes with (None: it has none to offer)."""
        return tok.pretokenize

    def writes_metaspace(self, tok: LoadedTokenizer) -> bool:
        """Does the file see spaces as "\u2581" (so a trace spells its tokens so)?"""
        return False

    def join_ids(self, tok: LoadedTokenizer, ids: list[int], file_vocab: dict[int, bytes], *,
                 max_bytes: int | None = None) -> str:
        """The text of `ids` without a decoder: their bytes joined (at most `max_bytes`), then strict UTF-8."""
        return decode(ids, {i: file_vocab[i] for i in set(ids) if i in file_vocab}, max_bytes=max_bytes)


class CharUnit:
    """Character-level rules: string merges over the file's `{token: id}` vocab (see the module doc)."""

    name = "chars"
    pages: tuple[str, ...] = ("chars",)
    takes_page_scheme = False  # (split by the file's own pipeline, or not at all)

    def file_vocab(self, tok: LoadedTokenizer) -> dict[int, bytes]:
        raise ValueError("file_vocab is for byte-level tokenizers")

    def ordinary_bytes(self, tok: LoadedTokenizer) -> dict[int, bytes]:
        return {token_id: token.encode("utf-8", "surrogatepass") for token, token_id in tok.vocab.items()}

    def page_bytes(self, tok: LoadedTokenizer) -> dict[int, bytes]:
        """SentencePiece style: "\u2581" is a space (when the file writes spaces so), `<0xXX>` a byte."""
        spaces = self.writes_metaspace(tok)
        out: dict[int, bytes] = {}
        for token, token_id in tok.vocab.items():
            code = _BYTE_TOKEN.fullmatch(token)
            if code is not None:
                out[token_id] = bytes([int(code.group(1), 16)])
            else:
                out[token_id] = (token.replace("\u2581", " ") if spaces else token).encode("utf-8", "surrogatepass")
        return out

    def vocab_size(self, tok: LoadedTokenizer) -> int:
        return len(tok.vocab)

    def base_ids(self, tok: LoadedTokenizer) -> list[int]:
        return []  # (a character is a vocab entry like any other)

    def spell(self, piece: str) -> str:
        return piece

    def symbol_unit(self, offsets: str) -> str:
        return "utf8" if offsets == "bytes" else "chars"

    def token_names(self, tok: LoadedTokenizer) -> dict[int, str]:
        return {i: t for t, i in tok.vocab.items()}

    def name_lookup(self, tok: LoadedTokenizer) -> Callable[[int], str | None]:
        return self.token_names(tok).get  # (the vocab's own strings: nothing to spell)

    def file_rule(self, tok: LoadedTokenizer, index: int) -> tuple[int, int, int]:
        left, right = tok.merges[index]
        return tok.vocab[left], tok.vocab[right], tok.vocab[left + right]

    def file_rule_rows(self, tok: LoadedTokenizer) -> np.ndarray:
        """A rule naming a string the vocab lacks cannot make a token of the file: its row is -1s (so
        that row i is still rule i)."""
        get = tok.vocab.get
        rows = [(get(left), get(right), get(left + right)) for left, right in tok.merges]
        return np.asarray([(-1, -1, -1) if None in row else row for row in rows], dtype=np.int64).reshape(-1, 3)

    def library_parts(self, tok: LoadedTokenizer) -> tuple[dict[str, int], Any]:
        vocab = dict(tok.vocab)
        if max(vocab.values(), default=0) >= 1 << 62:  # (ids past int64: Python ints)
            return vocab, [(vocab[a], vocab[b], vocab[a + b]) for a, b in tok.merges]
        # (the usual case: the three columns looked up in C-level loops, into one int64 array)
        lefts, rights = zip(*tok.merges) if tok.merges else ((), ())
        get = vocab.__getitem__
        table = np.empty((len(lefts), 3), dtype=np.int64)
        for column, names in enumerate((lefts, rights, map(operator.add, lefts, rights))):
            table[:, column] = np.fromiter(map(get, names), dtype=np.int64, count=len(lefts))
        return vocab, table

    def own_scheme(self, tok: LoadedTokenizer) -> str | None:
        return None

    def writes_metaspace(self, tok: LoadedTokenizer) -> bool:
        return "\u2581" in tok.pipeline  # (a normalizer or decoder that writes spaces as it)

    def join_ids(self, tok: LoadedTokenizer, ids: list[int], file_vocab: dict[int, bytes], *,
                 max_bytes: int | None = None) -> str:
        """The tokens' strings joined (their UTF-8 added up first: at most `max_bytes`); an unknown id is named."""
        return join_texts(ids, {v: k for k, v in tok.vocab.items()}, max_bytes=max_bytes)


Unit = Union[ByteUnit, CharUnit]
UNITS: dict[str, Unit] = {"bytes": ByteUnit(), "chars": CharUnit()}
_BYTE_TOKEN = re.compile(r"<0x([0-9A-F]{2})>")


def _pipeline_summary(pipeline: str) -> dict[str, Any] | None:
    """Which of the file's own steps encoding applies (component types only)."""
    if not pipeline:
        return None
    desc = json.loads(pipeline)

    def name(node: Any, key: str) -> str | None:
        if node is None or node["type"] != "Sequence":
            return None if node is None else str(node["type"])
        return "Sequence[" + ", ".join(name(c, key) or "" for c in node[key]) + "]"

    return {
        "normalizer": name(desc["normalizer"], "normalizers"),
        "pre_tokenizer": name(desc["pre_tokenizer"], "pretokenizers"),
        "decoder": name(desc["decoder"], "decoders"),
        "added_tokens": len(desc["added_tokens"]),
    }
