"""The four algorithms of docs/algorithms.md, written literally: start reading here.

What it does not do: validate input types or sizes (the public functions in
`webapp.tokenizer` do that, with messages naming field and place), traces,
pre-tokenization. The only errors raised here are the ones the contract
itself defines (an unknown id, bytes that are not UTF-8, a token missing from
the vocab), as `ValueError`s that say where. Arguments are never modified.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

Symbol = TypeVar("Symbol", int, str, bytes)

ByteRule = Sequence[int]  # [left, right, new]
CharRule = Sequence[str]  # [left, right]; the new token is left + right


def merge(sequence: Sequence[Symbol], left: Symbol, right: Symbol, new: Symbol) -> list[Symbol]:
    """One visit of one rule: scanning left to right, replace each non-overlapping (left, right) by new."""
    out: list[Symbol] = []
    i = 0
    while i < len(sequence):
        if i + 1 < len(sequence) and sequence[i] == left and sequence[i + 1] == right:
            out.append(new)
            i += 2
        else:
            out.append(sequence[i])
            i += 1
    return out


# --- 1. byte-level encode ---------------------------------------------------------


def encode(text: str, merges: Iterable[ByteRule]) -> list[int]:
    """UTF-8 bytes of `text` as ids 0..255, then every rule [left, right, new] visited once, in list order."""
    sequence = list(text.encode("utf-8"))  # a lone surrogate raises UnicodeEncodeError (a ValueError)
    for left, right, new in merges:
        sequence = merge(sequence, left, right, new)
    return sequence


# --- 2. byte-level decode ---------------------------------------------------------


def decode(ids: Iterable[int], vocab: Mapping[int | str, Sequence[int] | bytes]) -> str:
    """All ids' bytes concatenated, then strict UTF-8 over the whole."""
    table = {int(key): bytes(value) for key, value in vocab.items()}
    data = bytearray()
    for position, token_id in enumerate(ids, start=1):
        if token_id in table:
            data += table[token_id]
        elif 0 <= token_id <= 255:
            data.append(token_id)
        else:
            raise ValueError(f"id {token_id} (position {position}) is not in the vocab")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"the bytes are not valid UTF-8 at byte offset {error.start}") from None


# --- 3. character-level encode ----------------------------------------------------


def char_tokens(text: str, merges: Iterable[CharRule]) -> list[str]:
    """The code points of `text`, then every rule [left, right] visited once, in list order."""
    sequence = list(text)  # code points: no graphemes, no words, no normalisation
    for left, right in merges:
        sequence = merge(sequence, left, right, left + right)
    return sequence


def bpe_encode_text(text: str, vocab: Mapping[str, int], merges: Iterable[CharRule]) -> list[int]:
    """`char_tokens`, then each token looked up in `vocab` (token -> id) only after the last rule."""
    ids: list[int] = []
    for position, token in enumerate(char_tokens(text, merges), start=1):
        if token not in vocab:
            raise ValueError(f"token {token!r} (position {position}) is not in the vocab")
        ids.append(vocab[token])
    return ids


# --- 4. training ------------------------------------------------------------------

Pair = tuple[str, str]


def count_pairs(words: Iterable[Sequence[str]]) -> dict[Pair, int]:
    """Every adjacent pair of every word, overlapping ones included ("aaaa" holds (a, a) three times)."""
    counts: dict[Pair, int] = {}
    for symbols in words:
        for i in range(len(symbols) - 1):
            pair = (symbols[i], symbols[i + 1])
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def best_pair(counts: Mapping[Pair, int]) -> Pair:
    """The most frequent pair; on a tie the smallest (first, second) tuple of strings."""
    top = max(counts.values())
    return min(pair for pair, count in counts.items() if count == top)


def train_steps(words: Iterable[str], num_merges: int) -> list[tuple[Pair, dict[Pair, int]]]:
    """Each step's winning pair with the full pair counts it was chosen from, in order."""
    split = [list(word) for word in words]  # a repeated word counts every time
    steps: list[tuple[Pair, dict[Pair, int]]] = []
    for _ in range(num_merges):
        counts = count_pairs(split)
        if not counts:  # no word has two symbols left
            break
        first, second = best_pair(counts)
        steps.append(((first, second), counts))
        split = [merge(symbols, first, second, first + second) for symbols in split]
    return steps


def bpe_merges(words: Iterable[str], num_merges: int) -> list[str]:
    """The merged token (first + second) of each training step, in order."""
    return [first + second for (first, second), _ in train_steps(words, num_merges)]


# --- what each visit did, for checking traces ----------------------------------------


def steps(initial: Sequence[Symbol], rules: Iterable[Sequence[Symbol]]) -> list[tuple[int, int, tuple[Symbol, ...]]]:
    """Every rule (left, right, new) that changed something: (its 0-based index, matches, sequence after it)."""
    out: list[tuple[int, int, tuple[Symbol, ...]]] = []
    sequence = list(initial)
    for index, (left, right, new) in enumerate(rules):
        after = merge(sequence, left, right, new)
        if len(after) < len(sequence):
            out.append((index, len(sequence) - len(after), tuple(after)))
        sequence = after
    return out


# --- 5. training over bytes (corpus training) -------------------------------------------

BytePair = tuple[bytes, bytes]


def train_byte_steps(pretokens: Iterable[bytes], num_merges: int) -> tuple[list[tuple[BytePair, int]], list[list[bytes]]]:
    """Training 4 over UTF-8 bytes: each pre-token starts as single bytes; ties go to the smallest (first, second) bytes.

    Returns each step's winning pair with its count, and every pre-token's symbols at the end.
    """
    split = [[bytes([b]) for b in pretoken] for pretoken in pretokens]
    out: list[tuple[BytePair, int]] = []
    for _ in range(num_merges):
        counts: dict[BytePair, int] = {}
        for symbols in split:
            for i in range(len(symbols) - 1):
                pair = (symbols[i], symbols[i + 1])
                counts[pair] = counts.get(pair, 0) + 1
        if not counts:
            break
        top = max(counts.values())
        first, second = min(pair for pair, count in counts.items() if count == top)  # bytes compare byte by byte
        out.append(((first, second), top))
        split = [merge(symbols, first, second, first + second) for symbols in split]
    return out, split


def byte_training_rules(pairs: Iterable[BytePair]) -> list[list[int]]:
    """Rules [left, right, new] for learned byte pairs: byte b is id b, step k makes 256 + k,
    and an operand is the first id that spells its bytes."""
    first_id = {bytes([b]): b for b in range(256)}
    rules = []
    for k, (left, right) in enumerate(pairs):
        rules.append([first_id[left], first_id[right], 256 + k])
        first_id.setdefault(left + right, 256 + k)
    return rules


# --- 6. the library's merge order (Hugging Face BPE files) -----------------------------


def library_order_merge(symbols: Sequence[Symbol], rules: Sequence[Sequence[Symbol]]) -> list[Symbol]:
    """A word merged the way the `tokenizers` library reads a merge list (not the contract's order)."""
    rank: dict[tuple[Symbol, Symbol], int] = {}
    for index, (left, right, _new) in enumerate(rules):
        rank[(left, right)] = index
    sequence = list(symbols)
    while True:
        present = [(rank[pair], i) for i, pair in enumerate(zip(sequence, sequence[1:])) if pair in rank]
        if not present:
            return sequence
        best, i = min(present)
        sequence[i : i + 2] = [rules[best][2]]
