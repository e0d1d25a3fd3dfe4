"""SentencePiece `.model` files (BPE type): import, and export to tokenizer.json.

What it does not do: unused pieces' resegmentation (sentencepiece splits an
unused piece the merges made back into the pair it last saw for it; a note
says when a file has such pieces), BPE dropout,
`treat_whitespace_as_suffix` splitting rules other than where the space goes
(a note says so).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
import string
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from sentencepiece import sentencepiece_model_pb2 as pb

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import file_error, shown_value
from webapp.tokenizer.normalize.sentencepiece import (
    DEFAULT_UNK_SURFACE, Charsmap, CharsmapError, SpmOptions, describe_spm_decoder, describe_spm_normalizer,
)
from webapp.tokenizer.models.library import LibraryModel
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.models import LIBRARY_MODEL

MAX_PIECES = 1_000_000
#: Ways of splitting pieces in two, in all, that an import may look at (each a dict lookup).
MAX_SPLITS = 8_000_000
#: Pieces longer than this (characters) find their two sides without a slice per split (`score_rules`).
SHORT_PIECE = 64
#: UTF-8 bytes of one piece (as LIMIT_TOKEN_BYTES' default for other files; real pieces are a few dozen).
MAX_PIECE_BYTES = 65_536
#: UTF-8 bytes of all user-defined and control pieces together: each byte is a trie node in the normalizer
#: and the added-token splitter (about 420 bytes each with their automata, reading/longest_match.py).
MAX_ADDED_PIECES_BYTES = 131_072
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
PIECE_TYPES = frozenset((NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE))
MODEL_TYPES = {1: "Unigram", 2: "BPE", 3: "word", 4: "char"}
SOURCE = "sentencepiece"


class ScoreRules(NamedTuple):
    """`score_rules`' answer: the rules as piece pairs, the number of rules per score level, and the
    rules as (left id, right id, joined piece id) rows (int64), in the same order."""

    pairs: list[tuple[str, str]]
    runs: list[int]
    ids: np.ndarray


def looks_like_sentencepiece(content: str | bytes) -> bool:
    """Bytes that start like a ModelProto: field 1 (pieces) or 2/3 (specs), length-delimited."""
    return isinstance(content, bytes) and len(content) > 2 and content[0] in (0x0A, 0x12, 0x1A)


def _parse_proto(content: bytes) -> Any:
    model = pb.ModelProto()  # type: ignore[attr-defined]  # (generated code: no stubs)
    try:
        model.ParseFromString(content)
    except (DecodeError, RuntimeError, ValueError):  # (protobuf's own words name its code, not the file)
        raise file_error("this is not a SentencePiece .model file: its bytes do not read as a ModelProto "
                         "(protobuf cannot parse them)") from None
    return model


def _text(value: str | bytes, what: str, field: str, **location: int) -> str:
    """A string field of the file; protobuf hands back bytes when they are not UTF-8, which is refused
    naming the field and the byte offset (sentencepiece reads every piece as UTF-8 text)."""
    if isinstance(value, str):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokenizerError(f"{what} is not valid UTF-8: byte 0x{value[exc.start]:02x} at byte offset {exc.start} "
                             f"({shown_value(value[:40])}); sentencepiece reads it as UTF-8 text", field=field,
                             location={**location, "offset": exc.start}) from None


def parse_sentencepiece(content: str | bytes, *, join_any_piece: bool = False) -> LoadedTokenizer:
    """A SentencePiece BPE model as the `sentencepiece` library encodes with it (see the module doc).

    `join_any_piece`: two symbols join into a piece of any type (control, byte, user-defined, unknown), as
    llama.cpp's SPM tokenizer joins them (a GGUF file's); sentencepiece joins only into normal and unused
    pieces."""
    if isinstance(content, str):
        raise file_error("a SentencePiece .model file is binary; upload the file itself, not its text")
    model = _parse_proto(content)
    if not model.pieces:
        raise file_error("this is not a SentencePiece .model file: it has no pieces")
    kind = int(model.trainer_spec.model_type)
    if kind != 2:
        name = MODEL_TYPES.get(kind, f"type {kind}")
        raise file_error(f"this is a {name} model; the playground opens BPE tokenizers")
    # (a column at a time, each by a C-level loop over the pieces: a model has up to a million)
    pieces = [sp.piece for sp in model.pieces]
    if not all(map(isinstance, pieces, repeat(str))):
        pieces = [_text(piece, f"pieces: piece {index}", "pieces", index=index) for index, piece in enumerate(pieces)]
    types = [sp.type for sp in model.pieces]
    scores = [sp.score for sp in model.pieces]
    return sentencepiece_tokenizer(model, pieces, types, scores, join_any_piece=join_any_piece)


def _checked_vocab(pieces: list[str], types: list[int]) -> dict[str, int]:
    """Each piece's id; a piece that is empty, over MAX_PIECE_BYTES, already listed or of an unknown type
    is refused, naming the first such piece."""
    vocab = dict(zip(pieces, range(len(pieces))))
    if (len(vocab) == len(pieces) and "" not in vocab and max(map(len, pieces), default=0) <= MAX_PIECE_BYTES // 4
            and set(types) <= PIECE_TYPES):
        return vocab
    seen: dict[str, int] = {}
    for index, (piece, ptype) in enumerate(zip(pieces, types)):  # (the first piece at fault, named)
        if not piece:
            raise TokenizerError(f"pieces: piece {index} is empty", field="pieces", location={"index": index})
        if len(piece) > MAX_PIECE_BYTES // 4 and len(piece.encode("utf-8", "surrogatepass")) > MAX_PIECE_BYTES:
            raise TokenizerError(f"pieces: piece {index} has {len(piece.encode('utf-8', 'surrogatepass')):,} bytes, "
                                 f"over the {MAX_PIECE_BYTES:,} a piece may have", field="pieces",
                                 location={"index": index})
        if piece in seen:
            raise TokenizerError(f"pieces: piece {index} ({shown_value(piece)}) is already piece {seen[piece]}",
                                 field="pieces", location={"index": index})
        if ptype not in PIECE_TYPES:
            raise TokenizerError(f"pieces: piece {index} has an unknown type {ptype}", field="pieces",
                                 location={"index": index})
        seen[piece] = index
    return vocab


def sentencepiece_tokenizer(model: Any, pieces: list[str], types: list[int], scores: list[float], *,
                            join_any_piece: bool = False) -> LoadedTokenizer:
    """`parse_sentencepiece` of a ModelProto whose pieces are given as columns (text, type, score): the
    pieces in `model` itself are not read, so a GGUF file's need not be written into it."""
    if len(pieces) > MAX_PIECES:
        raise file_error(f"the model has {len(pieces):,} pieces, over the {MAX_PIECES:,} allowed")
    vocab = _checked_vocab(pieces, types)
    unknown = [i for i, t in enumerate(types) if t == UNKNOWN]
    if len(unknown) != 1:
        raise file_error(f"a SentencePiece model has exactly one unknown piece; this one has {len(unknown)}")
    byte_fallback = bool(model.trainer_spec.byte_fallback)
    byte_pieces = {p for p, i in vocab.items() if types[i] == BYTE}
    expected_bytes = {f"<0x{b:02X}>" for b in range(256)}
    if byte_pieces - expected_bytes:
        raise file_error(f"byte piece {shown_value(sorted(byte_pieces - expected_bytes)[0])} is not <0x00>..<0xFF>")
    if byte_pieces and not byte_fallback:
        raise file_error("the model has byte pieces although its byte_fallback is off")
    if byte_fallback and byte_pieces != expected_bytes:
        raise file_error(f"byte_fallback is on but the model has {len(byte_pieces)} of the 256 byte pieces")
    spec = model.normalizer_spec
    charsmap = bytes(spec.precompiled_charsmap)
    try:
        if charsmap:
            Charsmap(charsmap)
    except CharsmapError as exc:
        raise TokenizerError(f"normalizer_spec: {exc}", field="normalizer_spec") from None
    user_defined = [p for p, i in vocab.items() if types[i] == USER_DEFINED]
    controls = {p: i for p, i in vocab.items() if types[i] == CONTROL}
    added_bytes = sum(len(p.encode("utf-8", "surrogatepass")) for p in [*user_defined, *controls])
    if added_bytes > MAX_ADDED_PIECES_BYTES:
        raise TokenizerError(f"pieces: the user-defined and control pieces have {added_bytes:,} bytes together, "
                             f"over the {MAX_ADDED_PIECES_BYTES:,} allowed (each is matched in a trie)",
                             field="pieces")
    rules, runs, rule_ids = score_rules(vocab, types, scores, join_any_piece)
    suffix = bool(model.trainer_spec.treat_whitespace_as_suffix)
    options = SpmOptions(charsmap, bool(spec.add_dummy_prefix), bool(spec.remove_extra_whitespaces),
                         bool(spec.escape_whitespaces), suffix, tuple(user_defined))
    denormalizer = None
    if model.HasField("denormalizer_spec") and model.denormalizer_spec.precompiled_charsmap:
        denorm = model.denormalizer_spec
        try:
            Charsmap(bytes(denorm.precompiled_charsmap))
        except CharsmapError as exc:
            raise TokenizerError(f"denormalizer_spec: {exc}", field="denormalizer_spec") from None
        denormalizer = SpmOptions(bytes(denorm.precompiled_charsmap), bool(denorm.add_dummy_prefix),
                                  bool(denorm.remove_extra_whitespaces), bool(denorm.escape_whitespaces), False, ())
    unk_piece = pieces[unknown[0]]
    unk_surface = (_text(model.trainer_spec.unk_surface, "trainer_spec: unk_surface", "trainer_spec")
                   if model.trainer_spec.HasField("unk_surface") else DEFAULT_UNK_SURFACE)
    added = [[p, i, False, True, False, False, False] for p, i in vocab.items() if types[i] == USER_DEFINED]
    added += [[p, i, True, True, False, False, False] for p, i in controls.items()]
    bos = int(model.trainer_spec.bos_id)
    post = [[bos] if 0 <= bos < len(types) and types[bos] == CONTROL else [], []]
    pipeline = {
        "v": 1, "normalizer": describe_spm_normalizer(options), "pre_tokenizer": None,
        "decoder": describe_spm_decoder(controls=list(controls), unk=unk_piece, unk_surface=unk_surface,
                                        byte_fallback=byte_fallback, add_dummy_prefix=options.add_dummy_prefix,
                                        remove_extra_whitespaces=options.remove_extra_whitespaces,
                                        denormalizer=denormalizer),
        "added_tokens": added, "fuse_unk": True, "post": post,
    }
    model_options = {"v": 1, "order": "score", "ignore_merges": False, "byte_fallback": byte_fallback,
                     "fuse_unk": True, "unk_token": unk_piece, "level_runs": runs}
    notes = [f"SentencePiece BPE: {len(pieces):,} pieces, {len(rules):,} ways to join two of them, fired by "
             "the joined piece's score (the leftmost on equal scores)",
             f"normalizer {spec.name or 'unnamed'}" + (" (its precompiled charsmap)" if charsmap else "")]
    unused = sum(1 for t in types if t == UNUSED)
    if unused:
        notes.append(f"{unused:,} unused piece(s): merged into as sentencepiece does, but not split back into "
                     "their parts (its resegmentation), so ids may differ where one forms")
    if denormalizer is not None:
        notes.append("the model's denormalizer rules are applied to decoded text, as sentencepiece applies them")
    if suffix:
        notes.append("treat_whitespace_as_suffix: the space symbol goes at the end of the text")
    loaded = LoadedTokenizer(
        level="chars", merges=tuple(rules), vocab=vocab, source=SOURCE, pretokenize="none",
        unk_id=unknown[0], special_tokens=controls, notes=tuple(notes),
        pipeline=json.dumps(pipeline, ensure_ascii=False, sort_keys=True, separators=(",", ":")),
        model=json.dumps(model_options, sort_keys=True, separators=(",", ":")),
    )
    # The model that encodes, built now from the ids score_rules already has (as sentencepiece builds its
    # tables when it loads a model), with the tables a first encode reads: the rules' pair map and level
    # table, where a long text may be cut, each character's piece. Made lazily from the string merges (a tokenizer read
    # back from its stored form) it is the same model, only slower to build.
    model = LibraryModel(dict(vocab), rule_ids, loaded.model, loaded.unk_id)
    model.cut.edge_array()
    model.cut.char_table()
    model.merges.make_tables()  # (ScoreMerges: with its level table)
    loaded.built.keep(LIBRARY_MODEL, model)  # (what stages.models.library_model gives back)
    return loaded


def score_rules(vocab: dict[str, int], types: list[int], scores: list[float],
                any_piece: bool = False) -> ScoreRules:
    """Every (left, right) whose join is a normal or unused piece (`any_piece`: a piece of any type), both
    sides pieces that can be symbols, in score order (best first; the longer left side first among equal
    scores), and how many rules each score level has."""
    joinable = [(p, i) for p, i in vocab.items() if any_piece or types[i] in (NORMAL, UNUSED)]
    total = sum(len(p) - 1 for p, _ in joinable)
    if total > MAX_SPLITS:
        raise file_error(f"the model's pieces can be split in two {total:,} ways, over the {MAX_SPLITS:,} "
                          "an import looks at")
    # (a side may be any piece that a symbol can be: a single character, or a piece merges make)
    operand = {p for p, i in vocab.items()
               if any_piece or types[i] in (NORMAL, UNUSED) or (len(p) == 1 and types[i] != USER_DEFINED)}
    # (a short piece tries each split, a slice each; a long one finds its sides in one sorted pass,
    # as slicing it at every k would cost its length squared)
    long = {p for p, _ in joinable if len(p) > SHORT_PIECE}
    heads, tails = (_inner_operands(operand, long, False), _inner_operands(operand, long, True)) if long else ({}, {})
    found: list[tuple[float, int, int, str, str]] = []
    add = found.append
    for piece, pid in joinable:
        score = -scores[pid]
        if piece in long:
            tail_of = {len(t): t for t in tails.get(piece, ())}
            for left in heads.get(piece, ()):
                right = tail_of.get(len(piece) - len(left))
                if right is not None:
                    add((score, -len(left), pid, left, right))
            continue
        for k in range(1, len(piece)):
            left = piece[:k]
            if left in operand:
                right = piece[k:]
                if right in operand:
                    add((score, -k, pid, left, right))
    found.sort()
    runs: list[int] = []
    last: float | None = None
    for neg_score in map(itemgetter(0), found):
        if neg_score != last:
            runs.append(0)
            last = neg_score
        runs[-1] += 1
    lefts, rights = list(map(itemgetter(3), found)), list(map(itemgetter(4), found))
    get, count = vocab.__getitem__, len(found)
    ids = np.empty((count, 3), dtype=np.int64)  # (each column made by a C-level loop)
    ids[:, 0] = np.fromiter(map(get, lefts), dtype=np.int64, count=count)
    ids[:, 1] = np.fromiter(map(get, rights), dtype=np.int64, count=count)
    ids[:, 2] = np.fromiter(map(itemgetter(2), found), dtype=np.int64, count=count)
    return ScoreRules(list(zip(lefts, rights)), runs, ids)


def _inner_operands(operands: set[str], wanted: set[str], suffixes: bool) -> dict[str, list[str]]:
    """For each wanted piece, the operands that are its proper prefixes (or suffixes), shortest first."""
    forms = sorted(((op[::-1] if suffixes else op), op) for op in operands)
    stack: list[tuple[str, str]] = []
    out: dict[str, list[str]] = {}
    for form, op in forms:
        while stack and not form.startswith(stack[-1][0]):
            stack.pop()
        if stack and op in wanted:
            out[op] = [inner for _form, inner in stack]
        stack.append((form, op))
    return out


def is_sentencepiece(tok: LoadedTokenizer) -> bool:
    """Was `tok` opened from a .model, as a file or as a preset (whose source says "preset")?
    Its merges fire in score order, which only a .model's do."""
    return tok.source == SOURCE or (bool(tok.model) and json.loads(tok.model).get("order") == "score")


def export_sentencepiece_hf(tok: LoadedTokenizer) -> str:
    """A tokenizer.json for `tokenizers` with the model's pieces, rules (in score order), normalizer and decoder."""
    desc = json.loads(tok.pipeline)
    norm = desc["normalizer"]
    model = json.loads(tok.model)
    if norm["treat_whitespace_as_suffix"] or not norm["escape_whitespaces"]:
        raise TokenizerError(
            "export: this SentencePiece model's normalizer (spaces not escaped as ▁, or the space symbol at the "
            "end) has no tokenizers normalizer the playground writes; keep the .model file", field="format")
    steps: list[dict[str, Any]] = []
    if norm["charsmap"]:
        steps.append({"type": "Precompiled", "precompiled_charsmap": norm["charsmap"]})
    remove = norm["remove_extra_whitespaces"]
    if remove:  # (leading spaces dropped, runs of them made one)
        steps += [{"type": "Replace", "pattern": {"Regex": r"\A +"}, "content": ""},
                  {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
    steps.append({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})
    if norm["add_dummy_prefix"]:
        steps.append({"type": "Prepend", "prepend": "\u2581"})
    if remove:  # (trailing space symbols dropped, the dummy prefix too when nothing else is left)
        steps.append({"type": "Replace", "pattern": {"Regex": "\u2581+\\z"}, "content": ""})
    # User-defined pieces are cut out of the normalized text by a pre-tokenizer, not written as added
    # tokens: docs/formats.md ("SentencePiece .model files", Export) gives why.
    user_defined = [c for c, _i, special, *_ in desc["added_tokens"] if not special]
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": special} for c, i, special, *_ in desc["added_tokens"] if special]
    pre_tokenizer = _user_defined_split(tok, user_defined, model) if user_defined else None
    document = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": steps}, "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": model["unk_token"], "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": model["byte_fallback"],
                  "ignore_merges": bool(user_defined), "vocab": dict(sorted(tok.vocab.items(), key=lambda kv: kv[1])),
                  "merges": [[a, b] for a, b in tok.merges]},
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _user_defined_split(tok: LoadedTokenizer, user_defined: list[str], model: dict[str, Any]) -> dict[str, Any]:
    """The pre-tokenizer of a model with user-defined pieces: each one isolated where sentencepiece's prefix
    matcher finds it in the normalized text (the longest at each place, left to right), so that the model,
    written with `ignore_merges`, gives it whole. `ignore_merges` gives any piece that is a vocab entry
    whole, and a piece between two of them (or the whole text) may be spelt as a byte piece or the unknown
    piece (`<0x41>`, `<unk>`), which sentencepiece reads as characters: such a piece, when it is the whole
    piece, is cut in two where no rule joins across, so that merging the two halves gives what merging
    the whole gives."""
    longest_first = sorted(user_defined, key=len, reverse=True)
    steps = [{"type": "Split", "pattern": {"Regex": "|".join(map(_literal, longest_first))}, "behavior": "Isolated",
              "invert": False}]
    joined = {left + right for left, right in tok.merges}
    spellings = [p for p in tok.vocab if p == model["unk_token"] or (model["byte_fallback"] and _is_byte_piece(p))]
    by_cut: dict[int, list[str]] = {}  # (byte pieces cut inside "<0x", by the cut: one lookahead for each group)
    alternatives = []
    for spelling in spellings:
        # (left whole: a one-character spelling, one every cut of which a rule spans, and an unknown piece
        # over SHORT_PIECE characters, whose cuts would cost its length cubed to look at)
        cut = _safe_cut(spelling, joined) if len(spelling) <= SHORT_PIECE else None
        if cut is None:
            continue
        if _is_byte_piece(spelling) and cut <= 3:
            by_cut.setdefault(cut, []).append(spelling[3:5])
        else:
            alternatives.append(f"{_literal(spelling[:cut])}(?={_literal(spelling[cut:])}\\z)")
    for cut, digits in sorted(by_cut.items()):
        hexes = "[0-9A-F]{2}" if len(digits) == 256 else "(?:" + "|".join(sorted(digits)) + ")"
        alternatives.append(f"{_literal('<0x'[:cut])}(?={_literal('<0x'[cut:])}{hexes}\\>\\z)")
    if alternatives:
        steps.append({"type": "Split", "pattern": {"Regex": "\\A(?:" + "|".join(alternatives) + ")"},
                      "behavior": "Isolated", "invert": False})
    return steps[0] if len(steps) == 1 else {"type": "Sequence", "pretokenizers": steps}


def _safe_cut(spelling: str, joined: set[str]) -> int | None:
    """The first place `spelling` can be cut without splitting any piece a rule makes, if there is one."""
    return next((k for k in range(1, len(spelling))
                 if not any(spelling[i:j] in joined for i in range(k) for j in range(k + 1, len(spelling) + 1))), None)


def _is_byte_piece(piece: str) -> bool:
    return len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">")


def _literal(piece: str) -> str:
    """`piece` as a regex matching itself, in Oniguruma (`tokenizers`) and Python alike: ASCII punctuation
    escaped with a backslash."""
    return "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in piece)


_PUNCTUATION = frozenset(string.punctuation)


__all__ = ["SOURCE", "export_sentencepiece_hf", "is_sentencepiece", "looks_like_sentencepiece", "parse_sentencepiece", "score_rules",
           "sentencepiece_tokenizer"]
