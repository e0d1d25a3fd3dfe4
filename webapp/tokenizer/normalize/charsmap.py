"""A SentencePiece precompiled charsmap: its rules looked up, and every rule checked when it is read.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import numpy as np

from webapp.tokenizer.errors import TokenizerError

#: A charsmap blob (sentencepiece's nmt_nfkc is 240 KB, nfkc_cf 247 KB).
MAX_CHARSMAP_BYTES = 1024 * 1024
#: Bytes of a rule's source: each position's trie walk is at most this long (nmt_nfkc's longest: 12).
MAX_RULE_BYTES = 32
#: Bytes of one rule's replacement (NFKC's longest expansion is 18 characters, 54 bytes).
MAX_REPLACEMENT_BYTES = 1_024
_LABEL = (1 << 31) | 0xFF
_VALUE = (1 << 31) - 1


class CharsmapError(TokenizerError):
    """A precompiled charsmap that cannot be used (the message says where)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, field="normalizer_spec")


def _offsets(units: np.ndarray) -> np.ndarray:
    return (units >> 10) << ((units & (1 << 9)) >> 6)


def _children(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(parent bases, child positions) of every unit that is a node, sorted by parent base: a node
    with base b has as children the units p with label l where p ^ l == b."""
    labels = units & _LABEL
    nodes = np.flatnonzero(labels < 256)  # (value units have bit 31 set)
    parents = nodes ^ labels[nodes]
    order = np.argsort(parents, kind="stable")
    return parents[order], nodes[order]


def check_rules(units: np.ndarray, root: int, normalized: bytes) -> None:
    """Refuse (CharsmapError) a trie whose reachable rules break a bound of the module doc: one level
    of nodes at a time (each node once a level), so at most MAX_RULE_BYTES + 1 passes over the array."""
    parents, nodes = _children(units)
    offsets = _offsets(units)
    ends = np.flatnonzero(np.frombuffer(normalized, dtype=np.uint8) == 0)
    bases = np.array([root], dtype=np.int64)
    for depth in range(1, MAX_RULE_BYTES + 2):
        lo, hi = np.searchsorted(parents, bases, "left"), np.searchsorted(parents, bases, "right")
        counts = hi - lo
        total = int(counts.sum())
        if not total:
            return
        if depth > MAX_RULE_BYTES:
            raise CharsmapError(f"the precompiled charsmap has a rule longer than {MAX_RULE_BYTES} bytes "
                                "(or its trie loops), over what the playground applies")
        firsts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
        found = np.unique(nodes[np.arange(total) + firsts])
        below = found ^ offsets[found]
        _check_values(units, below[((units[found] >> 8) & 1) == 1], normalized, ends)
        bases = np.unique(below)


def _check_values(units: np.ndarray, leaves: np.ndarray, normalized: bytes, ends: np.ndarray) -> None:
    """Every leaf's value unit is in the array and names a replacement that fits (see the module doc)."""
    if not len(leaves):
        return
    past = leaves[leaves >= len(units)]
    if len(past):
        raise CharsmapError(f"the precompiled charsmap's trie points past its end at unit {int(past[0]):,}")
    values = units[leaves] & _VALUE
    after = np.searchsorted(ends, values, "left")
    bad = (values >= len(normalized)) | (after >= len(ends))
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise CharsmapError(f"the precompiled charsmap's rule at unit {int(leaves[at]):,} points past its "
                            f"replacement strings (offset {int(values[at]):,} of {len(normalized):,} bytes)")
    lengths = ends[np.minimum(after, len(ends) - 1)] - values
    if int(lengths.max()) > MAX_REPLACEMENT_BYTES:
        at = int(np.argmax(lengths))
        raise CharsmapError(f"the precompiled charsmap's rule at unit {int(leaves[at]):,} is replaced by "
                            f"{int(lengths[at]):,} bytes, over the {MAX_REPLACEMENT_BYTES:,} allowed")


class Charsmap:
    """A precompiled charsmap (see the module doc), every rule checked when it is read."""

    def __init__(self, blob: bytes) -> None:
        if len(blob) <= 4:
            raise CharsmapError("the precompiled charsmap is shorter than its 4-byte header")
        if len(blob) > MAX_CHARSMAP_BYTES:
            raise CharsmapError(f"the precompiled charsmap has {len(blob):,} bytes, over the "
                                f"{MAX_CHARSMAP_BYTES:,} allowed")
        size = int.from_bytes(blob[:4], "little")
        if size >= len(blob) or size % 4:
            raise CharsmapError(f"the precompiled charsmap says its trie has {size:,} bytes, "
                                f"but the blob has {len(blob):,} (and a trie is whole 4-byte units)")
        array = np.frombuffer(blob[4:4 + size], dtype="<u4").astype(np.int64)
        self.normalized = blob[4 + size:]
        if not len(array):
            raise CharsmapError("the precompiled charsmap's trie is empty")
        self._root = int(_offsets(array[:1])[0])
        check_rules(array, self._root, self.normalized)
        self.units: list[int] = array.tolist()
        self.nbytes = len(blob) + 36 * len(self.units)  # (the blob, and the units as a list of ints)
        # (the bytes that start some rule: every other byte is copied without a trie walk)
        self.starts = frozenset(c for c in range(1, 256) if self._child(self._root, c) is not None)

    @staticmethod
    def _offset(unit: int) -> int:
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    def _child(self, base: int, byte: int) -> int | None:
        pos = base ^ byte
        if pos >= len(self.units) or (self.units[pos] & _LABEL) != byte:
            return None
        return pos

    def longest(self, data: bytes, start: int) -> tuple[int, bytes] | None:
        """(bytes matched, replacement) of the longest rule at `start`, or None (Darts' commonPrefixSearch).
        At most MAX_RULE_BYTES steps: the trie was checked to have no longer rule."""
        units = self.units
        base = self._root
        best: tuple[int, bytes] | None = None
        for i in range(start, min(len(data), start + MAX_RULE_BYTES)):
            byte = data[i]
            pos = base ^ byte
            if pos >= len(units):
                break
            unit = units[pos]
            if (unit & _LABEL) != byte:
                break
            base = pos ^ ((unit >> 10) << ((unit & (1 << 9)) >> 6))  # (_offset, inline: the hot loop)
            if (unit >> 8) & 1:  # (checked when read; kept for rules only a NUL byte reaches)
                if base >= len(units):
                    raise CharsmapError(f"the precompiled charsmap's trie points past its end at unit {base:,}")
                value = units[base] & _VALUE
                end = self.normalized.find(b"\0", value)
                if value >= len(self.normalized) or end < 0:
                    raise CharsmapError(f"the precompiled charsmap's rule at unit {base:,} points past its "
                                        f"replacement strings (offset {value:,})")
                best = (i + 1 - start, self.normalized[value:end])
        return best


__all__ = ["Charsmap", "CharsmapError", "MAX_CHARSMAP_BYTES", "MAX_REPLACEMENT_BYTES", "MAX_RULE_BYTES",
           "check_rules"]
