"""The literal BPE training algorithm of the GUIDE, kept as the test oracle.

Written for clarity, not speed: every step recounts every pair in every word
and rewrites every word. The engine in `webapp.tokenizer.training` must give
exactly these answers. No validation here: callers pass well-formed input.
"""

from __future__ import annotations


def count_pairs(words: list[list[str]]) -> dict[tuple[str, str], int]:
    """Every adjacent pair in every word, overlapping ones included ("aaaa" holds (a, a) three times)."""
    counts: dict[tuple[str, str], int] = {}
    for symbols in words:
        for i in range(len(symbols) - 1):
            pair = (symbols[i], symbols[i + 1])
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def best_pair(counts: dict[tuple[str, str], int]) -> tuple[str, str]:
    """The most frequent pair; on a tie the smallest (first, second) tuple."""
    top = max(counts.values())
    return min(pair for pair, count in counts.items() if count == top)


def merge_word(symbols: list[str], pair: tuple[str, str]) -> list[str]:
    """Replace (first, second) left to right, without overlaps, by first + second."""
    out: list[str] = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def literal_train(words: list[str], num_merges: int) -> list[tuple[tuple[str, str], int]]:
    """Each step's chosen pair and its count, in order."""
    split = [list(word) for word in words]  # repeated words count every time
    steps: list[tuple[tuple[str, str], int]] = []
    for _ in range(num_merges):
        counts = count_pairs(split)
        if not counts:  # no word has two symbols left
            break
        pair = best_pair(counts)
        steps.append((pair, counts[pair]))
        split = [merge_word(symbols, pair) for symbols in split]
    return steps


def literal_bpe_merges(words: list[str], num_merges: int) -> list[str]:
    """The GUIDE's `bpe_merges`, literally: the merged string of each step."""
    return [first + second for (first, second), _ in literal_train(words, num_merges)]


def literal_step_counts(words: list[str], num_merges: int) -> list[dict[tuple[str, str], int]]:
    """The full pair counts before each step, for checking runner-ups and ties."""
    split = [list(word) for word in words]
    history: list[dict[tuple[str, str], int]] = []
    for _ in range(num_merges):
        counts = count_pairs(split)
        if not counts:
            break
        history.append(counts)
        split = [merge_word(symbols, best_pair(counts)) for symbols in split]
    return history
