"""Real tokenizer files in and out: Hugging Face, vocab.json + merges.txt, tiktoken, minbpe.

Import turns a file into a `LoadedTokenizer`: the playground's merges and
vocabulary plus what is needed to give the same ids as the library that wrote
the file.

- Byte level (GPT-2's byte-to-character alphabet, tiktoken ranks, minbpe):
  merges are `(left, right, new)` ids where 0..255 are the raw bytes, exactly
  what `encode` takes. Real files number their single-byte tokens in their
  own order (GPT-2 gives "!" id 0), so `id_map` records, for every playground
  id whose file id differs, the file's id; `file_ids()` applies it to encoded
  ids. Merged tokens keep their file ids whenever those are all >= 256 (then
  only the 256 byte ids are relabelled).
- Character level (Hugging Face BPE without the byte alphabet): string merges
  `(left, right)` and the file's `{token: id}` vocab, as `bpe_encode_text` takes.

Export writes the seed JSON (the playground's own format), a Hugging Face
`tokenizer.json` the `tokenizers` library loads and that gives the same ids,
a minbpe-style `.model`, and a tiktoken rank file.

A tokenizer.json's normalizer, pre-tokenizer, decoder and added tokens are
read by hf_pipeline and stored with the tokenizer (`LoadedTokenizer.pipeline`);
`encode_loaded` applies them as the library does, `decode_loaded` decodes.

What it does not do: Flask or HTTP; byte fallback, post-processing, or the
pipeline parts hf_pipeline does not have (a note says what the playground
leaves out); WordPiece, Unigram or WordLevel models, which are refused with a
message, as is anything that is not what it claims to be.
Every problem is a `TokenizerError` with `field="file"` (or "merges" /
"vocab" where one part is at fault) and a location (line, rule, key).
"""

from __future__ import annotations

import base64
import binascii
import heapq
import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from webapp.tokenizer.errors import TokenizerError, short_repr
from webapp.tokenizer.hf_components import maps_bytes
from webapp.tokenizer import hf_pipeline as hp
from webapp.tokenizer.hf_pipeline import read_pipeline
from webapp.tokenizer.textformats import MAX_JSON_DEPTH, json_depth
from webapp.tokenizer.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits, check_sizes
from webapp.tokenizer.pretokenize import PATTERNS, SCHEMES, check_scheme, scheme_for_pattern

FORMATS: tuple[str, ...] = ("auto", "hf", "vocab-merges", "tiktoken", "minbpe", "seed")
EXPORT_FORMATS: tuple[str, ...] = ("seed", "hf", "minbpe", "tiktoken")
SEED_FORMAT_NAME = "bpe-playground"

ByteRule = tuple[int, int, int]
CharRule = tuple[str, str]


# --------------------------------------------------------------------------
# The GPT-2 byte <-> character alphabet


def _build_byte_alphabet() -> list[str]:
    """GPT-2's printable stand-in character for each byte value.

    Bytes that are visible Latin-1 characters stand for themselves; the 68
    others (controls, space, NBSP, soft hyphen) get U+0100 onwards in byte
    order, so space (0x20) becomes U+0120 'Ġ'.
    """
    visible = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    alphabet: list[str] = []
    shifted = 0
    for byte in range(256):
        if byte in visible:
            alphabet.append(chr(byte))
        else:
            alphabet.append(chr(0x100 + shifted))
            shifted += 1
    return alphabet


BYTE_ALPHABET: tuple[str, ...] = tuple(_build_byte_alphabet())
_CHAR_TO_BYTE: dict[str, int] = {ch: b for b, ch in enumerate(BYTE_ALPHABET)}
# str.translate tables: alphabet char -> the Latin-1 char of its byte (then
# .encode("latin-1") gives the bytes). Code points below 256 that are NOT in
# the alphabet map to U+FFFF so that encoding fails instead of passing through.
_TO_LATIN1 = {ord(ch): chr(b) for ch, b in _CHAR_TO_BYTE.items()}
for _cp in range(256):
    _TO_LATIN1.setdefault(_cp, "\uffff")
_FROM_LATIN1 = {b: ch for b, ch in enumerate(BYTE_ALPHABET)}


def token_to_bytes(token: str) -> bytes | None:
    """The bytes a byte-level token string stands for, or None if it is not one."""
    try:
        return token.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return None


def bytes_to_token(data: bytes) -> str:
    """The byte-level token string for some bytes (inverse of `token_to_bytes`)."""
    return data.decode("latin-1").translate(_FROM_LATIN1)


# --------------------------------------------------------------------------
# The imported tokenizer


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
    source: str = "seed"
    pretokenize: str = "none"
    id_map: dict[int, int] = field(default_factory=dict)
    unknown_bytes: frozenset[int] = frozenset()
    unk_id: int | None = None
    special_tokens: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # A tokenizer.json's normalizer / pre-tokenizer / decoder / added tokens as
    # hf_pipeline describes them (canonical JSON; "" for other formats).
    pipeline: str = ""

    @property
    def rule_count(self) -> int:
        return len(self.merges)

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


def _file_error(message: str, **location: Any) -> TokenizerError:
    return TokenizerError(f"file: {message}", field="file", location=location or None)


def _show(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, bytes) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------
# Detection


def _as_text(content: str | bytes, what: str = "file") -> str:
    if isinstance(content, str):
        return content
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _file_error(
            f"the {what} is not UTF-8 text (invalid byte at offset {exc.start})", offset=exc.start
        ) from None


def detect_format(content: str | bytes, filename: str | None = None) -> str:
    """Which import format `content` is in: hf, seed, vocab-merges, tiktoken or minbpe.

    Decided by the content (the file name only breaks a tie); anything that
    matches no format is a TokenizerError saying what was expected.
    """
    text = _as_text(content)
    stripped = text.lstrip()
    name = (filename or "").lower()
    if stripped.startswith("minbpe"):
        return "minbpe"
    if stripped.startswith(("{", "[")):
        try:
            if json_depth(text) > MAX_JSON_DEPTH:
                raise RecursionError
            data = json.loads(text)
        except (ValueError, RecursionError):  # (the parser then says what is wrong)
            return "hf" if name.endswith("tokenizer.json") else "seed"
        if isinstance(data, dict):
            # (a vocab.json may well hold the tokens "model" or "merges": look at the values)
            if isinstance(data.get("model"), dict):
                return "hf"
            if isinstance(data.get("merges"), list):
                return "seed"
            if data and all(isinstance(k, str) and _is_int(v) for k, v in data.items()):
                raise _file_error(
                    "this looks like a vocab.json on its own; add its merges.txt to import the pair"
                )
        raise _file_error(
            "this JSON is not a tokenizer file: expected a Hugging Face tokenizer.json "
            '(with "model") or a playground seed file (with "merges")'
        )
    if stripped.startswith("#version") or name.endswith("merges.txt"):
        raise _file_error("this looks like a merges.txt on its own; add its vocab.json to import the pair")
    first = next((line for line in text.splitlines() if line.strip()), "")
    parts = first.split()
    if len(parts) == 2 and parts[1].isdigit() and _looks_base64(parts[0]):
        return "tiktoken"
    raise _file_error(
        "not a tokenizer file this playground knows: expected a Hugging Face tokenizer.json, "
        "vocab.json + merges.txt, a tiktoken rank file (base64 token and rank per line), "
        "a minbpe .model file or a playground seed JSON"
    )


def _looks_base64(item: str) -> bool:
    try:
        base64.b64decode(item, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def import_tokenizer(
    content: str | bytes,
    *,
    fmt: str = "auto",
    merges_txt: str | bytes | None = None,
    filename: str | None = None,
    limits: SizeLimits = DEFAULT_SIZE_LIMITS,
) -> LoadedTokenizer:
    """Parse a tokenizer file of the given format (or detect it).

    `limits` bound the bytes the merges may make tokens stand for (formats that
    derive token bytes from the merges: minbpe, playground JSON).

    For the vocab.json + merges.txt pair, `content` is vocab.json and
    `merges_txt` the merges file (fmt "vocab-merges", or "auto" with both given).
    """
    if fmt not in FORMATS:
        raise TokenizerError(
            f"format: expected one of {', '.join(FORMATS)}, got {short_repr(fmt)}", field="format"
        )
    if fmt == "auto":
        fmt = "vocab-merges" if merges_txt is not None else detect_format(content, filename)
    try:
        return _import_as(fmt, content, merges_txt, limits)
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        # A file's structure the parsers did not foresee (a number where a list
        # belongs, deep inside): still the file's fault, said as such, never a 500.
        raise _file_error(
            f"this {fmt} file has an unexpected structure ({type(exc).__name__}: {short_repr(str(exc))})"
        ) from None


def _import_as(fmt: str, content: str | bytes, merges_txt: str | bytes | None, limits: SizeLimits) -> LoadedTokenizer:
    if fmt == "hf":
        return parse_hf_tokenizer_json(content)
    if fmt == "vocab-merges":
        if merges_txt is None:
            raise _file_error("the vocab.json + merges.txt format needs both files; merges.txt is missing")
        return parse_vocab_merges(content, merges_txt)
    if fmt == "tiktoken":
        return parse_tiktoken(content, limits=limits)
    if fmt == "minbpe":
        return parse_minbpe(content, limits=limits)
    return parse_seed(content, limits=limits)


# --------------------------------------------------------------------------
# Hugging Face tokenizer.json and vocab.json + merges.txt


def _load_json(content: str | bytes, what: str) -> Any:
    text = _as_text(content, what)
    if json_depth(text) > MAX_JSON_DEPTH:
        raise _file_error(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep; no tokenizer file is")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _file_error(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            line=exc.lineno,
            column=exc.colno,
        ) from None
    except RecursionError:
        raise _file_error(f"{what} is nested too deeply to be a tokenizer file") from None
    except ValueError as exc:  # an integer of over 4,300 digits
        raise _file_error(f"{what} is not valid JSON: {short_repr(str(exc))}") from None


def _components(node: Any) -> list[dict[str, Any]]:
    """A pre-tokenizer / decoder / normalizer and, for a Sequence, its parts (flattened)."""
    if not isinstance(node, dict):
        return []
    out = [node]
    for key in ("pretokenizers", "decoders", "normalizers", "processors"):
        children = node.get(key)
        if children is not None and not isinstance(children, list):
            raise _file_error(f'"{key}" should be a list, got {_show(children)}')
        for child in children or []:
            out.extend(_components(child))
    return out


def _hf_pretokenize(data: dict[str, Any]) -> tuple[str, list[str]]:
    """The playground scheme closest to the file's pre-tokenizer, and notes.

    The scheme is what the page offers as the file's own splitting; encoding
    with it applies the file's whole pipeline (hf_pipeline), so the notes here
    are only used for files read without one.
    """
    notes: list[str] = []
    parts = _components(data.get("pre_tokenizer"))
    scheme = "none"
    known = True
    for part in parts:
        kind = part.get("type")
        if kind == "Sequence":
            continue
        if kind == "ByteLevel":
            if part.get("add_prefix_space"):
                notes.append("the file adds a space before the text (add_prefix_space); the playground does not")
            if part.get("use_regex", True):
                scheme = "gpt2"
        elif kind == "Split":
            pattern = part.get("pattern") or {}
            regex_text = pattern.get("Regex") if isinstance(pattern, dict) else None
            found = scheme_for_pattern(regex_text) if isinstance(regex_text, str) else None
            if found is None:
                known = False
            else:
                scheme = found
        else:
            known = False
    if not known:
        notes.append(
            "the file's pre-tokenizer is not one the playground has (none, gpt2, cl100k, o200k); "
            f"using {scheme!r}, so ids may differ from the library's on some texts"
        )
    return scheme, notes


def _hf_side_notes(data: dict[str, Any]) -> list[str]:
    notes = []
    if data.get("post_processor"):
        notes.append("the file's post-processor (added special tokens) is not applied by the playground")
    return notes


def _is_byte_level(data: dict[str, Any], vocab: Mapping[str, Any]) -> bool:
    for part in _components(data.get("pre_tokenizer")) + _components(data.get("decoder")):
        if part.get("type") == "ByteLevel":
            return True
    return False


def _looks_byte_level(vocab: Mapping[str, Any]) -> bool:
    """For a bare vocab.json: every token in the byte alphabet, and 'Ġ' in use."""
    if not vocab:
        return False
    alphabet = _CHAR_TO_BYTE
    saw_space = False
    for token in vocab:
        for ch in token:
            if ch not in alphabet:
                return False
        saw_space = saw_space or "Ġ" in token
    return saw_space or all(ch in vocab for ch in BYTE_ALPHABET)


def _check_vocab(vocab: Any, what: str) -> dict[str, int]:
    if not isinstance(vocab, dict):
        raise TokenizerError(
            f"vocab: {what} should be an object {{token: id}}, got {type(vocab).__name__}",
            field="vocab",
        )
    seen: dict[int, str] = {}
    for token, tid in vocab.items():
        if not _is_int(tid) or tid < 0:
            raise TokenizerError(
                f"vocab: token {_show(token)} should have a non-negative integer id, got {_show(tid)}",
                field="vocab",
                location={"key": token},
            )
        if tid in seen:
            raise TokenizerError(
                f"vocab: tokens {_show(seen[tid])} and {_show(token)} both have id {tid}",
                field="vocab",
                location={"key": token},
            )
        seen[tid] = token
    return vocab


def _split_merge_line(
    line: str, vocab: Mapping[str, int], made: set[str] | None = None
) -> tuple[str, str] | None:
    """ "left right" -> (left, right).

    One space is the format. When tokens hold spaces themselves (character
    level), a line like "e  lower" has several readings; the one whose two
    sides and their join are in the vocab is taken, and if that still leaves
    more than one, the one whose sides earlier rules (or single characters)
    already make. None when no single reading remains.
    """
    first = line.find(" ")
    if first > 0 and line.find(" ", first + 1) < 0 and first < len(line) - 1:
        return line[:first], line[first + 1 :]
    # Several spaces: each reading costs slices of the whole line, so only the
    # spaces where both sides have the length of some vocab token are tried, and
    # a line longer than the longest token (plus its space) has no reading at all.
    # (A vocab of D distinct lengths holds at least D^2/2 characters, so D stays small.)
    lengths, longest = _token_lengths(vocab)
    end = len(line) - 1
    if end > longest or first < 0:
        return None
    found = [
        (line[:i], line[i + 1 :])
        for i in _spaces_at(line, lengths)
        if 0 < i < end and (end - i) in lengths
        and line[:i] in vocab and line[i + 1 :] in vocab and line[:i] + line[i + 1 :] in vocab
    ]
    if len(found) > 1 and made is not None:
        found = [(a, b) for a, b in found if (len(a) == 1 or a in made) and (len(b) == 1 or b in made)]
    if len(found) > 1:
        readings = " or ".join(f"{_show(a)} + {_show(b)}" for a, b in found[:3])
        raise TokenizerError(
            f"merges: {_show(line)} can be read as {readings}; tokens that hold spaces make this "
            "line ambiguous (tokenizer.json's [left, right] form is not)",
            field="merges",
        )
    return found[0] if found else None


_LENGTHS_OF: list[Any] = [None, frozenset(), 0]  # [vocab, its token lengths, longest]: the last vocab asked


def _token_lengths(vocab: Mapping[str, int]) -> tuple[frozenset[int], int]:
    """The distinct token lengths of a vocab and the longest (computed once per vocab)."""
    cached = _LENGTHS_OF
    if cached[0] is vocab:
        return cached[1], cached[2]
    lengths = frozenset(map(len, vocab))
    longest = max(lengths, default=0)
    _LENGTHS_OF[:] = [vocab, lengths, longest]
    return lengths, longest


def _spaces_at(line: str, lengths: frozenset[int]) -> list[int]:
    """Offsets of the spaces in `line` that could end a vocab token (str.find steps)."""
    out = []
    i = line.find(" ")
    while i >= 0:
        if i in lengths:
            out.append(i)
        i = line.find(" ", i + 1)
    return out


def _hf_merge_pairs(merges: Any, what: str, vocab: Mapping[str, int]) -> list[tuple[str, str]]:
    """Both merge forms: ["a b", ...] and [["a", "b"], ...]."""
    if not isinstance(merges, list):
        raise TokenizerError(
            f"merges: {what} should be a list, got {type(merges).__name__}", field="merges"
        )
    pairs: list[tuple[str, str]] = []
    made: set[str] = set()
    for number, item in enumerate(merges, start=1):
        if isinstance(item, str):
            pair = _split_merge_line(item, vocab, made)
            if pair is None:
                raise TokenizerError(
                    f'merges: rule {number} should be two tokens separated by one space, got {_show(item)}',
                    field="merges",
                    location={"rule": number},
                )
            pairs.append(pair)
            made.add(pair[0] + pair[1])
        elif (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], str)
        ):
            pairs.append((item[0], item[1]))
            made.add(item[0] + item[1])
        else:
            raise TokenizerError(
                f'merges: rule {number} should be "left right" or ["left", "right"], got {_show(item)}',
                field="merges",
                location={"rule": number},
            )
    return pairs


def _check_pairs_in_vocab(pairs: Sequence[tuple[str, str]], vocab: Mapping[str, int]) -> None:
    for number, (left, right) in enumerate(pairs, start=1):
        for side in (left, right):
            if side not in vocab:
                raise TokenizerError(
                    f"merges: rule {number} uses {_show(side)}, which is not in the vocab",
                    field="merges",
                    location={"rule": number},
                )
        if left + right not in vocab:
            raise TokenizerError(
                f"merges: rule {number} joins {_show(left)} and {_show(right)} into "
                f"{_show(left + right)}, which is not in the vocab",
                field="merges",
                location={"rule": number},
            )


def _order_notes(rules: Iterable[tuple[Any, Any, Any]], is_base: Any) -> list[str]:
    """Rules whose operand only a later rule makes: the library would still apply them.

    `rules` are (left, right, made) triples; `is_base` says which operands
    exist before any rule (single bytes or characters).
    """
    produced: set[Any] = set()
    for number, (left, right, made) in enumerate(rules, start=1):
        if not (is_base(left) or left in produced) or not (is_base(right) or right in produced):
            return [
                f"rule {number} uses a token that no earlier rule makes; the playground visits "
                "each rule once in order, so ids may differ from the library's"
            ]
        produced.add(made)
    return []


def parse_hf_tokenizer_json(content: str | bytes) -> LoadedTokenizer:
    """A Hugging Face tokenizer.json with a BPE model."""
    data = _load_json(content, "tokenizer.json")
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise _file_error('this is not a Hugging Face tokenizer.json: there is no "model" object')
    model = data["model"]
    kind = model.get("type")
    if kind is not None and kind != "BPE":
        raise _file_error(
            f"this tokenizer.json holds a {kind} model; the playground can only represent BPE "
            "(ordered merge rules), not WordPiece, Unigram or WordLevel"
        )
    if "vocab" not in model or "merges" not in model:
        raise _file_error('this tokenizer.json\'s model has no "vocab" and "merges", so it is not BPE')
    vocab = _check_vocab(model["vocab"], "model.vocab")
    pairs = _hf_merge_pairs(model["merges"], "model.merges", vocab)
    added = data.get("added_tokens")
    if added is not None and not isinstance(added, list):
        raise _file_error(f'"added_tokens" should be a list, got {_show(added)}')
    special = {
        t["content"]: t["id"]
        for t in added or []
        if isinstance(t, dict) and isinstance(t.get("content"), str) and _is_int(t.get("id"))
    }
    scheme, _scheme_notes = _hf_pretokenize(data)
    pipeline, notes = read_pipeline(data)  # applied by encode_loaded; notes name what is left out
    notes += _hf_side_notes(data)
    unk_token = model.get("unk_token")
    if model.get("ignore_merges"):
        notes.append(
            "the file takes a whole piece straight from the vocab when it is there (ignore_merges); "
            "the playground always merges, so a few pieces may get other ids"
        )
    if model.get("dropout"):
        notes.append("the file's BPE dropout (random skipping of merges) is not applied")
    if model.get("byte_fallback"):
        notes.append("the file falls back to <0xXX> byte tokens for unknown characters; the playground does not")
    if _is_byte_level(data, vocab):
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise _file_error(
                "this byte-level tokenizer marks word boundaries (continuing_subword_prefix / "
                "end_of_word_suffix), which playground merges cannot represent"
            )
        if not maps_bytes(json.loads(pipeline)["pre_tokenizer"]):
            notes.append("the file's byte-level model gets text without a ByteLevel pre-tokenizer; the "
                         "playground gives it the text's UTF-8 bytes, so ids may differ from the library's")
        loaded = _byte_level_from_strings(
            vocab, pairs, source="hf", pretokenize=scheme, notes=notes,
            special=special, unk_token=unk_token,
        )
        return replace(loaded, pipeline=pipeline)
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _file_error(
                f"this tokenizer marks word boundaries ({key} {_show(model[key])}); the playground's "
                "character-level encoder has no words, so it cannot represent them"
            )
    loaded = _char_level_from_strings(vocab, pairs, source="hf", notes=notes, special=special)
    unk_id = vocab.get(unk_token) if isinstance(unk_token, str) else None
    return replace(loaded, pipeline=pipeline, unk_id=unk_id)


def parse_vocab_merges(
    vocab_json: str | bytes, merges_txt: str | bytes, *, level: str = "auto"
) -> LoadedTokenizer:
    """The GPT-2 style pair: vocab.json {token: id} and merges.txt ("#version" header, "a b" lines)."""
    vocab = _load_json(vocab_json, "vocab.json")
    if isinstance(vocab, dict) and isinstance(vocab.get("model"), dict):
        raise _file_error("the vocab.json given is a whole tokenizer.json; import it on its own")
    vocab = _check_vocab(vocab, "vocab.json")
    text = _as_text(merges_txt, "merges.txt")
    if text.lstrip().startswith("{") or text.lstrip().startswith("["):
        raise _file_error("merges.txt holds JSON; expected one space-separated pair per line", line=1)
    pairs: list[tuple[str, str]] = []
    made: set[str] = set()
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line or (line_no == 1 and line.startswith("#version")):
            continue
        pair = _split_merge_line(line, vocab, made)
        if pair is None:
            raise TokenizerError(
                f"merges: line {line_no} of merges.txt should be two tokens separated by one space, "
                f"got {_show(line)}",
                field="merges",
                location={"line": line_no},
            )
        pairs.append(pair)
        made.add(pair[0] + pair[1])
    byte_level = _looks_byte_level(vocab) if level == "auto" else level == "bytes"
    if byte_level:
        return _byte_level_from_strings(vocab, pairs, source="vocab-merges", pretokenize="gpt2", notes=[])
    return _char_level_from_strings(vocab, pairs, source="vocab-merges", notes=[])


def _char_level_from_strings(
    vocab: dict[str, int], pairs: list[tuple[str, str]], *, source: str, notes: list[str],
    special: Mapping[str, int] | None = None,
) -> LoadedTokenizer:
    _check_pairs_in_vocab(pairs, vocab)
    notes = notes + _order_notes(((a, b, a + b) for a, b in pairs), lambda s: len(s) == 1)
    return LoadedTokenizer(
        level="chars",
        merges=tuple(pairs),
        vocab=dict(vocab),
        source=source,
        pretokenize="none",
        special_tokens=dict(special or {}),
        notes=tuple(notes),
    )


def _byte_level_from_strings(
    vocab: dict[str, int],
    pairs: list[tuple[str, str]],
    *,
    source: str,
    pretokenize: str,
    notes: list[str],
    special: Mapping[str, int] | None = None,
    unk_token: Any = None,
) -> LoadedTokenizer:
    """GPT-2 alphabet strings -> ids and bytes, then the shared byte-level builder."""
    special = dict(special or {})
    _check_pairs_in_vocab(pairs, vocab)
    file_bytes: dict[int, bytes] = {}
    for token, tid in vocab.items():
        data = token_to_bytes(token)
        if data is None:
            if token in special or token == unk_token:
                continue  # special tokens are written as themselves, not in the byte alphabet
            bad = next(ch for ch in token if ch not in _CHAR_TO_BYTE)
            raise TokenizerError(
                f"vocab: token {_show(token)} (id {tid}) has the character {_show(bad)}, which is not in "
                "the byte-level alphabet, so this is not a byte-level vocab",
                field="vocab",
                location={"key": token},
            )
        file_bytes[tid] = data
    rules = [(vocab[a], vocab[b], vocab[a + b]) for a, b in pairs]
    unk_id = vocab.get(unk_token) if isinstance(unk_token, str) else None
    return build_byte_level(
        file_bytes, rules, source=source, pretokenize=pretokenize, notes=notes,
        special=special, unk_id=unk_id,
    )


def build_byte_level(
    file_bytes: Mapping[int, bytes],
    rules: Sequence[tuple[int, int, int]],
    *,
    source: str,
    pretokenize: str,
    notes: Sequence[str] = (),
    special: Mapping[str, int] | None = None,
    unk_id: int | None = None,
) -> LoadedTokenizer:
    """File ids + their bytes + rules in file ids -> playground merges and the id map.

    Single-byte tokens become their byte value. Multi-byte tokens keep their
    file id when every one of them is >= 256 (the usual case); otherwise all of
    them are renumbered 256, 257, ... in order of first use, so no id can clash
    with a byte.
    """
    notes = list(notes)
    byte_file_id: dict[int, int] = {}
    for fid in sorted(file_bytes):
        data = file_bytes[fid]
        if len(data) == 1:
            byte_file_id.setdefault(data[0], fid)
        elif len(data) == 0:
            raise TokenizerError(
                f"vocab: id {fid} is the empty token, which BPE cannot make", field="vocab",
                location={"key": str(fid)},
            )
    multi: list[int] = []
    seen: set[int] = set()
    for left, right, new in rules:
        for fid in (left, right, new):
            if fid not in seen and len(file_bytes[fid]) > 1:
                seen.add(fid)
                multi.append(fid)
    keep_ids = all(fid >= 256 for fid in multi)
    to_pg: dict[int, int] = {}
    for byte, fid in byte_file_id.items():
        to_pg[fid] = byte
    for index, fid in enumerate(multi):
        to_pg[fid] = fid if keep_ids else 256 + index
    merges = tuple((to_pg[a], to_pg[b], to_pg[n]) for a, b, n in rules)
    vocab = {to_pg[fid]: file_bytes[fid] for fid in multi}
    id_map = {pg: fid for fid, pg in to_pg.items() if pg != fid}
    unknown = frozenset(b for b in range(256) if b not in byte_file_id)
    if unknown:
        what = "use the unknown token" if unk_id is not None else "are dropped, as the library does"
        notes.append(f"{len(unknown)} byte values have no token in the file; they {what}")
    notes += _order_notes(merges, lambda i: i < 256)
    return LoadedTokenizer(
        level="bytes",
        merges=merges,
        vocab=vocab,
        source=source,
        pretokenize=pretokenize,
        id_map=id_map,
        unknown_bytes=unknown,
        unk_id=unk_id,
        special_tokens=dict(special or {}),
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------
# tiktoken rank files


def _tiktoken_lines(content: str | bytes, max_token_bytes: int) -> list[tuple[int, bytes, int]]:
    text = _as_text(content, "rank file")
    # base64 of n bytes is 4 * ceil(n / 3) characters: longer is refused before decoding.
    max_chars = 4 * -(-max_token_bytes // 3)
    out: list[tuple[int, bytes, int]] = []
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            raise _file_error(
                f"line {line_no} of the rank file should be a base64 token and a rank, got {_show(line)}",
                line=line_no,
            )
        if len(parts[0]) > max_chars:
            raise _file_error(
                f"line {line_no} of the rank file: a token of about {len(parts[0]) * 3 // 4:,} bytes is over the "
                f"limit of {max_token_bytes:,} bytes per token (setting LIMIT_TOKEN_BYTES)",
                line=line_no, limit=max_token_bytes,
            )
        try:
            # A token of padding only ("=", Whisper's rank files) is the empty
            # token: tiktoken's own loader reads it as b"".
            token = b"" if parts[0].strip("=") == "" else base64.b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise _file_error(
                f"line {line_no} of the rank file: {_show(parts[0])} is not valid base64", line=line_no
            ) from None
        if len(parts[1]) > 18:  # int() refuses over 4300 digits; no real rank is near 10**18
            raise _file_error(
                f"line {line_no} of the rank file: rank {_show(parts[1])} is too large", line=line_no
            )
        out.append((line_no, token, int(parts[1])))
    if not out:
        raise _file_error("the rank file is empty")
    return out


def recover_rank_merges(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes, bytes]]:
    """The merge behind every multi-byte token, in rank order.

    A token of rank r was made from the two parts that byte-pair merging its
    own bytes with only the ranks below r ends with; if that does not end in
    exactly two parts, the ranks are not a BPE merge list.
    """
    out: list[tuple[bytes, bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts = _merge_below(token, rank, ranks)
        if len(parts) != 2:
            raise TokenizerError(
                f"file: token {_show(token)} (rank {rank}) cannot be made by merging two tokens of lower "
                "rank, so these ranks are not a BPE merge list",
                field="file",
                location={"rank": rank},
            )
        out.append((parts[0], parts[1], token))
    return out


#: Tokens up to this long replay with plain lists (fast for the usual short tokens);
#: longer ones with a heap, so a long token costs n log n steps, not n^2.
_SHORT_TOKEN = 48


def _merge_below(token: bytes, limit: int, ranks: Mapping[bytes, int]) -> list[bytes]:
    """tiktoken-style merging of `token`'s bytes using only ranks below `limit`.

    The leftmost lowest-ranked adjacent pair merges first, as in tiktoken. A
    missing pair counts as `limit`, and anything at or above `limit` never
    merges here.
    """
    if len(token) <= _SHORT_TOKEN:
        parts = _merge_below_short(token, limit, ranks)
    else:
        parts = _merge_below_long(token, limit, ranks)
    if len(parts) == 2 and (parts[0] not in ranks or parts[1] not in ranks):
        return []  # a single byte without a rank of its own: no token to merge
    return parts


def _merge_below_short(token: bytes, limit: int, ranks: Mapping[bytes, int]) -> list[bytes]:
    """The rank of every adjacent pair in a list: each step is a C-level min() /
    index() plus two dict lookups (quadratic, so only for short tokens)."""
    get = ranks.get
    parts = [token[i : i + 1] for i in range(len(token))]
    pair_ranks = [get(token[i : i + 2], limit) for i in range(len(token) - 1)]
    while len(parts) > 2:
        lowest = min(pair_ranks)
        if lowest >= limit:
            break
        i = pair_ranks.index(lowest)
        merged = parts[i] + parts[i + 1]
        parts[i] = merged
        del parts[i + 1]
        del pair_ranks[i]
        if i > 0:
            pair_ranks[i - 1] = get(parts[i - 1] + merged, limit)
        if i < len(parts) - 1:
            pair_ranks[i] = get(merged + parts[i + 1], limit)
    return parts


def _merge_below_long(token: bytes, limit: int, ranks: Mapping[bytes, int]) -> list[bytes]:
    """The same merging with parts as offsets into `token` (a linked list) and the
    pairs in a heap keyed (rank, start): the leftmost lowest pair pops first.
    Stale heap entries (a part merged away, or its pair re-ranked) are skipped."""
    get = ranks.get
    n = len(token)
    nxt = list(range(1, n + 1))  # part starting at i ends where the next part starts
    prv = list(range(-1, n - 1))
    alive = [True] * n
    current: dict[int, int] = {}  # start of a part -> rank of the pair it begins
    heap: list[tuple[int, int]] = []
    for i in range(n - 1):
        rank = get(token[i : i + 2], limit)
        if rank < limit:
            current[i] = rank
            heap.append((rank, i))
    heapq.heapify(heap)
    count = n

    def rank_pair(i: int) -> None:
        """(Re)rank the pair that begins at part i."""
        j = nxt[i]
        rank = get(token[i : nxt[j]], limit) if j < n else limit
        if rank < limit:
            current[i] = rank
            heapq.heappush(heap, (rank, i))
        else:
            current.pop(i, None)

    while heap and count > 2:
        rank, i = heapq.heappop(heap)
        if not alive[i] or current.get(i) != rank:
            continue
        j = nxt[i]
        alive[j] = False
        current.pop(j, None)
        nxt[i] = nxt[j]
        if nxt[j] < n:
            prv[nxt[j]] = i
        count -= 1
        rank_pair(i)
        if prv[i] >= 0:
            rank_pair(prv[i])
    out = []
    i = 0
    while i < n:
        out.append(token[i : nxt[i]])
        i = nxt[i]
    return out


def parse_tiktoken(
    content: str | bytes, *, pretokenize: str = "none", limits: SizeLimits = DEFAULT_SIZE_LIMITS
) -> LoadedTokenizer:
    """A tiktoken rank file: `base64(token bytes) rank` per line (each token at most
    `limits.token_bytes` long: recovering a token's merge replays merging on its bytes)."""
    lines = _tiktoken_lines(content, limits.token_bytes)
    ranks: dict[bytes, int] = {}
    by_rank: dict[int, int] = {}
    empty: tuple[int, int] | None = None  # (line, rank) of the empty token, if listed
    for line_no, token, rank in lines:
        if token in ranks:
            raise _file_error(f"line {line_no}: token {_show(token)} is listed twice", line=line_no)
        if rank in by_rank:
            raise _file_error(
                f"line {line_no}: rank {rank} is already given to the token on line {by_rank[rank]}",
                line=line_no,
            )
        by_rank[rank] = line_no
        if not token:
            if empty is not None:
                raise _file_error(f"line {line_no}: token b'' is listed twice", line=line_no)
            empty = (line_no, rank)
            continue
        ranks[token] = rank
    total = sum(map(len, ranks))
    if total > limits.vocab_bytes:  # before replaying merges, which costs per byte
        raise _file_error(
            f"the rank file's tokens hold {total:,} bytes in all, over the limit of {limits.vocab_bytes:,} "
            "bytes (setting LIMIT_VOCAB_BYTES)",
            limit=limits.vocab_bytes,
        )
    triples = recover_rank_merges(ranks)
    file_bytes = {rank: token for token, rank in ranks.items()}
    rules = [(ranks[a], ranks[b], ranks[t]) for a, b, t in triples]
    notes = ["a rank file does not say how text is split; choose the pre-tokenization to match"]
    tok = build_byte_level(file_bytes, rules, source="tiktoken", pretokenize=pretokenize, notes=notes)
    return _with_empty_token(tok, empty) if empty is not None else tok


def _with_empty_token(tok: LoadedTokenizer, empty: tuple[int, int]) -> LoadedTokenizer:
    """Keep a rank file's empty token (Whisper's `= 50256`): never made from text, decodes to nothing.

    BPE never produces it, so it takes no part in the merges; its id decodes
    to no bytes, as in tiktoken. When its rank clashes with an id the
    playground uses (only possible below 256 or after renumbering), it is
    only noted.
    """
    line_no, rank = empty
    used = set(tok.vocab) | set(tok.id_map) | set(tok.id_map.values())
    if rank >= 256 and rank not in used:
        note = (f"line {line_no}: rank {rank} is the empty token (as in Whisper's files); BPE never "
                "makes it, and its id decodes to nothing")
        return replace(tok, vocab={**tok.vocab, rank: b""}, notes=tok.notes + (note,))
    note = f"line {line_no}: rank {rank} is the empty token; BPE never makes it, so it is left out"
    return replace(tok, notes=tok.notes + (note,))


# --------------------------------------------------------------------------
# minbpe .model


def _is_digits(text: str) -> bool:
    """ASCII digits of a sane length: int() refuses over 4,300 digits, and no real id has 19."""
    return 0 < len(text) <= 18 and text.isascii() and text.isdigit()


def parse_minbpe(content: str | bytes, *, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> LoadedTokenizer:
    """minbpe's `.model`: "minbpe v1", the split pattern, special tokens, then "idx1 idx2" per merge."""
    text = _as_text(content, "model file")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "minbpe v1":
        raise _file_error(f'a minbpe .model starts with "minbpe v1", got {_show(lines[0] if lines else "")}', line=1)
    if len(lines) < 3:
        raise _file_error("the minbpe .model ends before its special-token count", line=len(lines))
    pattern = lines[1].rstrip("\r")
    count_text = lines[2].strip()
    if not _is_digits(count_text):
        raise _file_error(f"line 3 of a minbpe .model should be the number of special tokens, got {_show(count_text)}", line=3)
    count = int(count_text)
    special: dict[str, int] = {}
    for offset in range(count):
        line_no = 4 + offset
        parts = lines[line_no - 1].split() if line_no - 1 < len(lines) else []
        if len(parts) != 2 or not _is_digits(parts[1]):
            raise _file_error(f"line {line_no} should be a special token and its id", line=line_no)
        special[parts[0]] = int(parts[1])
    merges: list[ByteRule] = []
    for index, raw in enumerate(lines[3 + count :]):
        line_no = 4 + count + index
        if not raw.strip():
            continue
        parts = raw.split()
        new = 256 + len(merges)
        if len(parts) != 2 or not all(_is_digits(p) for p in parts):
            raise _file_error(f"line {line_no} should be two token ids, got {_show(raw.strip())}", line=line_no)
        left, right = int(parts[0]), int(parts[1])
        for side in (left, right):
            if side >= new:
                raise TokenizerError(
                    f"merges: rule {len(merges) + 1} (line {line_no}) uses id {side}, which no earlier rule makes",
                    field="merges",
                    location={"rule": len(merges) + 1, "line": line_no},
                )
        merges.append((left, right, new))
    check_sizes(merges, limits, "first")  # lengths first: 40 lines can ask for 2^40 bytes
    vocab: dict[int, bytes] = {}
    for left, right, new in merges:
        vocab[new] = _bytes_of(left, vocab) + _bytes_of(right, vocab)
    notes: list[str] = []
    if pattern:
        scheme = scheme_for_pattern(pattern)
        if scheme is None:
            scheme = "none"
            notes.append("the model's split pattern is not gpt2 or cl100k; using none")
    else:
        scheme = "none"
    return LoadedTokenizer(
        level="bytes", merges=tuple(merges), vocab=vocab, source="minbpe",
        pretokenize=scheme, special_tokens=special, notes=tuple(notes),
    )


def _bytes_of(token: int, vocab: Mapping[int, bytes]) -> bytes:
    return bytes([token]) if token < 256 else vocab[token]


# --------------------------------------------------------------------------
# Seed JSON (the playground's own format)


def parse_seed(
    content: str | bytes | Mapping[str, Any], *, limits: SizeLimits = DEFAULT_SIZE_LIMITS
) -> LoadedTokenizer:
    """`{"merges": [...], "vocab": {...}}` as the pages use, plus optional extras we export."""
    from webapp import tokenizer as tk  # late: the engine package imports this module's siblings

    data = content if isinstance(content, Mapping) else _load_json(content, "seed JSON")
    if not isinstance(data, Mapping) or "merges" not in data:
        raise _file_error('a playground seed file is a JSON object with "merges" (and "vocab")')
    merges = data["merges"]
    level = data.get("level")
    if level is None:
        first = merges[0] if isinstance(merges, list) and merges else None
        level = "chars" if isinstance(first, list) and first and isinstance(first[0], str) else "bytes"
    scheme = data.get("pretokenize", "none")
    check_scheme(scheme)
    if level == "chars":
        char_rules = tk.validate_char_merges(merges)
        char_vocab = tk.validate_char_vocab(data.get("vocab") or {})
        return LoadedTokenizer(level="chars", merges=tuple(char_rules), vocab=char_vocab, source="seed")
    if level != "bytes":
        raise _file_error(f'"level" should be "bytes" or "chars", got {_show(level)}')
    rules = tk.validate_byte_merges(merges)
    vocab_given = tk.validate_byte_vocab(data.get("vocab") or {})
    implied = tk.implied_byte_vocab(rules, limits)
    vocab = {i: b for i, b in implied.items() if i >= 256}
    for i, b in vocab_given.items():
        if i >= 256 and i not in vocab:
            vocab[i] = b
    id_map = _int_map(data.get("id_map") or {}, "id_map")
    unknown = data.get("unknown_bytes") or []
    if not isinstance(unknown, list) or not all(_is_int(b) and 0 <= b < 256 for b in unknown):
        raise _file_error('"unknown_bytes" should be a list of byte values 0..255')
    unk_id = data.get("unk_id")
    if unk_id is not None and not _is_int(unk_id):
        raise _file_error('"unk_id" should be an integer or null')
    return LoadedTokenizer(
        level="bytes", merges=tuple(rules), vocab=vocab, source="seed", pretokenize=scheme,
        id_map=id_map, unknown_bytes=frozenset(unknown), unk_id=unk_id,
    )


def _int_map(raw: Any, what: str) -> dict[int, int]:
    if not isinstance(raw, Mapping):
        raise _file_error(f'"{what}" should be an object {{"id": id}}')
    out: dict[int, int] = {}
    for key, value in raw.items():
        try:
            number = int(key)
        except (TypeError, ValueError):
            number = -1
        if number < 0 or not _is_int(value) or value < 0:
            raise _file_error(f'"{what}": entry {_show(key)}: {_show(value)} should map an id to an id')
        out[number] = value
    return out


# --------------------------------------------------------------------------
# Export


def export_seed(tok: LoadedTokenizer) -> str:
    """The playground's own JSON: what the pages' merges / vocab fields accept, plus the id map."""
    out: dict[str, Any] = {"format": SEED_FORMAT_NAME, "level": tok.level}
    if tok.level == "chars":
        out["merges"] = [list(rule) for rule in tok.merges]
        out["vocab"] = dict(tok.vocab)
    else:
        out["merges"] = [list(rule) for rule in tok.merges]
        out["vocab"] = {str(i): list(b) for i, b in sorted(tok.vocab.items())}
        out["pretokenize"] = tok.pretokenize
        if tok.id_map:
            out["id_map"] = {str(k): v for k, v in sorted(tok.id_map.items())}
        if tok.unknown_bytes:
            out["unknown_bytes"] = sorted(tok.unknown_bytes)
            out["unk_id"] = tok.unk_id
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def _export_error(message: str, **location: Any) -> TokenizerError:
    return TokenizerError(f"merges: {message}", field="merges", location=location or None)


def _check_well_formed_bytes(tok: LoadedTokenizer) -> dict[int, bytes]:
    """Byte-level rules a rank-based library applies the same way: every id's bytes.

    Each rule must use only bytes or tokens earlier rules made, make an id
    above 255 that is new, and no two ids may stand for the same bytes.
    """
    made: dict[int, bytes] = {}
    owner: dict[bytes, int] = {}
    for number, (left, right, new) in enumerate(tok.merges, start=1):
        for side in (left, right):
            if side >= 256 and side not in made:
                raise _export_error(
                    f"rule {number} uses token {side}, which no earlier rule makes; a rank-based "
                    "library would apply it anyway, so this list cannot be exported with the same ids",
                    rule=number,
                )
        if new < 256:
            raise _export_error(
                f"rule {number} makes id {new}, a byte id (0-255); the library keeps one token per "
                "byte there, so this list cannot be exported",
                rule=number,
            )
        data = (bytes([left]) if left < 256 else made[left]) + (bytes([right]) if right < 256 else made[right])
        if new in made:
            if made[new] != data:
                raise _export_error(
                    f"rule {number} gives id {new} to other bytes than an earlier rule did", rule=number
                )
            continue
        if data in owner:
            raise _export_error(
                f"rule {number} makes {_show(data)} as id {new}, but id {owner[data]} already stands for it; "
                "the library allows one id per token",
                rule=number,
            )
        made[new] = data
        owner[data] = new
    return made


def _check_well_formed_chars(tok: LoadedTokenizer) -> None:
    produced: set[str] = set()
    vocab = tok.vocab
    for number, (left, right) in enumerate(tok.merges, start=1):
        for side in (left, right):
            if len(side) != 1 and side not in produced:
                raise _export_error(
                    f"rule {number} uses {_show(side)}, which no earlier rule makes; a rank-based "
                    "library would apply it anyway, so this list cannot be exported with the same ids",
                    rule=number,
                )
            if side not in vocab:
                raise TokenizerError(
                    f"vocab: rule {number} uses {_show(side)}, which is not in the vocab; the "
                    "tokenizers library needs every token a rule uses or makes in its vocab",
                    field="vocab",
                    location={"rule": number},
                )
        if left + right not in vocab:
            raise TokenizerError(
                f"vocab: rule {number} makes {_show(left + right)}, which is not in the vocab; the "
                "tokenizers library needs every token a rule uses or makes in its vocab",
                field="vocab",
                location={"rule": number},
            )
        produced.add(left + right)
    for token in vocab:
        if token == "":
            raise TokenizerError("vocab: the empty token cannot be exported", field="vocab", location={"key": ""})


def export_hf(tok: LoadedTokenizer, pretokenize: str | None = None) -> str:
    """A Hugging Face tokenizer.json that `tokenizers` loads and that gives the same ids.

    Byte level: the GPT-2 alphabet, a ByteLevel pre-tokenizer without its regex
    for "none", with it for "gpt2", a Split with the cl100k regex before it for
    "cl100k"; ids are the file ids (`file_ids`). Character level: no
    pre-tokenizer, the vocab as it is, a Fuse decoder.
    """
    scheme = check_scheme(pretokenize if pretokenize is not None else tok.pretokenize)
    model: dict[str, Any] = {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": False,
    }
    if tok.level == "chars":
        _check_well_formed_chars(tok)
        model["vocab"] = dict(sorted(tok.vocab.items(), key=lambda kv: kv[1]))
        model["merges"] = [[a, b] for a, b in tok.merges]
        pre_tokenizer: dict[str, Any] | None = None
        decoder: Any = {"type": "Fuse"}
    else:
        made = _check_well_formed_bytes(tok)
        fmap = tok.id_map
        vocab_ids: dict[str, int] = {}
        for b in range(256):
            if b not in tok.unknown_bytes:
                vocab_ids[BYTE_ALPHABET[b]] = fmap.get(b, b)
        for pid, data in made.items():
            vocab_ids[bytes_to_token(data)] = fmap.get(pid, pid)
        model["vocab"] = dict(sorted(vocab_ids.items(), key=lambda kv: kv[1]))
        model["merges"] = [
            [bytes_to_token(_bytes_of(a, made)), bytes_to_token(_bytes_of(b, made))] for a, b, _ in tok.merges
        ]
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                      "use_regex": scheme == "gpt2"}
        if scheme == "cl100k":
            pre_tokenizer = {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": PATTERNS["cl100k"]},
                     "behavior": "Isolated", "invert": False},
                    dict(byte_level, use_regex=False),
                ],
            }
        else:
            pre_tokenizer = byte_level
        decoder = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": decoder,
        "model": model,
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def char_merges_to_bytes(merges: Sequence[CharRule]) -> tuple[list[ByteRule], list[str]]:
    """Character-level rules as byte-level rules numbered 256, 257, ... (minbpe's numbering).

    A character of several UTF-8 bytes is first built from its bytes (rules
    joining a lead byte to its continuation bytes only ever match inside that
    character), then each string rule joins the ids of its two sides.
    """
    ids: dict[bytes, int] = {bytes([b]): b for b in range(256)}
    rules: list[ByteRule] = []
    notes: list[str] = []

    def ensure(token: str) -> int:
        data = token.encode("utf-8")
        if data in ids:
            return ids[data]
        if len(token) == 1:
            # build the character from its bytes, left to right
            current = data[:1]
            for k in range(1, len(data)):
                nxt = current + data[k : k + 1]
                if nxt not in ids:
                    ids[nxt] = 256 + len(rules)
                    rules.append((ids[current], data[k], ids[nxt]))
                current = nxt
            return ids[data]
        raise _export_error(f"{_show(token)} is used before any rule makes it")

    for left, right in merges:
        a, b = ensure(left), ensure(right)
        data = (left + right).encode("utf-8")
        if data in ids:
            raise _export_error(f"{_show(left + right)} is made twice; minbpe numbering needs one rule per token")
        ids[data] = 256 + len(rules)
        rules.append((a, b, ids[data]))
    if any(len(t.encode("utf-8")) > 1 for rule in merges for t in rule if len(t) == 1):
        notes.append("rules that build multi-byte characters from their bytes come first")
    return rules, notes


def _minbpe_rules(tok: LoadedTokenizer) -> list[ByteRule]:
    if tok.level == "chars":
        return char_merges_to_bytes(tok.merges)[0]
    _check_well_formed_bytes(tok)  # refuse what a rank-based encoder would read differently
    # minbpe numbers merged tokens 256, 257, ... in rule order: renumber.
    renum: dict[int, int] = {b: b for b in range(256)}
    rules: list[ByteRule] = []
    for left, right, new in tok.merges:
        if new in renum and new >= 256:
            continue  # the same rule again adds nothing in rank-based encoding
        renum[new] = 256 + len(rules)
        rules.append((renum[left], renum[right], renum[new]))
    return rules


def export_minbpe(tok: LoadedTokenizer, pretokenize: str | None = None) -> str:
    """A minbpe-style `.model`: merges as "idx1 idx2" lines, merged ids 256, 257, ... in order."""
    scheme = check_scheme(pretokenize if pretokenize is not None else tok.pretokenize)
    lines = ["minbpe v1", PATTERNS.get(scheme, ""), str(len(tok.special_tokens))]
    for name, sid in tok.special_tokens.items():
        lines.append(f"{name} {sid}")
    for left, right, _new in _minbpe_rules(tok):
        lines.append(f"{left} {right}")
    return "\n".join(lines) + "\n"


def export_tiktoken(tok: LoadedTokenizer) -> str:
    """A tiktoken rank file: every token's bytes in base64 and its id as the rank.

    tiktoken merges the lowest rank first and knows no rule list, so the file
    gives the playground's ids only when (checked by `_check_rank_order`)
    the ids grow in rule order and tiktoken's own merging of every token's
    bytes ends in that token's rule. Otherwise export is refused, naming the
    rule: renumbering would silently change the ids.
    """
    if tok.level == "chars":
        rules = char_merges_to_bytes(tok.merges)[0]
        tok = LoadedTokenizer(level="bytes", merges=tuple(rules), vocab={}, source=tok.source)
    made = _check_well_formed_bytes(tok)
    entries: list[tuple[int, bytes]] = []
    for b in range(256):
        if b not in tok.unknown_bytes:
            entries.append((tok.id_map.get(b, b), bytes([b])))
    for pid, data in made.items():
        entries.append((tok.id_map.get(pid, pid), data))
    entries.sort()
    _check_rank_order(tok, made, {data: rank for rank, data in entries})
    return "".join(f"{base64.b64encode(data).decode('ascii')} {rank}\n" for rank, data in entries)


def _check_rank_order(tok: LoadedTokenizer, made: Mapping[int, bytes], ranks: Mapping[bytes, int]) -> None:
    """Refuse rules that tiktoken, merging by rank, would apply differently.

    Two conditions: each rule's new id (the rank tiktoken will use) is above
    every earlier rule's, and replaying tiktoken's merging on a token's bytes
    with the lower ranks ends in the rule's own two parts.
    """
    id_map = tok.id_map
    highest = -1
    highest_rule = 0
    seen: set[int] = set()
    for number, (left, right, new) in enumerate(tok.merges, start=1):
        if new in seen:
            continue  # a repeated rule: the first one made the token
        seen.add(new)
        rank = id_map.get(new, new)
        if rank <= highest:
            raise _export_error(
                f"rule {number} makes id {rank}, but the earlier rule {highest_rule} makes id {highest}; "
                "a tiktoken file ranks tokens by id and tiktoken merges the lowest rank first, so it would "
                f"apply rule {number} earlier and give other ids. Number the new ids in rule order, or "
                "export as tokenizer.json",
                rule=number,
            )
        highest, highest_rule = rank, number
        data = made[new]
        parts = _merge_below(data, rank, ranks)
        wanted = [bytes([left]) if left < 256 else made[left], bytes([right]) if right < 256 else made[right]]
        if parts != wanted:
            shown = " + ".join(repr(p) for p in parts) or "no two tokens"
            raise _export_error(
                f"rule {number} makes {data!r} from {wanted[0]!r} + {wanted[1]!r}, but tiktoken, merging "
                f"by rank, would make it from {shown}; this list cannot be exported as a rank file "
                "with the same ids",
                rule=number,
            )


def export_tokenizer(tok: LoadedTokenizer, fmt: str, pretokenize: str | None = None) -> tuple[str, str, str]:
    """(content, file name, media type) for an export format."""
    if fmt == "seed":
        return export_seed(tok), "tokenizer.playground.json", "application/json"
    if fmt == "hf":
        return export_hf(tok, pretokenize), "tokenizer.json", "application/json"
    if fmt == "minbpe":
        return export_minbpe(tok, pretokenize), "tokenizer.model", "text/plain; charset=utf-8"
    if fmt == "tiktoken":
        return export_tiktoken(tok), "tokenizer.tiktoken", "text/plain; charset=utf-8"
    raise TokenizerError(
        f"format: expected one of {', '.join(EXPORT_FORMATS)}, got {short_repr(fmt)}", field="format"
    )


def from_playground(
    *, level: str, merges: Sequence[Any], vocab: Mapping[Any, Any] | None = None, pretokenize: str = "none",
    limits: SizeLimits = DEFAULT_SIZE_LIMITS,
) -> LoadedTokenizer:
    """A LoadedTokenizer from what a page holds (already validated merges / vocab).

    Byte-level token lengths are checked against `limits` before any bytes are built."""
    check_scheme(pretokenize)
    if level == "chars":
        return LoadedTokenizer(
            level="chars", merges=tuple(tuple(r) for r in merges), vocab=dict(vocab or {}),
            source="playground",
        )
    rules = tuple(tuple(r) for r in merges)
    check_sizes(rules, limits, "last")
    made: dict[int, bytes] = {}
    for left, right, new in rules:
        if new >= 256:
            # odd lists (operands made only later) get no bytes here; export refuses them
            made[new] = _bytes_of_or_empty(left, made) + _bytes_of_or_empty(right, made)
    return LoadedTokenizer(
        level="bytes", merges=rules, vocab={i: b for i, b in made.items() if b},
        source="playground", pretokenize=pretokenize,
    )


def _bytes_of_or_empty(token: int, made: Mapping[int, bytes]) -> bytes:
    return bytes([token]) if token < 256 else made.get(token, b"")


def with_pretokenize(tok: LoadedTokenizer, scheme: str) -> LoadedTokenizer:
    """The same tokenizer with another pre-tokenization choice."""
    return replace(tok, pretokenize=check_scheme(scheme))


__all__ = [
    "BYTE_ALPHABET", "EXPORT_FORMATS", "FORMATS", "LoadedTokenizer", "SCHEMES",
    "build_byte_level", "bytes_to_token", "char_merges_to_bytes", "detect_format",
    "export_hf", "export_minbpe", "export_seed", "export_tiktoken", "export_tokenizer",
    "from_playground", "import_tokenizer", "parse_hf_tokenizer_json", "parse_minbpe",
    "parse_seed", "parse_tiktoken", "parse_vocab_merges", "recover_rank_merges",
    "token_to_bytes", "with_pretokenize", "encode_loaded", "encode_loaded_trace", "dumps_stored", "loads_stored",
    "char_pipeline_trace", "decode_loaded", "uses_pipeline",
]


# --------------------------------------------------------------------------
# Encoding with a loaded byte-level tokenizer (the file's ids)

#: Stands for a byte the file has no token for, when the file has no unknown
#: token either: the library drops such bytes, and so do `encode_loaded*`.
DROPPED = -1


def _relabel_map(tok: LoadedTokenizer) -> dict[int, int]:
    mapping = dict(tok.id_map)
    for b in tok.unknown_bytes:
        mapping[b] = tok.unk_id if tok.unk_id is not None else DROPPED
    return mapping


def uses_pipeline(tok: LoadedTokenizer, scheme: str | None = None) -> bool:
    """Does encoding apply the file's own pipeline? Yes unless another scheme is chosen."""
    return bool(tok.pipeline) and (scheme is None or scheme == tok.pretokenize)


def _pipeline_ids(tok: LoadedTokenizer, text: str, compiled: Any, allowed: frozenset[str] | None = None) -> list[int]:
    """The file's ids for `text` through its normalizer, added tokens and pre-tokenizer."""
    from webapp import tokenizer as tk

    text = tk.validate_text(text)
    pipeline = hp.compile_pipeline(tok.pipeline)
    parts = pipeline.parts(text, allowed)
    if tok.level == "chars":
        merges = compiled if compiled is not None else tk.compile_char_merges(list(tok.merges))
        return hp.encode_char_parts(pipeline, parts, merges.tokens, tok.vocab, tok.unk_id)
    engine = compiled if compiled is not None else tk.compile_byte_merges(list(tok.merges))
    drop = tok.unknown_bytes if tok.unk_id is None else frozenset()
    return hp.encode_byte_parts(pipeline, parts, lambda data, cuts: tok.file_ids(engine.encode_bytes(data, cuts)), drop)


def encode_loaded(
    tok: LoadedTokenizer, text: str, scheme: str | None = None, *, compiled: Any = None,
    allowed_special: frozenset[str] | None = None,
) -> list[int]:
    """The file's ids for `text`.

    With the file's pipeline (a tokenizer.json, its own scheme): normalizer,
    added tokens and pre-tokenizer as the library applies them, then the
    merges per piece; `allowed_special` (None: all, the library's default)
    says which special tokens are split out, the others stay text as with the
    library's `encode_special_tokens`. Otherwise: playground encoding per
    piece of `scheme`, then the id map. Character level needs a pipeline.
    """
    from webapp.tokenizer.pretokenize import pretokenized_encode

    if uses_pipeline(tok, scheme):
        return _pipeline_ids(tok, text, compiled, allowed_special)
    if tok.level != "bytes":
        raise ValueError("encode_loaded is for byte-level tokenizers; use bpe_encode_text for characters")
    ids = pretokenized_encode(text, compiled if compiled is not None else tok.merges, scheme or tok.pretokenize)
    return tok.file_ids(ids)


def encode_loaded_trace(
    tok: LoadedTokenizer,
    text: str,
    scheme: str | None = None,
    *,
    compiled: Any = None,
    max_steps: int = 200,
    max_tokens: int = 3000,
    max_sequence: int = 2000,
    allowed_special: frozenset[str] | None = None,
) -> Any:
    """`pretokenized_encode_trace` shown in the file's ids (tokens, steps and sequences too);
    with the file's pipeline, `_pipeline_trace` (`allowed_special` as for `encode_loaded`)."""
    from webapp.tokenizer.pretokenize import pretokenized_encode_trace

    if tok.level != "bytes":
        raise ValueError("encode_loaded_trace is for byte-level tokenizers")
    if uses_pipeline(tok, scheme):
        return _pipeline_trace(tok, text, compiled, dict(max_steps=max_steps, max_tokens=max_tokens,
                                                          max_sequence=max_sequence), allowed_special)
    trace = pretokenized_encode_trace(
        text,
        compiled if compiled is not None else tok.merges,
        scheme or tok.pretokenize,
        max_steps=max_steps,
        max_tokens=max_tokens,
        max_sequence=max_sequence,
        relabel=_relabel_map(tok),
    )
    if tok.unknown_bytes and tok.unk_id is None:
        trace = replace(
            trace,
            ids=[i for i in trace.ids if i != DROPPED],
            tokens=[t for t in trace.tokens if t.id != DROPPED],
        )
    return trace


def _pipeline_trace(
    tok: LoadedTokenizer, text: str, compiled: Any, caps: dict[str, int], allowed: frozenset[str] | None = None
) -> Any:
    """The trace of the text the model sees (normalized, prefixed), in the file's ids.

    Spans index `trace.text` (the pipeline's output), not the typed text.
    Added tokens get a cut at every byte (so no rule touches them) and are
    shown as one token each; `ids` are `encode_loaded`'s.
    """
    from webapp import tokenizer as tk
    from webapp.tokenizer.traces import Token

    if tok.level == "chars":
        raise ValueError("the pipeline trace here is for byte-level tokenizers; see char_pipeline_trace")
    text = tk.validate_text(text)
    pipeline = hp.compile_pipeline(tok.pipeline)
    parts = pipeline.parts(text, allowed)
    shown, pieces, added = hp.layout(pipeline, parts, unit="bytes")
    cuts = [start for start, _ in pieces]
    for start, end, _ in added:
        cuts.extend(range(start, end))
    trace = tk.encode_trace(shown, compiled if compiled is not None else tok.merges,
                            cuts=sorted(cuts), relabel=_relabel_map(tok), **caps)
    at = {start: (end, aid) for start, end, aid in added}
    tokens: list[Any] = []
    skip_to = -1
    data = shown.encode("utf-8", "surrogatepass")
    for token in trace.tokens:
        if token.start < skip_to:
            continue
        if token.start in at:
            end, aid = at[token.start]
            tokens.append(Token(id=aid, value=data[token.start:end], start=token.start, end=end))
            skip_to = end
        elif token.id != DROPPED:
            tokens.append(token)
    ids = encode_loaded(tok, text, compiled=compiled, allowed_special=allowed)
    return replace(trace, ids=ids, tokens=tokens, pieces=pieces, text=shown)


def char_pipeline_trace(
    tok: LoadedTokenizer, text: str, *, allowed_special: frozenset[str] | None = None, **caps: int
) -> Any:
    """For the Characters page: the trace of what the model sees, in the file's ids (see _pipeline_trace)."""
    from webapp import tokenizer as tk
    from webapp.tokenizer.traces import Token

    text = tk.validate_text(text)
    pipeline = hp.compile_pipeline(tok.pipeline)
    vocab = dict(tok.vocab)
    parts = pipeline.parts(text, allowed_special)
    if tok.unk_id is None:  # the library leaves unknown characters out before merging
        parts = [p if p[0] is not None else (None, ["".join(ch for ch in piece if ch in vocab) for piece in p[1]])
                 for p in parts]
    shown, pieces, added = hp.layout(pipeline, parts, unit="chars")
    pieces = [(s, e) for s, e in pieces if e > s]
    cuts = [start for start, _ in pieces]
    if tok.unk_id is not None:
        for ch in set(shown).difference(vocab):
            vocab[ch] = tok.unk_id
    for start, end, aid in added:
        cuts.extend(range(start, end))
        for ch in shown[start:end]:
            vocab.setdefault(ch, aid)  # (shown as one token below; the lookup must not fail)
    trace = tk.encode_text_trace(shown, vocab, list(tok.merges), cuts=sorted(cuts), **caps)
    at = {start: (end, aid) for start, end, aid in added}
    tokens: list[Any] = []
    skip_to = -1
    for token in trace.tokens:
        if token.start < skip_to:
            continue
        if token.start in at:
            end, aid = at[token.start]
            tokens.append(Token(id=aid, value=shown[token.start:end], start=token.start, end=end))
            skip_to = end
        else:
            tokens.append(token)
    ids = encode_loaded(tok, text, allowed_special=allowed_special)
    return replace(trace, ids=ids, tokens=tokens, pieces=pieces, text=shown)


def decode_loaded(tok: LoadedTokenizer, ids: Sequence[int], *, skip_special: bool = True) -> str:
    """The library's `decode(ids, skip_special_tokens=skip_special)` for a file with a pipeline."""
    if not tok.pipeline:
        raise ValueError("decode_loaded needs a tokenizer.json pipeline")
    pipeline = hp.compile_pipeline(tok.pipeline)
    if tok.level == "chars":
        inverse = {v: k for k, v in tok.vocab.items()}
        return hp.decode_ids(pipeline, ids, inverse.get, skip_special=skip_special)
    by_id = tok.file_vocab()
    return hp.decode_ids(
        pipeline, ids, lambda i: bytes_to_token(by_id[i]) if i in by_id else None, skip_special=skip_special
    )


# --------------------------------------------------------------------------
# Storage form: compact canonical bytes for the content-addressed store

# Version 2 adds the tokenizer.json pipeline and the character level's
# unknown token; version 3 writes byte-level merges as base64 of little-endian
# int64 triples (read in milliseconds; 1 and 2 wrote a JSON list). All still load.
STORED_VERSION = 3
_READABLE_VERSIONS = (1, 2, 3)
_INT64_MAX = (1 << 63) - 1


def dumps_stored(tok: LoadedTokenizer, *, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> bytes:
    """Canonical bytes for a tokenizer (same tokenizer, same bytes, same id).

    The byte-level vocab is left out: it follows from the merges.
    """
    doc: dict[str, Any] = {
        "v": STORED_VERSION,
        "level": tok.level,
        "merges": _stored_merges(tok),
        "source": tok.source,
        "pretokenize": tok.pretokenize,
        "special_tokens": dict(sorted(tok.special_tokens.items())),
        "notes": list(tok.notes),
    }
    if tok.pipeline:
        doc["pipeline"] = tok.pipeline
    if tok.level == "chars":
        doc["vocab"] = dict(sorted(tok.vocab.items()))
        if tok.unk_id is not None:
            doc["unk_id"] = tok.unk_id
    else:
        derived = _derived_byte_vocab(tok.merges, limits)
        doc["extra_vocab"] = [
            [i, list(b)] for i, b in sorted(tok.vocab.items()) if derived.get(i) != b
        ]
        doc["id_map"] = [[k, v] for k, v in sorted(tok.id_map.items())]
        doc["unknown_bytes"] = sorted(tok.unknown_bytes)
        doc["unk_id"] = tok.unk_id
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def _stored_pipeline(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("pipeline")
    if value:
        hp.compile_pipeline(value)  # (fails here, not at the first encode, if it cannot be read)
    return value


def _stored_merges(tok: LoadedTokenizer) -> Any:
    """Byte-level merges as one base64 string of int64s (parsed in milliseconds); else a JSON list.

    Ids beyond int64 (never in a real file) keep the JSON list form.
    """
    if tok.level == "bytes" and tok.merges and max(map(max, tok.merges)) <= _INT64_MAX:
        flat = np.array(tok.merges, dtype="<i8").reshape(-1)
        return base64.b64encode(flat.tobytes()).decode("ascii")
    return [list(rule) for rule in tok.merges]


def _loaded_byte_rules(stored: Any) -> tuple[ByteRule, ...]:
    """The inverse of `_stored_merges` for the byte level."""
    if isinstance(stored, str):
        flat = np.frombuffer(base64.b64decode(stored, validate=True), dtype="<i8")
        if len(flat) % 3 or (len(flat) and int(flat.min()) < 0):
            raise ValueError("stored merges are not triples of non-negative ids")
        values = iter(flat.tolist())
        return tuple(zip(values, values, values))  # triples straight from the flat list
    return tuple((int(a), int(b), int(n)) for a, b, n in stored)


def _derived_byte_vocab(rules: Sequence[ByteRule], limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> dict[int, bytes]:
    """{id: bytes} for every id above 255 a rule makes (first definition wins), lengths checked first.

    An operand is its byte below 256, else what an earlier rule made, else
    nothing (b"") - `known` holds exactly that, so the loop is one lookup each.
    """
    check_sizes(rules, limits, "first")
    known: dict[int, bytes] = dict(_SINGLE_BYTES)
    get = known.get
    for left, right, new in rules:
        if new not in known and new >= 256:
            known[new] = get(left, b"") + get(right, b"")
    for b in range(256):
        del known[b]
    if b"" in known.values():
        return {i: b for i, b in known.items() if b}
    return known


_SINGLE_BYTES: dict[int, bytes] = {b: bytes((b,)) for b in range(256)}


def loads_stored(data: bytes, *, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> LoadedTokenizer:
    """The inverse of `dumps_stored` (light checks: the bytes were written by us;
    token sizes are checked again, since the limits may have been lowered since)."""
    try:
        doc = json.loads(data.decode("utf-8"))
        if doc.get("v") not in _READABLE_VERSIONS:
            raise ValueError(f"stored tokenizer version {doc.get('v')!r}")
        level = doc["level"]
        common: dict[str, Any] = dict(
            source=str(doc["source"]),
            pretokenize=check_scheme(doc["pretokenize"]),
            special_tokens={str(k): int(v) for k, v in doc["special_tokens"].items()},
            notes=tuple(str(n) for n in doc["notes"]),
            pipeline=_stored_pipeline(doc.get("pipeline", "")),
        )
        if level == "chars":
            pairs = tuple((str(a), str(b)) for a, b in doc["merges"])
            tokens = {str(k): int(v) for k, v in doc["vocab"].items()}
            unk = doc.get("unk_id")
            return LoadedTokenizer(level="chars", merges=pairs, vocab=tokens,
                                   unk_id=None if unk is None else int(unk), **common)
        rules = _loaded_byte_rules(doc["merges"])
        vocab = _derived_byte_vocab(rules, limits)
        for i, values in doc["extra_vocab"]:
            vocab[int(i)] = bytes(values)
        return LoadedTokenizer(
            level="bytes",
            merges=rules,
            vocab=vocab,
            id_map={int(k): int(v) for k, v in doc["id_map"]},
            unknown_bytes=frozenset(int(b) for b in doc["unknown_bytes"]),
            unk_id=None if doc["unk_id"] is None else int(doc["unk_id"]),
            **common,
        )
    except TokenizerError:
        raise  # over a size limit (lowered since it was stored): says which rule
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError, binascii.Error) as exc:
        raise TokenizerError(f"tokenizer: the stored tokenizer cannot be read ({exc})", field="tokenizer") from None
