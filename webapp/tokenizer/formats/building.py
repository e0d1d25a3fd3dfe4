"""From a file's ids, bytes and rules to a byte-level `LoadedTokenizer` (and the order notes).

Shared by the formats that name their tokens by file id: Hugging Face files
(after the byte alphabet), tiktoken ranks. What it does not do: read files.

Details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.loaded import LoadedTokenizer


def order_notes(rules: Iterable[tuple[Any, Any, Any]], is_base: Any) -> list[str]:
    """Rules whose operand only a later rule makes: the library would still apply them.

    `rules` are (left, right, made) triples; `is_base` says which operands
    exist before any rule (single bytes or characters).
    """
    produced: set[Any] = set()
    for number, (left, right, made) in enumerate(rules, start=1):
        if not (is_base(left) or left in produced) or not (is_base(right) or right in produced):
            return [_order_note(number)]
        produced.add(made)
    return []


def _order_note(number: int) -> str:
    return (f"rule {number} uses a token that no earlier rule makes; the playground visits "
            "each rule once in order, so ids may differ from the library's")


def byte_order_notes(merges: Sequence[tuple[int, int, int]], rules: np.ndarray[Any, Any] | None = None) -> list[str]:
    """`order_notes` of playground merges (ids below 256 are bytes), by numpy: each rule's operands against
    the first rule that makes them (`rules`: the merges as an (n, 3) array, when the caller has it)."""
    if not merges:
        return []
    if rules is None:
        rules = _id_array(merges)
    made, first = np.unique(rules[:, 2], return_index=True)
    number = np.arange(len(rules))
    fine = np.ones(len(rules), dtype=bool)
    for side in (rules[:, 0], rules[:, 1]):
        at = np.minimum(np.searchsorted(made, side), len(made) - 1)
        made_before = (made[at] == side) & (first[at] < number)
        fine &= (side < 256) | made_before
    if fine.all():
        return []
    return [_order_note(int(np.argmin(fine)) + 1)]


def _id_array(rules: Sequence[tuple[int, int, int]]) -> np.ndarray[Any, Any]:
    """Rules of three ids as an (n, 3) int64 array."""
    return np.fromiter(chain.from_iterable(rules), dtype=np.int64, count=3 * len(rules)).reshape(len(rules), 3)


def build_byte_level(
    file_bytes: Mapping[int, bytes],
    rules: Sequence[tuple[int, int, int]],
    *,
    source: str,
    pretokenize: str,
    notes: Sequence[str] = (),
    special: Mapping[str, int] | None = None,
    unk_id: int | None = None,
    all_tokens: bool = False,
) -> LoadedTokenizer:
    """File ids + their bytes + rules in file ids -> playground merges and the id map."""
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
    # (the ids the rules use, in the order they first appear: dict.fromkeys keeps the first, by C-level loops)
    used = dict.fromkeys(chain.from_iterable(rules))
    multi = [fid for fid in used if len(file_bytes[fid]) > 1]
    seen = set(multi)
    if all_tokens:
        multi += [fid for fid in sorted(file_bytes) if fid not in seen and len(file_bytes[fid]) > 1]
    keep_ids = min(multi, default=256) >= 256
    to_pg: dict[int, int] = {}
    for byte, fid in byte_file_id.items():
        to_pg[fid] = byte
    for index, fid in enumerate(multi):
        to_pg[fid] = fid if keep_ids else 256 + index
    merges: tuple[tuple[int, int, int], ...]
    mapped = None
    if rules and to_pg.keys() >= used.keys() and max(to_pg) < 4 * len(to_pg) + 1024:
        # (the rules in playground ids by one table lookup, when every id has one and the ids are dense)
        table = np.zeros(max(to_pg) + 1, dtype=np.int64)
        table[np.fromiter(to_pg.keys(), dtype=np.int64, count=len(to_pg))] = np.fromiter(
            to_pg.values(), dtype=np.int64, count=len(to_pg))
        mapped = table[_id_array(rules)]
        columns = mapped.T.tolist()
        merges = tuple(zip(columns[0], columns[1], columns[2]))
    else:  # (an id without one raises its KeyError here)
        merges = tuple((to_pg[a], to_pg[b], to_pg[n]) for a, b, n in rules)
    vocab = {to_pg[fid]: file_bytes[fid] for fid in multi}
    id_map = {pg: fid for fid, pg in to_pg.items() if pg != fid}
    unknown = frozenset(b for b in range(256) if b not in byte_file_id)
    if unknown:
        what = "use the unknown token" if unk_id is not None else "are dropped, as the library does"
        notes.append(f"{len(unknown)} byte values have no token in the file; they {what}")
    notes += byte_order_notes(merges, mapped)
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
