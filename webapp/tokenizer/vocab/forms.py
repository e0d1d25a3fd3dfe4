"""Can a token form at all? Its own symbols merged as one piece, with no neighbour: the proof's core.

Merges never split, and a merge inside a token's span is chosen alike with or without
neighbours (list order: each visit enters the span afresh; the libraries' orders: the best
pair of the piece is the best of the span), so a token in any text's encode covers a span
whose symbols, merged alone, end as it (docs/explain.md#what-is-proven-for-every-text).
`former` answers per token: True, False (no text gives it), NO_PIECE / TAKEN / NEVER_UNKNOWN
(it forms alone, but pieces.py / edges.py / byte fallback rule it out), None (not known).
"""

from __future__ import annotations

import codecs
import json
from itertools import product
from typing import Callable, Iterable, Mapping

import numpy as np
import regex

from webapp.tokenizer.core.alphabet import bytes_to_token
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.stages.models import LibraryOrder, ListOrderBytes, ListOrderChars
from webapp.tokenizer.vocab.edges import LastByte, list_order_tables, rank_tables, tree_free_until
from webapp.tokenizer.vocab.index import VocabIndex
from webapp.tokenizer.vocab.pieces import gapless, inside_a_match, starting_with

Former = Callable[[int], "bool | str | None"]
#: What a Former answers for a token that merges alone but whose text no piece of any text holds (pieces.py).
NO_PIECE = "no piece"
#: ... for the unknown token of a file whose byte fallback covers every byte (the model never uses it).
NEVER_UNKNOWN = "never unknown"
#: ... for a token whose last byte, a character's lead, that character always takes first (edges.py).
TAKEN = "taken"
#: At most this many byte strings are listed as one token's spellings (an odd rule list's), each this long.
SPELLINGS = 64
SPELLING_BYTES = 256


def utf8_inside(data: bytes) -> bool:
    """Can `data` occur inside the UTF-8 of some text (a whole character's bytes around it added)?"""
    lead = len(data) - len(data.lstrip(bytes(range(0x80, 0xC0))))
    if lead > 3:
        return False
    try:  # (an incomplete last character is fine; an impossible sequence raises)
        codecs.getincrementaldecoder("utf-8")().decode(data[lead:], final=False)
    except UnicodeDecodeError:
        return False
    return True


def spellings(rows: Iterable[tuple[int, int, int]], base: dict[int, bytes]) -> Callable[[int], set[bytes] | None]:
    """Every byte string a symbol of this id can cover, made by any rules in any order (None: too many, or
    endless). For a plain list (each new id made once, from bytes or earlier tokens) it is one string."""
    makers: dict[int, list[tuple[int, int]]] = {}
    for left, right, new in rows:
        makers.setdefault(new, []).append((left, right))
    memo: dict[int, set[bytes] | None] = {}

    def spell(token: int, inside: frozenset[int]) -> set[bytes] | None:
        if token in memo:
            return memo[token]
        if token in inside:
            return None  # (a rule loop: a symbol may cover ever longer strings)
        out = {base[token]} if token in base else set()
        for left, right in makers.get(token, ()):
            lefts, rights = spell(left, inside | {token}), spell(right, inside | {token})
            if lefts is None or rights is None:
                memo[token] = None
                return None
            out.update(a + b for a in lefts for b in rights)
            if len(out) > SPELLINGS or any(len(s) > SPELLING_BYTES for s in out):
                memo[token] = None
                return None
        memo[token] = out
        return out

    return lambda token: spell(token, frozenset())


def plain(rows: np.ndarray, base: frozenset[int]) -> bool:
    """Is every new id made once, not a base symbol, from base symbols or tokens made before it?
    `rows`: (left, right, new) per rule, in list order."""
    if not len(rows):
        return True
    news = rows[:, 2]
    if rows.min() < 0 or int(np.bincount(news).max()) > 1:
        return False
    size = int(rows.max()) + 1
    is_base = np.zeros(size, dtype=bool)
    is_base[[b for b in base if b < size]] = True
    if is_base[news].any():
        return False
    made_at = np.full(size, len(rows), dtype=np.int64)
    made_at[news] = np.arange(len(rows))
    at = np.arange(len(rows))
    return bool(all((is_base[rows[:, k]] | (made_at[rows[:, k]] < at)).all() for k in (0, 1)))


class _Alone:
    """The model visitor: a `Former` for each kind of model (models.ModelVisitor)."""

    def __init__(self, tok: LoadedTokenizer, index: VocabIndex) -> None:
        self.tok = tok
        self.index = index
        #: Texts worth trying as witnesses of a token the proofs leave open (edges.LastByte.hints).
        self.hints: Callable[[int], list[str]] = lambda token: []

    def in_list_order_bytes(self, model: ListOrderBytes) -> Former:
        tok, data = self.tok, self.index.data
        each: list[Callable[[int], set[bytes] | None]] = []
        is_plain: list[bool] = []
        # (a playground scheme's pattern, or a file's own split regex (a Tekken file's): pieces lie in its matches)
        pattern = split_pattern(tok)
        inside = inside_a_match(pattern) if pattern is not None else None
        last_byte = LastByte(data, {b: tok.id_map.get(b, b) for b in range(256)}, inside,
                             lambda: list_order_tables(self.index.rules.tolist()), tree_free_until(self.index),
                             _starts(pattern))
        self.hints = last_byte.hints

        def spelt(token: int) -> set[bytes] | None:
            if not each:  # (made on first use: most vocabularies never ask)
                rows = tok.unit.file_rule_rows(tok)
                base = {tok.id_map.get(b, b): bytes([b]) for b in range(256)}
                is_plain.append(plain(rows, frozenset(base)))
                each.append((lambda t: {data[t]} if t in data else set()) if is_plain[0]
                            else spellings([(int(a), int(b), int(c)) for a, b, c in rows.tolist()], base))
            return each[0](token)

        def can(token: int) -> bool | str | None:
            found = spelt(token)
            if found is None:
                return None
            merging = [s for s in found if utf8_inside(s) and model.merge_bytes(s) == [token]]
            if not merging:
                return False
            if inside is not None and all(_valid(s) and not inside(s.decode("utf-8")) for s in merging):
                return NO_PIECE
            if is_plain[0] and last_byte(token):
                return TAKEN
            return True
        return can

    def in_list_order_chars(self, model: ListOrderChars) -> Former:  # (no playground scheme splits characters)
        names: dict[int, list[str]] = {}
        for name, token_id in self.tok.vocab.items():
            names.setdefault(token_id, []).append(name)

        def alone(name: str) -> list[int] | None:
            try:  # (a symbol the vocab lacks: the name did not end as one symbol)
                return model.encode_whole(name)
            except ValueError:
                return None
        # Character symbols are strings and a rule makes left + right: only the names of the id can form it.
        return lambda token: any(name and alone(name) == [token] for name in names.get(token, ()))

    def in_library_order(self, model: LibraryOrder) -> Former:
        lib = model.library
        names = self.tok.unit.token_names(self.tok)
        unk = next((n for n, i in lib.vocab.items() if i == lib.unk_id), None) if lib.unk_id is not None else None
        fallback = {code: b for b, code in enumerate(lib.fallback or ()) if code is not None}
        maker = self.index.maker
        byte_level = self.tok.level == "bytes"
        gone = replaced_everywhere(self.tok.pipeline)
        pattern = file_pattern(self.tok)
        inside = inside_a_match(pattern) if pattern is not None else None
        last_byte = (self._library_last_byte(model, pattern) if byte_level and '"order":"library"' in self.tok.model
                     else None)
        if last_byte is not None:
            self.hints = last_byte.hints

        def can(token: int) -> bool | str | None:
            if token in fallback and (token >= len(maker) or maker[token] < 0):
                return _falls_back(fallback[token], lib.vocab, gone)
            name, data = names.get(token), self.index.data.get(token, b"")
            if token == lib.unk_id and lib.fallback is not None and None not in lib.fallback and (
                    token >= len(maker) or maker[token] < 0):
                return NEVER_UNKNOWN  # (every character the vocab lacks falls back to its bytes instead)
            if not name or (fallback and "<0x" in name) or (unk and unk in name):
                return None  # (first symbols other than characters could spell it)
            if byte_level and not utf8_inside(data):
                return False
            # ignore_merges: a piece that is the token's own spelling is that token, merged or not
            # (never so for half a character: a piece is whole characters)
            whole = lib.ignore_merges and not (byte_level and not _valid(data))
            symbols = [lib.vocab.get(ch) for ch in name]
            if None not in symbols and list(lib.merges.merge(symbols)) == [token]:  # type: ignore[arg-type]
                if inside is not None and _valid(data) and not inside(data.decode("utf-8")):
                    return NO_PIECE if not whole else None  # (with ignore_merges only a witness can tell)
                return TAKEN if last_byte is not None and last_byte(token) else True
            return None if whole else False
        return can

    def _library_last_byte(self, model: LibraryOrder, pattern: str | None) -> LastByte:
        """edges.py in rank order, for a byte-level file: its first symbols are the byte alphabet's."""
        lib, tok = model.library, self.tok
        byte_ids = {b: i for b in range(256) if (i := lib.vocab.get(bytes_to_token(bytes([b])))) is not None}
        names = tok.unit.token_names(tok)

        def free_until(token: int) -> int | None:
            symbols = [lib.vocab[ch] for ch in names[token]]
            firings: list[tuple[int, int, int]] = []
            lib.merges.merge(symbols, firings)
            return next((rank for rank, _, right in firings if right == len(symbols) - 1), None)
        return LastByte(self.index.data, byte_ids, inside_a_match(pattern) if pattern is not None else None,
                        lambda: rank_tables(tok.unit.library_parts(tok)[1]), free_until, _starts(pattern))


def split_pattern(tok: LoadedTokenizer) -> str | None:
    """The pattern whose matches hold every piece: a playground scheme's (no file pipeline), or the file's."""
    scheme = tok.unit.own_scheme(tok) if not tok.pipeline else None
    return PATTERNS[scheme] if scheme in PATTERNS else file_pattern(tok)


def file_pattern(tok: LoadedTokenizer) -> str | None:
    """A tokenizer.json's first `Split` by a regex (isolated, not inverted), when every character of a
    text is in one of its matches and pieces.py reads it; later steps only cut more."""
    desc = json.loads(tok.pipeline).get("pre_tokenizer") if tok.pipeline else None
    steps = (desc.get("pretokenizers") or []) if isinstance(desc, dict) and desc.get("type") == "Sequence" else [desc]
    for step in steps:
        if not isinstance(step, dict) or step.get("type") != "Split":
            continue
        pattern = (step.get("pattern") or {}).get("Regex")
        if step.get("behavior") == "Isolated" and not step.get("invert") and isinstance(pattern, str):
            try:
                return pattern if gapless(pattern) and inside_a_match(pattern) is not None else None
            except (regex.error, ValueError, IndexError, KeyError):
                return None  # (a pattern the reader does not follow: no claim)
        return None
    return None


def _starts(pattern: str | None) -> Callable[[bytes], list[str]] | None:
    """pieces.starting_with for the pattern, its table made on first use (a few seconds, rarely needed)."""
    return (lambda start: starting_with(pattern)(start)) if pattern is not None else None


def _valid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _falls_back(byte: int, vocab: Mapping[str, int], gone: frozenset[str]) -> bool | None:
    """A `<0xXX>` token comes only from a character the vocab lacks whose UTF-8 holds the byte; `gone`:
    characters the normalizer replaces in every text (they never reach the model)."""
    if byte < 0x80:
        return chr(byte) not in vocab and chr(byte) not in gone  # (the only character holding an ASCII byte)
    if not utf8_inside(bytes([byte])):
        return False
    if byte >= 0xC2:  # a lead byte: its characters are few enough to look up every one
        size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
        for tail in product(range(0x80, 0xC0), repeat=size - 1):
            try:
                ch = bytes([byte, *tail]).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if ch not in vocab:
                return None  # (a witness decides: this character may reach the model)
        return False
    return None  # (a continuation byte: many characters hold it, a witness decides)


def replaced_everywhere(pipeline: str) -> frozenset[str]:
    """Characters a tokenizer.json's normalizer replaces in every text: the last steps' `Replace` of one
    character by a string without it (later steps adding none back), or SentencePiece's escaped spaces."""
    desc = json.loads(pipeline).get("normalizer") if pipeline else None
    steps = (desc.get("normalizers") or []) if isinstance(desc, dict) and desc.get("type") == "Sequence" else [desc]
    gone: set[str] = set()
    for step in steps:
        if not isinstance(step, dict):
            gone.clear()
            continue
        added = "".join(str(step.get(k) or "") for k in ("content", "prepend"))
        gone = {ch for ch in gone if ch not in added}
        pattern = step.get("pattern")
        single = pattern.get("String") if isinstance(pattern, dict) else None
        if step.get("type") == "Replace" and isinstance(single, str) and len(single) == 1 and single not in added:
            gone.add(single)
        elif step.get("type") == "SentencePiece" and step.get("escape_whitespaces"):
            gone.add(" ")
        elif step.get("type") not in ("Replace", "Prepend", "SentencePiece"):
            gone.clear()  # (a step this reading does not follow: claim nothing)
    return frozenset(gone)


def former(tok: LoadedTokenizer, model: ListOrderBytes | ListOrderChars | LibraryOrder,
           index: VocabIndex) -> tuple[Former, Callable[[int], list[str]]]:
    """Per token: can it form inside some piece (see the module docstring)? And texts worth trying
    as its witness when no proof holds."""
    alone = _Alone(tok, index)
    can = model.visit(alone)
    return can, lambda token: alone.hints(token)
