r"""Train BPE on a corpus: stream UTF-8 text, count distinct pre-tokens, learn merges.

What it does not do: normalisation, special tokens, a minimum frequency,
sampling. It never holds more than one block plus the carry of text, and
refuses to keep more than `max_distinct` distinct pre-tokens.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import codecs
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import BinaryIO

import regex

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.pretokenize.chunks import split_strided
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.training.flat import FlatTrainer
from webapp.tokenizer.validation import validate_num_merges

Progress = Callable[[int, int, str], None]
ShouldStop = Callable[[], bool]

SCHEMES: tuple[str, ...] = ("none", *PATTERNS)
LEVELS: tuple[str, ...] = ("chars", "bytes")

# Defaults of the bounds (the web layer passes its configured limits).
DEFAULT_MAX_DISTINCT = 2_000_000  # distinct pre-tokens kept while counting
DEFAULT_MAX_RUN_CHARS = 4 << 20  # characters without a safe cut (one pre-token can't be longer)
DEFAULT_BLOCK_BYTES = 1 << 20  # bytes read from a stream at a time

# The last safe cut in a buffer: greedy `.*` backtracks from the end, so the
# search costs the distance from the end to the cut.
_LAST_CUT = re.compile(r".*(?:[^\W_](?=[^\S\x1c-\x1f])|(?<=\S)[\r\n](?=[^\W_]))", re.S)
_LAST_SPACE = re.compile(r".*\s", re.S)
_NEVER = re.compile(r"(?!)")
# The patterns the safe cuts are proven (docstring) and tested (tests/unit) for.
CUT_SAFE = frozenset({"gpt2", "cl100k", "o200k"})


class TrainingCancelled(Exception):
    """`should_stop()` said stop while counting (no merges exist yet)."""


@dataclass
class PretokenCounts:
    """What counting produced: distinct pre-tokens with counts, and totals for the summary."""

    scheme: str
    counts: Counter[str] = field(default_factory=Counter)
    pretokens: int = 0  # pre-tokens counted, repeats included
    chars: int = 0  # characters read
    bytes: int = 0  # UTF-8 bytes read
    documents: int = 0


class PretokenCounter:
    """Counts the pre-tokens of a stream of text, chunk by chunk (see the module docstring)."""

    def __init__(self, scheme: str, *, max_distinct: int = DEFAULT_MAX_DISTINCT,
                 max_run_chars: int = DEFAULT_MAX_RUN_CHARS) -> None:
        if scheme not in SCHEMES:
            raise TokenizerError(f"pretokenize: expected one of {', '.join(SCHEMES)}, got {scheme!r}",
                                 field="pretokenize")
        self.result = PretokenCounts(scheme=scheme)
        self.max_distinct = max_distinct
        self.max_run_chars = max_run_chars
        self._split: Callable[[str], list[str]] = (
            str.split if scheme == "none"
            else partial(split_strided, scheme=scheme) if scheme in CUT_SAFE
            else regex.compile(PATTERNS[scheme]).findall
        )
        # A pattern the cut rules were not checked for is applied to each document whole.
        self._last_cut = _LAST_SPACE if scheme == "none" else _LAST_CUT if scheme in CUT_SAFE else _NEVER
        self._carry = ""
        self._name = "text"
        self._offset = 0  # UTF-8 bytes of the current document before the carry

    def start_document(self, name: str) -> None:
        """Begin a new document (a file or a paste); pre-tokens never span two documents."""
        self.end_document()
        self._name = name
        self._offset = 0
        self.result.documents += 1

    def skip_to(self, offset: int) -> None:
        """Say that the text fed next starts at UTF-8 byte `offset` of the document (for messages)."""
        if not self._carry:
            self._offset = offset

    def feed(self, text: str) -> None:
        """Count the pre-tokens of `text`, keeping the tail after the last safe cut for later."""
        self.result.chars += len(text)
        buffer = self._carry + text if self._carry else text
        match = self._last_cut.match(buffer)
        if match is None:
            if len(buffer) > self.max_run_chars:
                raise TokenizerError(
                    f"corpus: {self._name} has more than {self.max_run_chars:,} characters from byte offset "
                    f"{self._offset:,} on with no place to cut it into pre-tokens (a letter or digit followed by "
                    "whitespace, or a line break followed by a letter or digit); the limit is "
                    f"{self.max_run_chars:,} characters",
                    field="corpus", location={"file": self._name, "offset": self._offset})
            self._carry = buffer
            return
        cut = match.end()
        body = buffer[:cut]
        self._carry = buffer[cut:]
        self._offset += len(body.encode("utf-8", "surrogatepass"))
        self._count(body)

    def end_document(self) -> None:
        """Count what is carried: the end of a document is always a cut."""
        if self._carry:
            self._offset += len(self._carry.encode("utf-8", "surrogatepass"))
            self._count(self._carry)
            self._carry = ""

    def finish(self) -> PretokenCounts:
        """End the last document and give the counts."""
        self.end_document()
        return self.result

    def _count(self, body: str) -> None:
        result = self.result
        pretokens = self._split(body)
        counts = result.counts
        counts.update(pretokens)  # counted in C, straight into the totals
        result.pretokens += len(pretokens)
        if len(counts) > self.max_distinct:
            raise TokenizerError(
                f"corpus: more than {self.max_distinct:,} distinct pre-tokens (reached in {self._name} before byte "
                f"offset {self._offset:,}); the limit is {self.max_distinct:,}: train on less text or with a "
                "pre-tokenization that splits it into fewer distinct pre-tokens",
                field="corpus", location={"file": self._name, "offset": self._offset})


def count_streams(
    streams: Iterable[tuple[str, BinaryIO]],
    scheme: str,
    *,
    total_bytes: int = 0,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    max_distinct: int = DEFAULT_MAX_DISTINCT,
    max_run_chars: int = DEFAULT_MAX_RUN_CHARS,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> PretokenCounts:
    """Count the pre-tokens of each (name, binary stream), read `block_bytes` at a time."""
    counter = PretokenCounter(scheme, max_distinct=max_distinct, max_run_chars=max_run_chars)
    read = [0]

    def on_block(size: int) -> None:
        read[0] += size
        if progress is not None:
            progress(read[0], max(total_bytes, read[0]),
                     f"counted {read[0]:,} bytes: {counter.result.pretokens:,} pre-tokens, "
                     f"{len(counter.result.counts):,} distinct")

    for name, stream in streams:
        counter.start_document(name)
        count_range(counter, name, stream, block_bytes=block_bytes, on_block=on_block, should_stop=should_stop)
    return counter.finish()


def count_range(counter: PretokenCounter, name: str, stream: BinaryIO, *, start: int = 0, end: int | None = None,
                block_bytes: int = DEFAULT_BLOCK_BYTES, on_block: Callable[[int], None] | None = None,
                should_stop: ShouldStop | None = None) -> None:
    """Feed `counter` the bytes of `stream` from its position (byte offset `start` of `name`) to `end`."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = start
    counter.skip_to(start)
    while True:
        if should_stop is not None and should_stop():
            raise TrainingCancelled()
        want = block_bytes if end is None else min(block_bytes, end - offset)
        block = stream.read(want) if want > 0 else b""
        final = not block
        pending = len(decoder.getstate()[0])  # bytes of a character cut off by the last block
        try:
            text = decoder.decode(block, final=final)
        except UnicodeDecodeError as exc:
            # exc.start counts from the pending bytes, which came before `offset`.
            at = offset - pending + exc.start
            raise TokenizerError(f"corpus: {name} is not UTF-8: byte offset {at:,} starts an invalid "
                                 "sequence", field="corpus", location={"file": name, "offset": at}) from None
        offset += len(block)
        counter.result.bytes += len(block)
        if text:
            counter.feed(text)
        if on_block is not None:
            on_block(len(block))
        if final:
            break


def count_text(texts: Iterable[str], scheme: str, **limits: int) -> PretokenCounts:
    """Count the pre-tokens of whole texts (each a document); for pastes and tests."""
    counter = PretokenCounter(scheme, **limits)
    for index, text in enumerate(texts, start=1):
        counter.start_document(f"text {index}")
        counter.feed(text)
        counter.result.bytes += len(text.encode("utf-8", "surrogatepass"))
    return counter.finish()


@dataclass
class CorpusTraining:
    """A training run's answer."""

    level: str
    pairs: list[tuple[str, str]] | list[tuple[bytes, bytes]]
    counts: list[int]
    runner_up: list[int]
    merges: list[list[int]] | list[str]
    stopped: str
    alphabet: list[str]  # chars level: the distinct characters, sorted; bytes level: []
    seconds: float
    symbols: int = 0  # symbols (bytes or characters) in all pre-tokens before training, repeats included
    tokens: int = 0  # tokens after the learned merges, repeats included


class PretokenTrainer:
    """The incremental trainer over distinct pre-tokens, one step at a time (see `train_counts`)."""

    def __init__(self, counts: Mapping[str, int], level: str) -> None:
        if level not in LEVELS:
            raise TokenizerError(f"level: expected one of {', '.join(LEVELS)}, got {level!r}", field="level")
        self.level = level
        self.unit = _UNITS[level]
        self._trainer = FlatTrainer(self.unit.engine_counts(counts))  # it leaves out pre-tokens of fewer than two symbols

    def step(self) -> tuple[tuple[str, str], int, int] | None:
        """Merge the best pair; its (pair, count, runner-up count), or None when no pair is left."""
        best = self._trainer.take_best()
        if best is not None:
            self._trainer.merge(best[0])
        return best

    def token_count(self, symbols: int) -> int:
        """How many tokens the pre-tokens are now, given how many symbols they started with."""
        return symbols - self._trainer.merged_away  # each match took one symbol away

    def pair_count(self, first: str, second: str) -> int:
        """The current count of a pair (engine strings: latin-1 at the bytes level)."""
        return self._trainer.pair_count(first, second)


def train_counts(
    counts: Mapping[str, int],
    level: str,
    num_merges: int,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> CorpusTraining:
    """Learn up to `num_merges` merges from distinct pre-tokens and their counts."""
    num_merges = validate_num_merges(num_merges)
    started = time.perf_counter()
    trainer = PretokenTrainer(counts, level)
    pairs: list[tuple[str, str]] = []
    winning: list[int] = []
    runner_up: list[int] = []
    stopped = "done"
    every = max(1, num_merges // 200)  # about 200 progress reports per run
    for done in range(num_merges):
        if should_stop is not None and should_stop():
            stopped = "cancelled"
            break
        step = trainer.step()
        if step is None:
            stopped = "exhausted"
            break
        pairs.append(step[0])
        winning.append(step[1])
        runner_up.append(step[2])
        if progress is not None and (done + 1) % every == 0:
            progress(done + 1, num_merges, f"merge {done + 1:,} of {num_merges:,} (count {step[1]:,})")
    size = trainer.unit.symbol_count
    symbols = sum(n * size(pretoken) for pretoken, n in counts.items())
    return trainer.unit.result(pairs, winning, runner_up, stopped, counts, time.perf_counter() - started,
                               symbols, trainer.token_count(symbols))


def byte_merge_rules(pairs: Iterable[tuple[bytes, bytes]]) -> list[list[int]]:
    """Rules [left, right, 256 + k] from byte-string pairs; an operand is the first id spelling its bytes."""
    ids: dict[bytes, int] = {bytes([b]): b for b in range(256)}
    rules: list[list[int]] = []
    for k, (left, right) in enumerate(pairs):
        rules.append([ids[left], ids[right], 256 + k])
        ids.setdefault(left + right, 256 + k)
    return rules


class _ByteTraining:
    """Training on bytes: the engine's symbols are each pre-token's UTF-8 bytes, one latin-1 character a byte."""

    def engine_counts(self, counts: Mapping[str, int]) -> Mapping[str, int]:
        """The counts as the engine takes them (distinct pre-tokens stay distinct)."""
        return {_utf8(pretoken).decode("latin-1"): n for pretoken, n in counts.items()}

    def symbol_count(self, pretoken: str) -> int:
        return len(_utf8(pretoken))

    def result(self, pairs: list[tuple[str, str]], winning: list[int], runner_up: list[int], stopped: str,
               counts: Mapping[str, int], seconds: float, symbols: int, tokens: int) -> CorpusTraining:
        byte_pairs = [(a.encode("latin-1"), b.encode("latin-1")) for a, b in pairs]
        return CorpusTraining("bytes", byte_pairs, winning, runner_up, byte_merge_rules(byte_pairs), stopped, [],
                              seconds, symbols, tokens)


class _CharTraining:
    """Training on characters: the pre-tokens as they are (each must still be UTF-8-encodable)."""

    def engine_counts(self, counts: Mapping[str, int]) -> Mapping[str, int]:
        for pretoken in counts:
            _utf8(pretoken)
        return counts

    symbol_count = staticmethod(len)  # (C-level: called once per distinct pre-token)

    def result(self, pairs: list[tuple[str, str]], winning: list[int], runner_up: list[int], stopped: str,
               counts: Mapping[str, int], seconds: float, symbols: int, tokens: int) -> CorpusTraining:
        alphabet = sorted({ch for pretoken in counts for ch in pretoken})
        return CorpusTraining("chars", pairs, winning, runner_up, [a + b for a, b in pairs], stopped, alphabet,
                              seconds, symbols, tokens)


#: What differs between the two levels of `LEVELS`.
_UNITS: dict[str, _ByteTraining | _CharTraining] = {"chars": _CharTraining(), "bytes": _ByteTraining()}


def _utf8(pretoken: str) -> bytes:
    try:
        return pretoken.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokenizerError(f"corpus: a pre-token holds a lone surrogate at character {exc.start + 1}, which UTF-8 "
                             "cannot encode", field="corpus") from None
