"""GGUF export (llama.cpp): a vocab-only file that llama.cpp tokenizes with, written by the gguf package.

Byte-level BPE as tokenizer model "gpt2" (GPT-2's byte spelling, "left right" merges, and the
`tokenizer.ggml.pre` whose regexes split as this tokenizer's pattern does; any other pattern is
refused, naming it), SentencePiece-style BPE as "llama" (pieces, scores from the merge order, types).
What llama.cpp does not do (a normalizer, a charsmap) is listed by `gguf_notes`. Not written: weights,
hyperparameters. Details: docs/formats.md, "GGUF export (llama.cpp)".
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

import gguf

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import bytes_of
from webapp.tokenizer.formats.export_checks import check_well_formed_bytes
from webapp.tokenizer.formats.gguf_pack import ArrayPackingWriter
from webapp.tokenizer.formats.sentencepiece import is_sentencepiece
from webapp.tokenizer.core.alphabet import BYTE_ALPHABET, bytes_to_token
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

#: The architecture a vocab-only file names (llama.cpp reads the tokenizer keys whatever it is).
ARCHITECTURE = "llama"

_QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
_DEEPSEEK_V3 = (
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    "[!\"#$%&'()*+," r"\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
)
_TEKKEN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
           r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}"
           r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
#: llama.cpp's pre-tokenizer names (src/llama-vocab.cpp, `tokenizer_pre`) -> the patterns, as the
#: tokenizer files publish them, that its regex lists for that name were written from (llama.cpp
#: rewrites `(?i:...)` and the \p classes its regex engine lacks). "llama-bpe" and "tekken" also
#: take a word the vocabulary holds whole without merging (ignore_merges), as tiktoken does.
LLAMA_PRE: dict[str, tuple[str, ...]] = {
    "gpt-2": (GPT2_PATTERN,),
    "llama-bpe": (CL100K_PATTERN,),
    "qwen2": (_QWEN2,),
    "deepseek-v3": _DEEPSEEK_V3,
    "gpt-4o": (O200K_PATTERN,),
    "tekken": (_TEKKEN,),
}
_SCHEME_PATTERNS = {"gpt2": (GPT2_PATTERN,), "cl100k": (CL100K_PATTERN,), "o200k": (O200K_PATTERN,)}
#: Special tokens' texts taken as BOS / EOS when the tokenizer does not say (first found wins).
BOS_NAMES = ("<|begin_of_text|>", "<s>", "<bos>", "<｜begin▁of▁sentence｜>", "<|startoftext|>", "<|endoftext|>")
EOS_NAMES = ("<|end_of_text|>", "</s>", "<eos>", "<｜end▁of▁sentence｜>", "<|endoftext|>", "<|return|>")
_SPACE = "\u2581"


@dataclass
class GgufPlan:
    """What `export_gguf` writes: the tokenizer keys (name -> value) and what llama.cpp will do otherwise."""

    model: str
    pre: str | None
    tokens: list[str]
    types: list[int]
    merges: list[str] = field(default_factory=list)
    scores: list[float] | None = None
    ids: dict[str, int] = field(default_factory=dict)  # bos / eos / unk ids
    flags: dict[str, bool] = field(default_factory=dict)  # add_bos / add_eos / add_space_prefix
    chat_template: str | None = None
    notes: list[str] = field(default_factory=list)


def _refuse(message: str) -> TokenizerError:
    return TokenizerError(f"export: {message}", field="format")


def _comparable(pattern: str) -> str:
    """A pattern with its line breaks written as escapes (files hold both), for comparing."""
    return pattern.replace("\r", r"\r").replace("\n", r"\n")


def llama_pre_for(patterns: tuple[str, ...]) -> str | None:
    """The llama.cpp pre-tokenizer name whose regexes were written from these patterns, or None."""
    wanted = tuple(_comparable(p) for p in patterns)
    for name, known in LLAMA_PRE.items():
        if tuple(_comparable(p) for p in known) == wanted:
            return name
    return None


def _pipeline(tok: LoadedTokenizer) -> dict[str, Any]:
    return json.loads(tok.pipeline) if tok.pipeline else {}


def _split_patterns(tok: LoadedTokenizer, desc: dict[str, Any]) -> tuple[str, ...]:
    """The regexes that split a byte-level tokenizer's text, in order (its file's, else its scheme's)."""
    if "pre_tokenizer" not in desc:
        scheme = _SCHEME_PATTERNS.get(tok.pretokenize)
        if scheme is None:
            raise _refuse(f"this tokenizer does not split text before its merges (pre-tokenize "
                          f"{tok.pretokenize!r}); llama.cpp always splits a GPT-2-style vocabulary with one of its "
                          "own patterns, so it would give other ids. Choose a pre-tokenize scheme first")
        return scheme
    node = desc.get("pre_tokenizer")
    steps: list[Any] = []
    if isinstance(node, dict):
        steps = node.get("pretokenizers", []) if node.get("type") == "Sequence" else [node]
    patterns: list[str] = []
    for step in steps:
        kind = step.get("type") if isinstance(step, dict) else None
        if kind == "Split" and step.get("behavior") == "Isolated" and not step.get("invert"):
            regex = (step.get("pattern") or {}).get("Regex")
            if isinstance(regex, str):
                patterns.append(regex)
                continue
        if kind == "ByteLevel" and not step.get("add_prefix_space"):
            if step.get("use_regex", True):
                patterns.append(GPT2_PATTERN)
            continue
        raise _refuse(f"this tokenizer's pre-tokenizer step {json.dumps(step, ensure_ascii=False)[:200]} has no "
                      "counterpart in llama.cpp")
    if not patterns:
        raise _refuse("this tokenizer's file splits no text before its merges; llama.cpp always splits a "
                      "GPT-2-style vocabulary with one of its own patterns")
    return tuple(patterns)


def _normalizer_notes(desc: dict[str, Any]) -> list[str]:
    norm = desc.get("normalizer")
    if norm is None or (isinstance(norm, dict) and norm.get("type") == "Sequence" and not norm.get("normalizers")):
        return []
    return [f"llama.cpp applies no normalizer; this tokenizer's {json.dumps(norm, ensure_ascii=False)[:120]} is "
            "not written, so texts it changes get other ids"]


def _special_ids(tok: LoadedTokenizer, desc: dict[str, Any], plan: GgufPlan) -> None:
    flagged = {i: special for _c, i, special, *_ in desc.get("added_tokens", [])}
    specials = {c: i for c, i in tok.special_tokens.items() if flagged.get(i, True)}  # (control tokens only)
    post = desc.get("post") or [[], []]
    bos = post[0][0] if post[0] else next((specials[n] for n in BOS_NAMES if n in specials), None)
    eos = post[1][-1] if post[1] else next((specials[n] for n in EOS_NAMES if n in specials), None)
    if bos is not None:
        plan.ids["bos"] = bos
    if eos is not None:
        plan.ids["eos"] = eos
    plan.flags["add_bos"] = bool(post[0])
    plan.flags["add_eos"] = bool(post[1])
    if tok.chat:
        plan.chat_template = json.loads(tok.chat).get("template") or None


def _dense(by_id: dict[int, tuple[str, int]], what: str) -> tuple[list[str], list[int]]:
    """Token texts and types by id 0..max; ids no token has get a placeholder, as the converter writes."""
    if not by_id:
        raise _refuse(f"this {what} has no tokens")
    size = max(by_id) + 1
    tokens: list[str] = []
    types: list[int] = []
    seen: dict[str, int] = {}
    for i in range(size):
        text, kind = by_id.get(i, (f"[PAD{i}]", 5))  # (UNUSED)
        if text in seen:  # (llama.cpp maps each text to one id and refuses a file where two share one)
            raise _refuse(f"tokens {seen[text]} and {i} are both {text!r} in llama.cpp's spelling")
        seen[text] = i
        tokens.append(text)
        types.append(kind)
    return tokens, types


def plan_byte_level(tok: LoadedTokenizer) -> GgufPlan:
    desc = _pipeline(tok)
    patterns = _split_patterns(tok, desc)
    pre = llama_pre_for(patterns)
    if pre is None:
        shown = " then ".join(p[:80] for p in patterns)
        raise _refuse(f"no llama.cpp pre-tokenizer splits text as this tokenizer's pattern does ({shown}); "
                      f"llama.cpp knows {', '.join(LLAMA_PRE)} among byte-level ones")
    made = check_well_formed_bytes(tok)
    fmap = tok.id_map
    by_id: dict[int, tuple[str, int]] = {}
    for b in range(256):
        if b not in tok.unknown_bytes:
            by_id[fmap.get(b, b)] = (BYTE_ALPHABET[b], 1)
    # (each token spelt once: the merges name every made token twice or more)
    spelt = {pid: bytes_to_token(data) for pid, data in made.items()}
    spelt.update((b, bytes_to_token(bytes([b]))) for b in range(256))

    def spell(token: int) -> str:
        found = spelt.get(token)
        return found if found is not None else bytes_to_token(bytes_of(token, made))

    for pid in made:
        by_id[fmap.get(pid, pid)] = (spelt[pid], 1)
    added = {c: (i, special) for c, i, special, *_ in desc.get("added_tokens", [])}
    for content, i in tok.special_tokens.items():
        added.setdefault(content, (i, True))
    for content, (i, special) in added.items():
        by_id[i] = (content, 3 if special else 4)  # (CONTROL, USER_DEFINED)
    tokens, types = _dense(by_id, "tokenizer")
    merges = [f"{spell(a)} {spell(b)}" for a, b, _ in tok.merges]
    plan = GgufPlan("gpt2", pre, tokens, types, merges)
    plan.notes += _normalizer_notes(desc)
    _special_ids(tok, desc, plan)
    return plan


def _spm_options(desc: dict[str, Any]) -> tuple[bool, list[str]]:
    """(add_space_prefix, notes) from a SentencePiece-style normalizer (a .model's or a tokenizer.json's)."""
    norm = desc.get("normalizer") or {}
    if norm.get("type") == "SentencePiece":
        if norm.get("treat_whitespace_as_suffix") or not norm.get("escape_whitespaces"):
            raise _refuse("this SentencePiece model does not write spaces as a leading \u2581, which llama.cpp does")
        notes = []
        if norm.get("charsmap"):
            notes.append("llama.cpp does not apply this model's normalization charsmap to a BPE model")
        if norm.get("remove_extra_whitespaces"):
            notes.append("llama.cpp keeps runs of spaces that this model's remove_extra_whitespaces joins")
        return bool(norm.get("add_dummy_prefix")), notes
    steps = norm.get("normalizers", []) if norm.get("type") == "Sequence" else [norm] if norm else []
    prefix = False
    replaced = False
    for step in steps:
        if step.get("type") == "Prepend" and step.get("prepend") == _SPACE:
            prefix = True
        elif (step.get("type") == "Replace" and step.get("pattern") == {"String": " "}
              and step.get("content") == _SPACE):
            replaced = True
        else:
            raise _refuse(f"this tokenizer's normalizer step {json.dumps(step, ensure_ascii=False)[:200]} has no "
                          "counterpart in llama.cpp's SentencePiece tokenizer")
    if not replaced:
        raise _refuse("this tokenizer does not write spaces as \u2581, which llama.cpp's SentencePiece tokenizer does")
    pre = desc.get("pre_tokenizer")
    if pre is not None and not (pre.get("type") == "Split" and pre.get("pattern") == {"String": " "}):
        raise _refuse("this tokenizer's pre-tokenizer has no counterpart in llama.cpp's SentencePiece tokenizer")
    return prefix, []


def _scores(tok: LoadedTokenizer, model: dict[str, Any]) -> dict[str, float]:
    """A score per joined piece so that llama.cpp (highest score first) joins in the tokenizer's order:
    the rule's level (a .model's equal scores stay equal), or its rank (a tokenizer.json's list)."""
    runs = model.get("level_runs") if model.get("order") == "score" else None
    scores: dict[str, float] = {}
    level = 0
    left_in_level = runs[0] if runs else 1
    for rank, (a, b) in enumerate(tok.merges):
        if runs:
            if left_in_level == 0:
                level += 1
                left_in_level = runs[level]
            left_in_level -= 1
        scores.setdefault(a + b, -float(level if runs else rank) - 1.0)
    return scores


def plan_sentencepiece(tok: LoadedTokenizer) -> GgufPlan:
    desc = _pipeline(tok)
    model = json.loads(tok.model) if tok.model else {}
    prefix, notes = _spm_options(desc)
    byte_fallback = bool(model.get("byte_fallback"))
    added = {i: special for _c, i, special, *_ in desc.get("added_tokens", [])}
    scores = _scores(tok, model)
    by_id: dict[int, tuple[str, int]] = {}
    score_by_id: dict[int, float] = {}
    for piece, i in tok.vocab.items():
        if i == tok.unk_id:
            kind = 2  # UNKNOWN
        elif byte_fallback and len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            kind = 6  # BYTE (also when a tokenizer.json lists it as an added token, as Gemma 3's does)
        elif i in added:
            kind = 3 if added[i] else 4  # CONTROL, USER_DEFINED
        else:
            kind = 1
        by_id[i] = (piece, kind)
        score_by_id[i] = scores.get(piece, 0.0) if kind == 1 else 0.0
    rows = [(c, i, special) for c, i, special, *_ in desc.get("added_tokens", [])]
    for content, i, special in rows + [(c, i, True) for c, i in tok.special_tokens.items()]:
        if i not in by_id:  # (an added token past the model's pieces: Gemma 3's last id)
            by_id[i] = (content, 3 if special else 4)
    tokens, types = _dense(by_id, "SentencePiece model")
    plan = GgufPlan("llama", None, tokens, types, scores=[score_by_id.get(i, 0.0) for i in range(len(tokens))])
    plan.notes += notes
    if tok.unk_id is not None:
        plan.ids["unk"] = tok.unk_id
    _special_ids(tok, desc, plan)
    plan.flags["add_space_prefix"] = prefix
    return plan


def plan_gguf(tok: LoadedTokenizer) -> GgufPlan:
    """What `export_gguf` writes for `tok`, or a TokenizerError (field "format") saying why it cannot."""
    if is_sentencepiece(tok) or (tok.level == "chars" and tok.library_order and tok.unk_id is not None):
        return plan_sentencepiece(tok)
    if tok.level != "bytes":
        raise _refuse("a character-level tokenizer without SentencePiece's \u2581 spaces has no llama.cpp "
                      "tokenizer model; GGUF export writes byte-level and SentencePiece-style BPE")
    return plan_byte_level(tok)


def gguf_notes(tok: LoadedTokenizer) -> list[str]:
    """Where llama.cpp will tokenize `tok`'s export differently from `tok` (empty: nowhere known)."""
    return plan_gguf(tok).notes


def export_gguf(tok: LoadedTokenizer) -> bytes:
    """A vocab-only GGUF file of `tok` (see the module doc), as bytes."""
    plan = plan_gguf(tok)
    with tempfile.TemporaryDirectory(prefix="gguf-export-") as folder:
        path = os.path.join(folder, "tokenizer.gguf")
        writer = ArrayPackingWriter(path, ARCHITECTURE)
        writer.add_tokenizer_model(plan.model)
        if plan.pre is not None:
            writer.add_tokenizer_pre(plan.pre)
        writer.add_token_list(plan.tokens)
        if plan.scores is not None:
            writer.add_token_scores(plan.scores)
        writer.add_token_types(plan.types)
        if plan.merges:
            writer.add_token_merges(plan.merges)
        setters = {"bos": writer.add_bos_token_id, "eos": writer.add_eos_token_id, "unk": writer.add_unk_token_id}
        for name, value in plan.ids.items():
            setters[name](value)
        writer.add_add_bos_token(plan.flags.get("add_bos", False))
        writer.add_add_eos_token(plan.flags.get("add_eos", False))
        if "add_space_prefix" in plan.flags:
            writer.add_add_space_prefix(plan.flags["add_space_prefix"])
        if plan.chat_template:
            writer.add_chat_template(plan.chat_template)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        with open(path, "rb") as handle:
            return handle.read()


__all__ = ["LLAMA_PRE", "GgufPlan", "export_gguf", "gguf_notes", "llama_pre_for", "plan_gguf"]
