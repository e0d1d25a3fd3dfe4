"""Byte-level BPE: encode text to ids with `[left, right, new]` rules, decode ids to text.

(First, simple version: literal algorithm; a faster engine replaces it.)
"""

from __future__ import annotations

from typing import Any, Sequence

from .errors import TokenizerError
from .traces import EncodeTrace, MergeNode, Token, TraceStep
from .validation import ByteRule, validate_byte_merges, validate_byte_vocab, validate_ids, validate_text


class CompiledByteMerges:
    """A validated merge list, reusable across calls."""

    def __init__(self, rules: tuple[ByteRule, ...]) -> None:
        self.rules = rules

    def __len__(self) -> int:
        return len(self.rules)


def compile_byte_merges(merges: Any) -> CompiledByteMerges:
    if isinstance(merges, CompiledByteMerges):
        return merges
    return CompiledByteMerges(validate_byte_merges(merges))


def encode(text: str, merges: Any) -> list[int]:
    return encode_trace(text, merges, max_steps=0, max_tokens=0, max_sequence=0).ids


def encode_trace(text: str, merges: Any, *, max_steps: int = 200, max_tokens: int = 3000, max_sequence: int = 2000) -> EncodeTrace:
    text = validate_text(text)
    compiled = compile_byte_merges(merges)
    data = text.encode("utf-8")
    seq = [MergeNode(b, i, i + 1) for i, b in enumerate(data)]
    steps: list[TraceStep] = []
    fired = 0
    for index, (left, right, new) in enumerate(compiled.rules):
        out: list[MergeNode] = []
        matches = 0
        i = 0
        while i < len(seq):
            if i + 1 < len(seq) and seq[i].symbol == left and seq[i + 1].symbol == right:
                out.append(MergeNode(new, seq[i].start, seq[i + 1].end, index, (seq[i], seq[i + 1])))
                matches += 1
                i += 2
            else:
                out.append(seq[i])
                i += 1
        seq = out
        if matches:
            fired += 1
            if len(steps) < max_steps:
                steps.append(TraceStep(index, left, right, new, matches,
                                       tuple(n.symbol for n in seq) if len(seq) <= max_sequence else None))
    ids = [n.symbol for n in seq]
    tokens = [Token(n.symbol, data[n.start:n.end], n.start, n.end, n) for n in seq[:max_tokens]]
    return EncodeTrace(
        ids=ids,
        tokens=tokens,
        tokens_truncated=len(seq) > max_tokens,
        initial=tuple(data) if len(data) <= max_sequence else None,
        steps=steps,
        steps_truncated=fired > len(steps),
        rules_fired=fired,
        rules_idle=len(compiled.rules) - fired,
    )


def implied_byte_vocab(merges: Any) -> dict[int, bytes]:
    compiled = compile_byte_merges(merges)
    vocab = {b: bytes([b]) for b in range(256)}
    for left, right, new in compiled.rules:
        if new not in vocab and left in vocab and right in vocab:
            vocab[new] = vocab[left] + vocab[right]
    return vocab


def decode(ids: Sequence[int], vocab: Any) -> str:
    ids = validate_ids(ids)
    table = validate_byte_vocab(vocab)
    parts: list[bytes] = []
    for index, token_id in enumerate(ids, start=1):
        piece = table.get(token_id)
        if piece is None:
            if token_id > 255:
                raise TokenizerError(
                    f"ids: id {token_id} at position {index} is not in the vocab (and is not a byte 0..255)",
                    field="ids", location={"index": index})
            piece = bytes([token_id])
        parts.append(piece)
    data = b"".join(parts)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start
        pos = 0
        for index, piece in enumerate(parts, start=1):
            if pos + len(piece) > offset:
                break
            pos += len(piece)
        raise TokenizerError(
            f"ids: the bytes are not valid UTF-8 at byte offset {offset} (byte 0x{data[offset]:02x}), "
            f"in the token at position {index} (id {ids[index - 1]})",
            field="ids", location={"index": index, "offset": offset}) from None
