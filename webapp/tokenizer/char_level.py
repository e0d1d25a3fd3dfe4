"""Character-level BPE: `[left, right]` string rules, vocab lookup after the last rule.

(First, simple version: literal algorithm; a faster engine replaces it.)
"""

from __future__ import annotations

from typing import Any

from .errors import TokenizerError
from .traces import EncodeTrace, MergeNode, Token, TraceStep
from .validation import validate_char_merges, validate_char_vocab, validate_text


def _run(text: str, rules, max_steps: int, max_sequence: int):
    seq = [MergeNode(ch, i, i + 1) for i, ch in enumerate(text)]
    steps: list[TraceStep] = []
    fired = 0
    for index, (left, right) in enumerate(rules):
        new = left + right
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
    return seq, steps, fired


def char_tokens(text: str, merges: Any) -> list[str]:
    text = validate_text(text)
    rules = validate_char_merges(merges)
    seq, _, _ = _run(text, rules, 0, 0)
    return [n.symbol for n in seq]


def _lookup(tokens: list[str], vocab: dict[str, int]) -> list[int]:
    ids = []
    for position, token in enumerate(tokens, start=1):
        if token not in vocab:
            raise TokenizerError(
                f"vocab: token {token!r} at position {position} is not in the vocab",
                field="vocab", location={"position": position, "token": token})
        ids.append(vocab[token])
    return ids


def bpe_encode_text(text: str, vocab: Any, merges: Any) -> list[int]:
    text = validate_text(text)
    table = validate_char_vocab(vocab)
    rules = validate_char_merges(merges)
    seq, _, _ = _run(text, rules, 0, 0)
    return _lookup([n.symbol for n in seq], table)


def encode_text_trace(text: str, vocab: Any, merges: Any, *, max_steps: int = 200, max_tokens: int = 3000, max_sequence: int = 2000) -> EncodeTrace:
    text = validate_text(text)
    table = validate_char_vocab(vocab)
    rules = validate_char_merges(merges)
    seq, steps, fired = _run(text, rules, max_steps, max_sequence)
    ids = _lookup([n.symbol for n in seq], table)
    tokens = [Token(i, n.symbol, n.start, n.end, n) for i, n in zip(ids[:max_tokens], seq)]
    return EncodeTrace(ids=ids, tokens=tokens, tokens_truncated=len(seq) > max_tokens,
                       initial=tuple(text) if len(text) <= max_sequence else None,
                       steps=steps, steps_truncated=fired > len(steps), rules_fired=fired,
                       rules_idle=len(rules) - fired)
