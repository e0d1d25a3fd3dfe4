"""The tokenizer inside a llama.cpp GGUF file, opened with llama.cpp's ids (`parse_gguf`).

Only the metadata is read (formats/gguf.py), and translated into what an existing builder takes: a
"gpt2" file into a tokenizer.json document (BPE, llama.cpp's split for its `pre`, added tokens, BOS /
EOS), a "llama" file into a .model's pieces and settings (merges by score, llama.cpp's settings). Special
tokens are typed and cut as llama.cpp does (hf/longest_first.py). Other tokenizer types are refused,
naming them. Details: docs/formats.md, "GGUF files"; checked against llama.cpp by
tests/unit/tokenizer/formats/test_gguf_llama_cpp.py.
"""

from __future__ import annotations

import dataclasses
import json
from itertools import repeat
from typing import Any

import numpy as np
from sentencepiece import sentencepiece_model_pb2 as pb

from webapp.tokenizer.chat.templates import (
    DEFAULT_CHAT_LIMITS, ChatLimits, ChatTemplate, check_compiles, check_template_size,
)
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits
from webapp.tokenizer.errors import TokenizerError, short_repr
from webapp.tokenizer.formats.common import file_error
from webapp.tokenizer.formats.gguf import read_metadata
from webapp.tokenizer.formats.gguf_pre import PreType, pre_type_for, split_steps
from webapp.tokenizer.formats.hf_json import tokenizer_from_document
from webapp.tokenizer.formats.sentencepiece import sentencepiece_tokenizer
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.models import LIBRARY_MODEL

SOURCE = "gguf"
UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = range(7)
#: Tokenizer types llama.cpp knows that the playground does not open, with what they are.
OTHER_TYPES = {
    "bert": "WordPiece (BERT)", "t5": "Unigram (T5's SentencePiece)", "rwkv": "RWKV's greedy trie",
    "plamo2": "PLaMo-2's Unigram", "gemma4": "Gemma 4's BPE over raw UTF-8", "none": "no vocabulary",
    "no_vocab": "no vocabulary", "hybriddna": "BPE with DNA k-mers", "whitespace": "whitespace-split BPE",
}
_KEY = "tokenizer.ggml."
#: The special-token ids llama.cpp reads, by the key's last part, and its defaults per tokenizer type.
_DEFAULT_IDS = {"llama": {"bos": 1, "eos": 2, "unknown": 0}, "gpt2": {"bos": 11, "eos": 11}}


def parse_gguf(content: str | bytes, limits: SizeLimits = DEFAULT_SIZE_LIMITS,
               chat_limits: ChatLimits = DEFAULT_CHAT_LIMITS) -> LoadedTokenizer:
    """The tokenizer of a GGUF file (or of a prefix holding its metadata), encoding as llama.cpp does."""
    if isinstance(content, str):
        raise file_error("a GGUF file is binary; upload the file itself (or its start, which holds the metadata)")
    values = read_metadata(content).values
    kind = values.get(_KEY + "model")
    if kind is None:
        raise file_error("this GGUF file holds no tokenizer: it has no tokenizer.ggml.model key")
    if not isinstance(kind, str):
        raise _key_error("model", "a string")
    if kind not in ("gpt2", "llama"):
        what = OTHER_TYPES.get(kind, "a type llama.cpp does not know")
        raise file_error(f"this GGUF file's tokenizer is of type {short_repr(kind)} ({what}); the playground opens "
                         "the types 'gpt2' (byte-level BPE) and 'llama' (SentencePiece BPE)")
    tokens, notes = _tokens(values)
    types = _numbers(values, "token_type", len(tokens), NORMAL, "INT32")
    ids = _special_ids(values, kind, len(tokens))
    attrs = token_attributes(values, tokens, types, ids)
    if kind == "gpt2":
        pre_name = values.get(_KEY + "pre")
        if pre_name is not None and not isinstance(pre_name, str):
            raise _key_error("pre", "a string")
        pre, pre_note = pre_type_for(pre_name)
        if pre.no_bos:
            ids.pop("bos", None)
        add_bos, add_eos = _adds(values, ids, pre.add_bos)
        if pre_name is None or pre_note is not None:
            named = f"{'none named' if pre_name is None else short_repr(pre_name)}, split as {pre.name!r}"
        else:
            named = repr(pre_name) if pre_name == pre.name else f"{pre_name!r} (llama.cpp's {pre.name!r} type)"
        notes.insert(0, f"GGUF (llama.cpp) byte-level BPE, {len(tokens):,} tokens; pre-tokenizer {named}: "
                        f"{pre.summary}")
        if pre_note:
            notes.append(pre_note)
        tok = _byte_level(values, tokens, attrs, pre, ids, add_bos, add_eos, limits, notes)
    else:
        add_bos, add_eos = _adds(values, ids, True)
        tok = _sentencepiece(values, tokens, types, attrs, ids, add_bos, add_eos, notes)
    chat = _chat_template(values, tokens, ids, chat_limits)
    return _with(tok, chat=chat)


def _with(tok: LoadedTokenizer, **changes: Any) -> LoadedTokenizer:
    """`tok` with fields changed, keeping the model built when it was read (a SentencePiece model's)."""
    changed = dataclasses.replace(tok, **changes)
    changed.built.carry(tok.built, LIBRARY_MODEL)
    return changed


def _key_error(key: str, expected: str) -> TokenizerError:
    return TokenizerError(f"tokenizer.ggml.{key}: should be {expected}", field="file", location={"key": _KEY + key})


# --- what both types share -----------------------------------------------------------------


def _tokens(values: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The token list (llama.cpp names an empty token "[EMPTY_<id>]"; a repeated one is refused), and notes."""
    tokens = values.get(_KEY + "tokens")
    if not isinstance(tokens, list) or not all(map(isinstance, tokens, repeat(str))):
        if tokens is None:
            raise file_error("this GGUF file's tokenizer has no token list (tokenizer.ggml.tokens)")
        raise _key_error("tokens", "an array of strings")
    if not tokens:
        raise file_error("this GGUF file's token list (tokenizer.ggml.tokens) is empty")
    notes: list[str] = []
    out = list(tokens)
    empty = [i for i, t in enumerate(out) if not t]
    for i in empty:
        out[i] = f"[EMPTY_{i}]"
    if empty:
        notes.append(f"{len(empty):,} empty token(s) named [EMPTY_<id>], as llama.cpp names them")
    _check_utf8(out)
    if len(set(out)) == len(out):
        return out, notes
    seen: dict[str, int] = {}
    for i, token in enumerate(out):
        first = seen.setdefault(token, i)
        if first != i:
            raise TokenizerError(f"tokenizer.ggml.tokens: token {i} ({short_repr(token)}) is already token {first}; "
                                 "llama.cpp refuses a repeated token", field="file",
                                 location={"key": _KEY + "tokens", "index": i})
    return out, notes


def _check_utf8(tokens: list[str]) -> None:
    """Refuse a token that is not UTF-8 (the reader keeps its bytes as lone surrogates), naming it."""
    try:
        "".join(tokens).encode("utf-8")
    except UnicodeEncodeError:
        for i, token in enumerate(tokens):
            try:
                token.encode("utf-8")
            except UnicodeEncodeError:
                raise TokenizerError(f"tokenizer.ggml.tokens: token {i} is not UTF-8 "
                                     f"({short_repr(token.encode('utf-8', 'surrogateescape'))})", field="file",
                                     location={"key": _KEY + "tokens", "index": i}) from None


def _numbers(values: dict[str, Any], key: str, count: int, default: float, kind: str) -> np.ndarray[Any, Any]:
    """A per-token number array (token types, scores): at least one per token, as llama.cpp requires."""
    found = values.get(_KEY + key)
    if found is None:
        return np.full(count, default, dtype=np.float64 if kind == "FLOAT32" else np.int64)
    if not isinstance(found, np.ndarray) or found.dtype.kind not in ("iu" if kind == "INT32" else "iuf"):
        raise _key_error(key, f"an array of {kind} numbers")
    if len(found) < count:
        raise TokenizerError(f"tokenizer.ggml.{key}: {len(found):,} values for {count:,} tokens", field="file",
                             location={"key": _KEY + key})
    return found[:count]


def _special_ids(values: dict[str, Any], kind: str, count: int) -> dict[str, int]:
    """The special tokens' ids (bos, eos, unknown, ...): llama.cpp's defaults, then the file's keys;
    an id past the vocabulary is left out (llama.cpp warns and keeps its default)."""
    ids = {name: i for name, i in _DEFAULT_IDS[kind].items() if i < count}
    for name in ("bos", "eos", "unknown", "eot", "eom", "seperator", "padding"):
        value = values.get(f"{_KEY}{name}_token_id")
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count:
            ids[name] = value
    return ids


def _adds(values: dict[str, Any], ids: dict[str, int], add_bos: bool) -> tuple[bool, bool]:
    """add_bos / add_eos: the type's defaults, then the file's keys; on without its token is refused, as llama.cpp
    refuses it."""
    adds = {"bos": add_bos, "eos": False}
    for name in adds:
        value = values.get(f"{_KEY}add_{name}_token")
        if isinstance(value, bool):
            adds[name] = value
        if adds[name] and name not in ids:
            raise TokenizerError(f"tokenizer.ggml.add_{name}_token is true, but tokenizer.ggml.{name}_token_id is "
                                 "not set (or not a token); llama.cpp refuses such a file", field="file",
                                 location={"key": f"{_KEY}add_{name}_token"})
    return adds["bos"], adds["eos"]


def _chat_template(values: dict[str, Any], tokens: list[str], ids: dict[str, int], limits: ChatLimits) -> str:
    """`tokenizer.chat_template` (and its "tool_use" variant) as the tokenizer's chat template, "" for none."""
    template = values.get("tokenizer.chat_template")
    if template is None:
        return ""
    tool_use = values.get("tokenizer.chat_template.tool_use")
    for key, text in (("tokenizer.chat_template", template), ("tokenizer.chat_template.tool_use", tool_use)):
        if text is None:
            continue
        if not isinstance(text, str):
            raise TokenizerError(f"{key}: should be a string", field="file", location={"key": key})
        check_template_size(text, limits)
        check_compiles(text, limits)
    bos, eos = ids.get("bos"), ids.get("eos")
    return ChatTemplate(template, tokens[bos] if bos is not None else None, tokens[eos] if eos is not None else None,
                        tool_use).to_json()


# --- llama.cpp's token attributes ----------------------------------------------------------------

ATTR_UNKNOWN, ATTR_UNUSED, ATTR_NORMAL, ATTR_CONTROL, ATTR_USER_DEFINED, ATTR_BYTE = (1 << k for k in range(6))
ATTR_LSTRIP, ATTR_RSTRIP = 1 << 7, 1 << 8
#: The attributes of tokens llama.cpp cuts out of the text before merging, and of those it cuts only when
#: special tokens are parsed.
CUT_ATTRS = ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN
SPECIAL_ATTRS = ATTR_CONTROL | ATTR_UNKNOWN
_TYPE_ATTR = {UNKNOWN: ATTR_UNKNOWN, UNUSED: ATTR_UNUSED, NORMAL: ATTR_NORMAL, CONTROL: ATTR_CONTROL,
              USER_DEFINED: ATTR_USER_DEFINED, BYTE: ATTR_BYTE}
#: Texts llama.cpp makes control tokens whatever their type: end-of-generation tokens, and the end-of-turn
#: and fill-in-the-middle tokens it looks for by text when the file names none (llama-vocab.cpp).
_EOG_TEXTS = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
})
_LOOKED_FOR = {
    "eot": ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
            "_<EOT>", "[EOT]", "<\uff5cend\u2581of\u2581sentence\uff5c>", "<end_of_utterance>"),
    "eom": ("<|eom_id|>",),
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>",
                "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>",
                "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>",
                "\u2581<MID>", "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
#: gpt-oss's tokens llama.cpp always cuts out ("always render these tokens").
_ALWAYS_CUT = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")


def token_attributes(values: dict[str, Any], tokens: list[str], types: np.ndarray[Any, Any],
                     ids: dict[str, int]) -> dict[int, int]:
    """llama.cpp's attributes of the tokens it cuts out of the text (id -> attribute bits; the others are
    left out): from the file's token types, then what llama.cpp decides by a token's text (end-of-generation
    and fill-in-the-middle tokens made control tokens, gpt-oss's channel tokens made user-defined), then
    the lstrip / rstrip it sets by model name (Phi-3, Jina v2, ModernBERT)."""
    attrs: dict[int, int] = {}
    for i, t in enumerate(types.tolist()):
        bit = _TYPE_ATTR.get(t, 0)
        if bit & CUT_ATTRS:
            attrs[i] = bit
    index = {t: i for i, t in enumerate(tokens)}

    def control(text: str) -> None:
        i = index.get(text)
        if i is not None:
            attrs[i] = attrs.get(i, _TYPE_ATTR.get(int(types[i]), 0)) | ATTR_CONTROL

    for name, texts in _LOOKED_FOR.items():
        if f"{_KEY}{name}_token_id" not in values:  # (looked for only when the file names none)
            for text in texts:
                control(text)
    for text in _EOG_TEXTS:
        control(text)
    for text in _ALWAYS_CUT:
        if text in index:
            attrs[index[text]] = ATTR_USER_DEFINED
    present = {t for t in ("<|return|>", "<|call|>", "<|calls|>", "<|flush|>", "<|end|>") if t in index}
    if "<|end|>" in present and ({"<|return|>", "<|call|>"} <= present or {"<|calls|>", "<|flush|>"} <= present):
        attrs[index["<|end|>"]] = ATTR_USER_DEFINED  # (o200k_harmony's and solar-open's: no end of generation)
    if "<|tool_response>" in index and "</s>" in index:
        attrs.pop(index["</s>"], None)  # (Gemma 4's and PaddleOCR's: a normal token there)
    name = str(values.get("general.name", "")).lower()
    pre = str(values.get(_KEY + "pre", ""))
    arch = str(values.get("general.architecture", ""))

    def strip(text: str, bit: int, on: bool) -> None:
        i = index.get(text)
        if i is not None and i in attrs:
            attrs[i] = attrs[i] | bit if on else attrs[i] & ~bit

    if any(k in pre for k in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
            k in arch for k in ("nomic-bert-moe", "jina-bert-v3")):
        strip("<mask>", ATTR_LSTRIP, True)
    elif "phi-3" in name or "phi3" in name:
        for i in attrs:
            attrs[i] |= ATTR_RSTRIP
        strip("</s>", ATTR_RSTRIP, True)
        for text in ("<unk>", "<s>", "<|endoftext|>"):
            strip(text, ATTR_RSTRIP, False)
    elif "modern-bert" in name:
        strip("[MASK]", ATTR_LSTRIP, True)
    return attrs


# --- "gpt2": byte-level BPE, through the tokenizer.json path -----------------------------------


def _merges(values: dict[str, Any]) -> tuple[list[tuple[str, str]], int]:
    """The merges as (left, right), cut at the first space after the first character as llama.cpp cuts
    them, a repeated pair keeping its first rank (llama.cpp's table keeps the first); and how many lines
    were left out (no space: llama.cpp reads them as a pair of empty strings, which never meets)."""
    merges = values.get(_KEY + "merges")
    if merges is None:
        raise file_error("this GGUF file's byte-level tokenizer has no merges (tokenizer.ggml.merges); "
                         "llama.cpp refuses it too")
    if not isinstance(merges, list) or not all(map(isinstance, merges, repeat(str))):
        raise _key_error("merges", "an array of strings")
    # (a line names one pair and a pair one line, so a repeated pair is a repeated line: dict.fromkeys keeps the
    # first; lines that do not start with a space are cut at their first space by C-level loops)
    unique = list(dict.fromkeys(merges))
    if any(map(str.startswith, unique, repeat(" "))):  # (rare: a left side that starts with a space)
        cuts = [(line, line.find(" ", 1)) for line in unique]
        out = [(line[:cut], line[cut + 1:]) for line, cut in cuts if cut > 0]
    else:
        out = [(left, right) for left, cut, right in map(str.partition, unique, [" "] * len(unique)) if cut]
    skipped = len(merges) - len(out)
    return out, skipped


def _byte_level(values: dict[str, Any], tokens: list[str], attrs: dict[int, int], pre: PreType,
                ids: dict[str, int], add_bos: bool, add_eos: bool, limits: SizeLimits,
                notes: list[str]) -> LoadedTokenizer:
    merges, skipped = _merges(values)
    if skipped:
        notes.append(f"{skipped:,} merge line(s) left out: without a space, or a pair already listed "
                     "(llama.cpp keeps a pair's first rank)")
    added = [{"id": i, "content": tokens[i], "special": bool(a & SPECIAL_ATTRS), "normalized": False,
              "lstrip": bool(a & ATTR_LSTRIP), "rstrip": bool(a & ATTR_RSTRIP), "single_word": False}
             for i, a in sorted(attrs.items())]
    document = {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": split_steps(pre.patterns),
        "post_processor": _post_processor(tokens, ids, add_bos, add_eos),
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": pre.ignore_merges, "vocab": dict(zip(tokens, range(len(tokens)))),
                  "merges": merges},
    }
    tok = tokenizer_from_document(document, limits)
    return _with(tok, source=SOURCE, notes=tuple(notes) + tok.notes, pipeline=_longest_first(tok.pipeline))


def _longest_first(pipeline: str) -> str:
    """The pipeline description with llama.cpp's way of cutting special tokens out (hf/longest_first.py)."""
    desc = json.loads(pipeline)
    desc["added_order"] = "longest_first"
    return json.dumps(desc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _post_processor(tokens: list[str], ids: dict[str, int], add_bos: bool, add_eos: bool) -> dict[str, Any] | None:
    """add_bos / add_eos as the single-text template of a TemplateProcessing post-processor."""
    around = [("bos", add_bos), ("eos", add_eos)]
    if not add_bos and not add_eos:
        return None
    single: list[dict[str, Any]] = []
    specials: dict[str, Any] = {}
    for name, wanted in around:
        if name == "eos":
            single.append({"Sequence": {"id": "A", "type_id": 0}})
        if wanted:
            text = tokens[ids[name]]
            single.append({"SpecialToken": {"id": text, "type_id": 0}})
            specials[text] = {"id": text, "ids": [ids[name]], "tokens": [text]}
    return {"type": "TemplateProcessing", "single": single, "pair": None, "special_tokens": specials}


# --- "llama": SentencePiece BPE, through the .model path ---------------------------------------


def _sentencepiece(values: dict[str, Any], tokens: list[str], types: np.ndarray[Any, Any], attrs: dict[int, int],
                   ids: dict[str, int], add_bos: bool, add_eos: bool, notes: list[str]) -> LoadedTokenizer:
    scores = _numbers(values, "scores", len(tokens), 0.0, "FLOAT32")
    prefix = values.get(_KEY + "add_space_prefix", True)
    if not isinstance(prefix, bool):
        raise _key_error("add_space_prefix", "a BOOL")
    kinds = [t if NORMAL <= t <= BYTE else NORMAL for t in types.tolist()]
    odd = sum(1 for t in types.tolist() if not NORMAL <= t <= BYTE)
    proto = pb.ModelProto()  # type: ignore[attr-defined]  # (generated code: no stubs; the pieces go beside it)
    spec = proto.trainer_spec
    spec.model_type = 2  # BPE
    spec.byte_fallback = sum(1 for k in kinds if k == BYTE) == 256
    spec.unk_id = kinds.index(UNKNOWN) if UNKNOWN in kinds else ids.get("unknown", 0)
    spec.bos_id, spec.eos_id, spec.pad_id = ids.get("bos", -1), ids.get("eos", -1), -1
    norm = proto.normalizer_spec
    norm.name, norm.add_dummy_prefix, norm.remove_extra_whitespaces, norm.escape_whitespaces = (
        "identity", prefix, False, True)
    with np.errstate(over="ignore"):  # (as a .model holds them: float32, a score past its range infinite)
        as_float32 = scores.astype(np.float32).tolist()
    tok = sentencepiece_tokenizer(proto, tokens, kinds, as_float32, join_any_piece=True)
    desc = json.loads(tok.pipeline)
    desc["post"] = [[ids["bos"]] if add_bos else [], [ids["eos"]] if add_eos else []]
    # (llama.cpp cuts its special tokens out of the raw text, longest first, and gives every stretch between
    # them its own dummy prefix: each stretch is normalized alone, user-defined pieces are no longer the
    # normalizer's)
    desc["added_tokens"] = [[tokens[i], i, bool(a & SPECIAL_ATTRS), False, bool(a & ATTR_LSTRIP),
                             bool(a & ATTR_RSTRIP), False] for i, a in sorted(attrs.items())]
    desc["added_order"] = "longest_first"
    desc["normalizer"]["user_defined"] = []
    special_tokens = {tokens[i]: i for i in sorted(attrs)}
    own = [f"GGUF (llama.cpp) SentencePiece BPE, {len(tokens):,} pieces: merged by score as llama.cpp's SPM "
           "tokenizer merges, spaces written as \u2581" + (", a \u2581 in front of the text" if prefix else "")]
    if odd:
        own.append(f"{odd:,} token(s) of an undefined type read as normal pieces")
    return _with(tok, source=SOURCE, notes=tuple(own + notes) + tok.notes, special_tokens=special_tokens,
                 pipeline=json.dumps(desc, ensure_ascii=False, sort_keys=True, separators=(",", ":")))


__all__ = ["OTHER_TYPES", "SOURCE", "parse_gguf"]
