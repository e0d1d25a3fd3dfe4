"""`LoadedTokenizer`: any imported tokenizer in the playground's terms.

- Byte level (GPT-2's byte-to-character alphabet, tiktoken ranks, minbpe):
  merges are `(left, right, new)` ids where 0..255 are the raw bytes, exactly
  what `encode` takes. Real files number their single-byte tokens in their
  own order (GPT-2 gives "!" id 0), so `id_map` records, for every playground
  id whose file id differs, the file's id; `file_ids()` applies it to encoded
  ids. Merged tokens keep their file ids whenever those are all >= 256 (then
  only the 256 byte ids are relabelled).
- Character level (Hugging Face BPE without the byte alphabet): string merges
  `(left, right)` and the file's `{token: id}` vocab, as `bpe_encode_text` takes.

A shared leaf of the package (it imports nothing from it): file formats build
it (formats/), its stages are built from it (stages/), presets are
loaded as one (presets/). What it does not do: parse, export, encode or store.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, TypeVar

_T = TypeVar("_T")
#: The two fields a stored form may leave to be made on first use (`LoadedTokenizer.deferred`).
DEFERRABLE = ("merges", "vocab")
_DEFER_LOCK = threading.Lock()


class Built:
    """What encoding makes from a loaded tokenizer's fields (its stages, the library model), kept with it.

    A declared field of `LoadedTokenizer` that takes no part in equality,
    `repr`, pickling or `dataclasses.replace` (a replaced tokenizer starts
    with an empty one): what it holds follows from the frozen fields alone.
    Each value is made once, under a re-entrant lock (making a tokenizer makes
    its model). Its keys are a fixed few per tokenizer (stages.tokenizer_of
    checks a scheme before it becomes one).
    """

    __slots__ = ("_lock", "_made")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._made: dict[Hashable, Any] = {}

    def get(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """The value kept under `key`, made by `make` the first time."""
        found = self._made.get(key)
        if found is None:
            with self._lock:
                found = self._made.get(key)
                if found is None:
                    found = self._made[key] = make()
        return found

    def peek(self, key: Hashable) -> Any:
        """The value kept under `key`, or None when none is made yet."""
        return self._made.get(key)

    def keep(self, key: Hashable, value: Any) -> None:
        """Keep an already made value (a preset's precompiled model, say)."""
        with self._lock:
            self._made[key] = value

    def __reduce__(self) -> tuple[Any, ...]:
        return (Built, ())


@dataclass(frozen=True)
class LoadedTokenizer:
    """A tokenizer in the playground's terms.

    level "bytes": `merges` are (left, right, new) ids in playground numbering
    (0..255 = raw bytes); `vocab` is {playground id: bytes} for every id above
    255 that the merges make or use; `id_map` maps playground ids to the file's
    ids where they differ; `unknown_bytes` are bytes the file has no token for
    (the library drops them, or uses `unk_id` when the file names one).

    level "chars": `merges` are (left, right) strings; `vocab` is {token: id}.
    """

    level: str
    merges: tuple[Any, ...]
    vocab: dict[Any, Any]
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
    # A tokenizer.json's BPE model options (hf/model.py, canonical JSON): its merges follow the
    # `tokenizers` library's order, not the playground's seed order. "" for the seed order.
    model: str = ""
    # What encoding builds from the fields above (see Built).
    built: Built = field(default_factory=Built, init=False, compare=False, repr=False)

    @property
    def library_order(self) -> bool:
        """Do the merges fire in the library's order (a Hugging Face file) rather than list order?"""
        return bool(self.model)

    @classmethod
    def deferred(
        cls, makers: dict[str, Callable[[], Any]], rule_count: int, **fields: Any
    ) -> "LoadedTokenizer":
        """A tokenizer whose `merges` and / or `vocab` (the keys of `makers`) are made on first use.

        For the stored forms of presets (a preset's first encode needs neither:
        it runs on the precompiled tables), so a fresh process does not build
        hundreds of thousands of tuples it may never read. Each maker runs at
        most once, under a lock; its value is then an ordinary field, so
        equality, `dataclasses.replace`, pickling and every reader see the
        same tokenizer as an eagerly built one. `rule_count` is the number of
        merges (read by the caches' weights without building them).
        """
        unknown = set(makers) - set(DEFERRABLE)
        if unknown:
            raise ValueError(f"only {', '.join(DEFERRABLE)} can be deferred, not {', '.join(sorted(unknown))}")
        made = cls(**{"merges": (), "vocab": {}, **fields})
        for name in makers:
            del made.__dict__[name]
        made.__dict__["_makers"] = dict(makers)
        made.__dict__["_rule_count"] = rule_count
        return made

    if not TYPE_CHECKING:  # (at run time only: to mypy a missing attribute stays an error)

        def __getattr__(self, name: str) -> Any:
            """A deferred field, made now (only called when the instance has no such attribute)."""
            makers = self.__dict__.get("_makers")
            if not makers or name not in makers:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            with _DEFER_LOCK:
                if name not in self.__dict__:
                    self.__dict__[name] = makers[name]()
            return self.__dict__[name]

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the fields only: what encoding builds is made again (`built` pickles as an empty holder)."""
        for name in DEFERRABLE:
            getattr(self, name)  # (a deferred field is made first)
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    @property
    def rule_count(self) -> int:
        count = self.__dict__.get("_rule_count")
        return count if isinstance(count, int) else len(self.merges)

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
        if self.level != "bytes":
            raise ValueError("file_vocab is for byte-level tokenizers")
        out: dict[int, bytes] = {}
        for b in range(256):
            if b not in self.unknown_bytes:
                out[self.id_map.get(b, b)] = bytes([b])
        for pid, data in self.vocab.items():
            out[self.id_map.get(pid, pid)] = data
        return out

    def summary(self) -> dict[str, Any]:
        """A small JSON-able description for the UI and the API."""
        return {
            "level": self.level,
            "source": self.source,
            "rules": len(self.merges),
            "vocab": len(self.vocab) + (256 - len(self.unknown_bytes) if self.level == "bytes" else 0),
            "pretokenize": self.pretokenize,
            "relabelled_ids": len(self.id_map),
            "special_tokens": len(self.special_tokens),
            "notes": list(self.notes),
            "file_pipeline": _pipeline_summary(self.pipeline),
            "chat_template": bool(self.chat),
            "merge_order": "library" if self.model else "list",
        }


def _pipeline_summary(pipeline: str) -> dict[str, Any] | None:
    """Which of the file's own steps encoding applies (component types only)."""
    if not pipeline:
        return None
    desc = json.loads(pipeline)

    def name(node: Any, key: str) -> str | None:
        if node is None:
            return None
        if node["type"] == "Sequence":
            return "Sequence[" + ", ".join(name(c, key) or "" for c in node[key]) + "]"
        return str(node["type"])

    return {
        "normalizer": name(desc["normalizer"], "normalizers"),
        "pre_tokenizer": name(desc["pre_tokenizer"], "pretokenizers"),
        "decoder": name(desc["decoder"], "decoders"),
        "added_tokens": len(desc["added_tokens"]),
    }
