"""What every exporter checks first, and character rules as byte rules.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Sequence

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import ByteRule, CharRule, shown_value
from webapp.tokenizer.loaded import LoadedTokenizer


def export_error(message: str, **location: Any) -> TokenizerError:
    return TokenizerError(f"merges: {message}", field="merges", location=location or None)


def check_well_formed_bytes(tok: LoadedTokenizer) -> dict[int, bytes]:
    """Byte-level rules a rank-based library applies the same way: every id's bytes."""
    # (library order: every token's bytes are the file's own, known before any rule)
    known: dict[int, bytes] = {i: b for i, b in tok.vocab.items() if i >= 256} if tok.library_order else {}
    made: dict[int, bytes] = {}
    owner: dict[bytes, int] = {}
    for number, (left, right, new) in enumerate(tok.merges, start=1):
        for side in (left, right):
            if side >= 256 and side not in made and side not in known:
                raise export_error(
                    f"rule {number} uses token {side}, which no earlier rule makes; a rank-based "
                    "library would apply it anyway, so this list cannot be exported with the same ids",
                    rule=number,
                )
        if new < 256:
            raise export_error(
                f"rule {number} makes id {new}, a byte id (0-255); the library keeps one token per "
                "byte there, so this list cannot be exported",
                rule=number,
            )
        data = _bytes_of(left, made, known) + _bytes_of(right, made, known)
        if new in made:
            if made[new] != data:
                raise export_error(
                    f"rule {number} gives id {new} to other bytes than an earlier rule did", rule=number
                )
            continue
        if data in owner:
            raise export_error(
                f"rule {number} makes {shown_value(data)} as id {new}, but id {owner[data]} already stands for it; "
                "the library allows one id per token",
                rule=number,
            )
        made[new] = data
        owner[data] = new
    return made


def _bytes_of(token: int, made: dict[int, bytes], known: dict[int, bytes]) -> bytes:
    return bytes([token]) if token < 256 else made.get(token) or known[token]


def check_well_formed_chars(tok: LoadedTokenizer) -> None:
    """Character-level rules the library applies the same way (list order: each operand made earlier)."""
    produced: set[str] = set()
    vocab = tok.vocab
    later_ok = tok.library_order  # (the library's order: a rule may use a later rule's token)
    for number, (left, right) in enumerate(tok.merges, start=1):
        for side in (left, right):
            if len(side) != 1 and side not in produced and not later_ok:
                raise export_error(
                    f"rule {number} uses {shown_value(side)}, which no earlier rule makes; a rank-based "
                    "library would apply it anyway, so this list cannot be exported with the same ids",
                    rule=number,
                )
            if side not in vocab:
                raise TokenizerError(
                    f"vocab: rule {number} uses {shown_value(side)}, which is not in the vocab; the "
                    "tokenizers library needs every token a rule uses or makes in its vocab",
                    field="vocab",
                    location={"rule": number},
                )
        if left + right not in vocab:
            raise TokenizerError(
                f"vocab: rule {number} makes {shown_value(left + right)}, which is not in the vocab; the "
                "tokenizers library needs every token a rule uses or makes in its vocab",
                field="vocab",
                location={"rule": number},
            )
        produced.add(left + right)
    for token in vocab:
        if token == "":
            raise TokenizerError("vocab: the empty token cannot be exported", field="vocab", location={"key": ""})


def char_merges_to_bytes(merges: Sequence[CharRule]) -> tuple[list[ByteRule], list[str]]:
    """Character-level rules as byte-level rules numbered 256, 257, ... (minbpe's numbering)."""
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
        raise export_error(f"{shown_value(token)} is used before any rule makes it")

    for left, right in merges:
        a, b = ensure(left), ensure(right)
        data = (left + right).encode("utf-8")
        if data in ids:
            raise export_error(f"{shown_value(left + right)} is made twice; minbpe numbering needs one rule per token")
        ids[data] = 256 + len(rules)
        rules.append((a, b, ids[data]))
    if any(len(t.encode("utf-8")) > 1 for rule in merges for t in rule if len(t) == 1):
        notes.append("rules that build multi-byte characters from their bytes come first")
    return rules, notes
