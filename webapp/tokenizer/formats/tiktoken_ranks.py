"""tiktoken rank files (`base64(token) rank` per line): import and export.

A rank file lists tokens, not rules; import recovers the rule behind every
token by replaying tiktoken's merging of its bytes with the lower ranks.
Export writes one only when tiktoken's merging by rank gives the same ids,
else refuses, naming the rule. What it does not do: choose a pre-tokenizer
(a rank file does not say; the caller does).

Details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import base64
import binascii
import heapq
from dataclasses import replace
from typing import Mapping

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.building import build_byte_level
from webapp.tokenizer.formats.common import file_text, file_error, shown_value
from webapp.tokenizer.formats.export_checks import check_well_formed_bytes, export_error, char_merges_to_bytes
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits


def _tiktoken_lines(content: str | bytes, max_token_bytes: int) -> list[tuple[int, bytes, int]]:
    text = file_text(content, "rank file")
    # base64 of n bytes is 4 * ceil(n / 3) characters: longer is refused before decoding.
    max_chars = 4 * -(-max_token_bytes // 3)
    out: list[tuple[int, bytes, int]] = []
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not (parts[1].isascii() and parts[1].isdigit()):
            raise file_error(
                f"line {line_no} of the rank file should be a base64 token and a rank, got {shown_value(line)}",
                line=line_no,
            )
        if len(parts[0]) > max_chars:
            raise file_error(
                f"line {line_no} of the rank file: a token of about {len(parts[0]) * 3 // 4:,} bytes is over the "
                f"limit of {max_token_bytes:,} bytes per token (setting LIMIT_TOKEN_BYTES)",
                line=line_no, limit=max_token_bytes,
            )
        try:
            # A token of padding only ("=", Whisper's rank files) is the empty
            # token: tiktoken's own loader reads it as b"".
            token = b"" if parts[0].strip("=") == "" else base64.b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise file_error(
                f"line {line_no} of the rank file: {shown_value(parts[0])} is not valid base64", line=line_no
            ) from None
        if len(parts[1]) > 18:  # int() refuses over 4300 digits; no real rank is near 10**18
            raise file_error(
                f"line {line_no} of the rank file: rank {shown_value(parts[1])} is too large", line=line_no
            )
        out.append((line_no, token, int(parts[1])))
    if not out:
        raise file_error("the rank file is empty")
    return out


def recover_rank_merges(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes, bytes]]:
    """The merge behind every multi-byte token, in rank order."""
    out: list[tuple[bytes, bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts = _merge_below(token, rank, ranks)
        if len(parts) != 2:
            raise TokenizerError(
                f"file: token {shown_value(token)} (rank {rank}) cannot be made by merging two tokens of lower "
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
    """tiktoken-style merging of `token`'s bytes using only ranks below `limit`."""
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
            raise file_error(f"line {line_no}: token {shown_value(token)} is listed twice", line=line_no)
        if rank in by_rank:
            raise file_error(
                f"line {line_no}: rank {rank} is already given to the token on line {by_rank[rank]}",
                line=line_no,
            )
        by_rank[rank] = line_no
        if not token:
            if empty is not None:
                raise file_error(f"line {line_no}: token b'' is listed twice", line=line_no)
            empty = (line_no, rank)
            continue
        ranks[token] = rank
    total = sum(map(len, ranks))
    if total > limits.vocab_bytes:  # before replaying merges, which costs per byte
        raise file_error(
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
    """Keep a rank file's empty token (Whisper's `= 50256`): never made from text, decodes to nothing."""
    line_no, rank = empty
    used = set(tok.vocab) | set(tok.id_map) | set(tok.id_map.values())
    if rank >= 256 and rank not in used:
        note = (f"line {line_no}: rank {rank} is the empty token (as in Whisper's files); BPE never "
                "makes it, and its id decodes to nothing")
        return replace(tok, vocab={**tok.vocab, rank: b""}, notes=tok.notes + (note,))
    note = f"line {line_no}: rank {rank} is the empty token; BPE never makes it, so it is left out"
    return replace(tok, notes=tok.notes + (note,))


def export_tiktoken(tok: LoadedTokenizer) -> str:
    """A tiktoken rank file: every token's bytes in base64 and its id as the rank."""
    if tok.level == "chars":
        rules = char_merges_to_bytes(tok.merges)[0]
        tok = LoadedTokenizer(level="bytes", merges=tuple(rules), vocab={}, source=tok.source)
    made = check_well_formed_bytes(tok)
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
    """Refuse rules that tiktoken, merging by rank, would apply differently."""
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
            raise export_error(
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
            raise export_error(
                f"rule {number} makes {data!r} from {wanted[0]!r} + {wanted[1]!r}, but tiktoken, merging "
                f"by rank, would make it from {shown}; this list cannot be exported as a rank file "
                "with the same ids",
                rule=number,
            )
