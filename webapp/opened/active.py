"""Which tokenizer a page uses: the one place that decides, for every handler.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from webapp.infra import inputs
from webapp.opened import store as tokenizer_store
from webapp.tokenizer import (
    CompiledByteMerges,
    LoadedTokenizer,
    Tokenizer,
    TokenizerError,
    TraceLimits,
    allowed_set,
    implied_byte_vocab,
    is_preset,
    split_text,
)
from webapp.tokenizer.caches import BoundedCache


ByteTrace = tuple[Any, "dict[int, bytes] | None", frozenset[int]]  # (trace, decode vocab or None, special ids)


@dataclass(frozen=True)
class ActiveTokenizer:
    """The tokenizer in use: source is "typed", "preset" or "file"; ref names the preset / stored id.

    A preset or file is loaded once, by `resolve`: `entry` is it, or `error`
    says why it cannot be used (an unknown or damaged id), raised where it is used."""

    source: str
    level: str  # "bytes" | "chars"
    ref: str = ""
    special: Any = ()  # allowed special tokens of a preset or file: () plain text, "all" recognized
    entry: tokenizer_store.Loaded | None = None
    error: TokenizerError | None = None

    def loaded(self) -> tokenizer_store.Loaded:
        """The preset or file (a TokenizerError when it could not be loaded)."""
        if self.entry is None:
            raise self.error or TokenizerError("tokenizer: no tokenizer is open", field="tokenizer")
        return self.entry

    def status(self) -> tokenizer_store.OpenedStatus:
        """What the page's status line shows (nothing for the page's typed rules)."""
        if not self.ref:
            return tokenizer_store.OpenedStatus()
        if self.entry is None:
            return tokenizer_store.OpenedStatus(error=self.error.message if self.error else None)
        return tokenizer_store.status_of(self.entry)


def resolve(tool: str, state: Mapping[str, Any]) -> ActiveTokenizer:
    """The active tokenizer of a page state (the `tokenizer` field wins over typed fields), loaded once."""
    level = "chars" if tool == "chars" else "bytes"
    ref = state.get("tokenizer") or ""
    ref = ref.strip() if isinstance(ref, str) else ""
    if not ref:
        return ActiveTokenizer("typed", level) if level == "chars" else of_typed(state.get("merges", ""))
    try:
        special = inputs.read_allowed_special(state.get("special", "")) if level == "bytes" else ()
    except TokenizerError:
        special = ()  # the checkbox only ever sends "all"; anything else means plain text
    return of_ref(ref, level, special)


# The page's typed byte rules as a tokenizer like any file's (its stages through tokenizer_of), by
# compiled list: typing text under the same rules reuses them. Bound: 8 lists, and the rules of a
# few large ones (the compiled lists themselves are inputs.py's to keep).
_TYPED: BoundedCache[CompiledByteMerges, tokenizer_store.Loaded] = BoundedCache(
    8, 400_000, weigh=lambda merges, _entry: len(merges.rules) + 1, name="active.typed_rules")


def typed_rules(merges: CompiledByteMerges) -> tokenizer_store.Loaded:
    """The page's typed byte rules (list order) as an opened tokenizer: ids as typed, no vocab of its own."""
    entry = _TYPED.get(merges)
    if entry is None:
        # (the vocab the rules imply is made only when asked for: encoding and tracing never read it, and a
        # few doubling rules imply tokens of terabytes, which the page still encodes, lengths first)
        tok = LoadedTokenizer.deferred({"vocab": lambda: implied_byte_vocab(merges)}, len(merges.rules),
                                       level="bytes", merges=merges.rules, pretokenize="none", source="playground")
        entry = tokenizer_store.Loaded(id="", tok=tok, compiled=merges)
        _TYPED.put(merges, entry)
    return entry


def of_typed(merges: Any) -> ActiveTokenizer:
    """The Bytes page's typed rules (the Merges field's text, or rules already read) as its tokenizer; a
    problem with them is kept as the error, naming `merges`, raised where the tokenizer is used."""
    try:
        compiled = merges if isinstance(merges, CompiledByteMerges) else \
            inputs.read_byte_merges(merges if isinstance(merges, str) else "", inputs.current_limits())
    except TokenizerError as exc:
        return ActiveTokenizer("typed", "bytes", error=exc)
    return ActiveTokenizer("typed", "bytes", entry=typed_rules(compiled))


def page_merges(active: ActiveTokenizer) -> CompiledByteMerges | None:
    """`typed_merges`, after the tokenizer is checked usable (its problem raised: a typed rule's names `merges`)."""
    active.loaded()
    return typed_merges(active)


def typed_merges(active: ActiveTokenizer) -> CompiledByteMerges | None:
    """The typed rules of the page (None for a preset or file): what the round trip's implied vocab and the
    note on rules naming unmade ids read."""
    return None if active.ref or active.entry is None else active.entry.compiled


def of_ref(ref: str, level: str = "bytes", special: Any = ()) -> ActiveTokenizer:
    """A preset (by name) or an opened file (by id), loaded once; used by `resolve` and by
    the comparison's sides, so both find tokenizers the same way."""
    source = "preset" if is_preset(ref) else "file"
    try:
        return ActiveTokenizer(source, level, ref, special, entry=tokenizer_store.load_tokenizer(ref))
    except TokenizerError as exc:
        return ActiveTokenizer(source, level, ref, special, error=exc)


# --- a preset or opened file, with the entry resolve loaded ----------------------


def _byte_level(active: ActiveTokenizer) -> tokenizer_store.Loaded:
    entry = active.loaded()
    if not entry.stages().on_bytes_page:  # (a library-order file shows on both pages)
        raise TokenizerError("tokenizer: this is a character-level tokenizer; open it on the Characters page",
                             field="tokenizer")
    return entry


def _stored_byte_trace(active: ActiveTokenizer, text: str, scheme: str | None, limits: TraceLimits) -> ByteTrace:
    """The trace in the file's ids, its decode vocab (special tokens included) and the special
    ids among the recorded tokens. Allowed special tokens: "all" or a list; none by default."""
    entry = _byte_level(active)
    allowed = allowed_set(active.special, entry.tok.special_tokens)
    trace, special_at = entry.stages(scheme).trace(text, allowed, limits)
    vocab = entry.file_vocab or ({} if active.ref else None)  # (typed rules: the vocab they imply decodes)
    return trace, vocab, frozenset(trace.tokens[i].id for i in special_at)


def _stored_ids(active: ActiveTokenizer, text: str, scheme: str | None) -> list[int]:
    """All ids of `text` (the file's numbering), as the file's page encodes it."""
    entry = active.loaded()
    tokenizer = entry.stages(scheme if entry.stages().takes_page_scheme else None)
    return tokenizer.encode(text, page_allowed(active, tokenizer))


def page_allowed(active: ActiveTokenizer, tokenizer: Tokenizer) -> frozenset[str] | None:
    """The special tokens a page splits out: as its checkbox says; on the Characters page a tokenizer.json's
    added tokens always (None: as the library does), a SentencePiece model's control pieces as the checkbox says."""
    if tokenizer.on_chars_page and tokenizer.special_default == "all":
        return None
    return allowed_set(active.special, tokenizer.loaded.special_tokens)


# --- byte level --------------------------------------------------------------


def byte_trace(active: ActiveTokenizer, text: str, scheme: str, *, limits: TraceLimits) -> ByteTrace:
    """The encode trace, the vocab a preset's or file's ids decode with (None: typed merges),
    and the ids of the special tokens among the recorded tokens (styled apart)."""
    return _stored_byte_trace(active, text, scheme, limits)


# Typing into a long text with a preset or file, while the Trace view is not
# shown: the page needs every id but only the first `max_tokens` token spans.
# The ids come from the fast encoder; the spans from a trace of a prefix of the
# text (cut at a pre-token boundary), used only when its ids are
# exactly the first ids of the whole text (else the whole text is traced).
PREFIX_TRACE_MIN_CHARS = 5000
_PREFIX_MARGIN = 64  # extra tokens traced past the last one shown


def prefix_byte_trace(active: ActiveTokenizer, text: str, scheme: str, *, limits: TraceLimits) -> ByteTrace | None:
    """(trace with all ids but spans of a prefix, vocab, special ids), or None when that would not help or not match.

    Only `limits.max_tokens` and `max_sequence` are read: a prefix records no steps."""
    max_tokens = limits.max_tokens
    if not active.ref or scheme == "none" or len(text) < PREFIX_TRACE_MIN_CHARS:
        return None
    ids = byte_ids(active, text, scheme)
    if len(ids) <= max_tokens + _PREFIX_MARGIN:
        return None
    size = 4 * (max_tokens + _PREFIX_MARGIN)
    while size < len(text) // 2:
        cut = 0
        for pretoken in split_text(text[: size + 256], scheme):
            cut += len(pretoken)
            if cut >= size:
                break
        trace, vocab, specials = _stored_byte_trace(active, text[:cut], scheme, dataclasses.replace(
            limits, max_steps=0, max_tokens=max_tokens + _PREFIX_MARGIN))
        if len(trace.ids) >= max_tokens + _PREFIX_MARGIN:
            shown = trace.tokens[:max_tokens]
            if [t.id for t in shown] != ids[: len(shown)]:
                return None
            return dataclasses.replace(trace, ids=ids, tokens=shown, tokens_truncated=True), vocab, specials
        size *= 2
    return None


def byte_ids(active: ActiveTokenizer, text: str, scheme: str) -> list[int]:
    """All ids of `text` with the active tokenizer (no trace, no caps)."""
    return _stored_ids(active, text, scheme)


def spells_spaces_as_metaspace(active: ActiveTokenizer) -> bool:
    """A SentencePiece-style file (its text seen with spaces as "▁"): the trace spells its tokens so."""
    return active.entry is not None and active.entry.stages().writes_metaspace


def byte_vocab(active: ActiveTokenizer) -> dict[int, bytes]:
    """The {id: bytes} a preset or file decodes with (typed merges: the page's Vocab field instead)."""
    return _byte_level(active).file_vocab or {}


def own_pretokenize(active: ActiveTokenizer) -> str | None:
    """The pre-tokenization a byte-level preset or file comes with (None: typed merges, or unknown)."""
    if not active.ref or active.entry is None:
        return None
    return active.entry.tok.unit.own_scheme(active.entry.tok)


# --- character level -----------------------------------------------------------


def char_parts(active: ActiveTokenizer) -> tuple[Any, dict[str, int]]:
    """(merges, vocab) of an opened character-level file."""
    entry = active.loaded()
    if not entry.stages().shows_on("chars"):
        raise TokenizerError("tokenizer: this is a byte-level tokenizer; open it on the Bytes page", field="tokenizer")
    return entry.tok.merges, entry.tok.vocab


def char_trace(active: ActiveTokenizer, text: str, *, limits: TraceLimits) -> Any:
    """An opened tokenizer.json's own pipeline trace (normalizer, pre-tokenizer, added tokens), or None."""
    if active.entry is None:
        return None
    tokenizer = active.loaded().stages()
    if not tokenizer.on_chars_page:
        return None
    return tokenizer.trace(text, None, limits, "chars")[0]


def char_ids(active: ActiveTokenizer, text: str) -> list[int]:
    """All ids of `text` with an opened character-level file, exactly as its page encodes."""
    return _stored_ids(active, text, None)


# --- a rendered chat -------------------------------------------------------------


def chat_ids(entry: tokenizer_store.Loaded, text: str) -> list[int]:
    """A rendered conversation's ids as `apply_chat_template` tokenizes it: every special token in the
    text recognised, nothing added around it (a tokenizer.json's pipeline, else the file's own splitting)."""
    return entry.stages().encode(text, frozenset(entry.tok.special_tokens))
