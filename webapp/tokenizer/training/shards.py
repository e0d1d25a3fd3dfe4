"""Count a corpus's pre-tokens on several cores: forked processes over shards cut at safe cuts.

What it does not do: threads (the split holds the GIL), or sampling.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import codecs
import gc
import mmap
import os
import pickle
import re
import resource
import select
import signal
import struct
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webapp.tokenizer.errors import TokenizerError
from webapp.system.processes import die_with_parent, vm_size_bytes
from webapp.tokenizer.training.corpus import (
    CUT_SAFE,
    DEFAULT_BLOCK_BYTES,
    DEFAULT_MAX_DISTINCT,
    DEFAULT_MAX_RUN_CHARS,
    PretokenCounter,
    PretokenCounts,
    Progress,
    ShouldStop,
    TrainingCancelled,
    count_range,
    count_streams,
)

MIN_PARALLEL_BYTES = 2 << 20  # below this, forking costs more than it saves
WINDOW = 1 << 16  # bytes read after a nominal boundary to find a safe cut
MAX_WINDOW = 1 << 22  # give up (run to the file's end) after this many

# The first safe cut at or after a position (corpus.py's rules (A) and (B));
# searched from character 1 of a window, so the lookbehind sees real text.
_NEXT_CUT = {
    "pattern": re.compile(r"[^\W_](?=[^\S\x1c-\x1f])|(?<=\S)[\r\n](?=[^\W_])"),
    "none": re.compile(r"\s"),  # "none" splits on whitespace: any whitespace character is a cut
}


@dataclass(frozen=True)
class Segment:
    """Bytes [start, end) of file `index` (end None: to the file's end)."""

    index: int
    start: int
    end: int | None


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def count_files(
    files: Sequence[tuple[str, Path]],
    scheme: str,
    *,
    workers: int | None = None,
    min_parallel_bytes: int = MIN_PARALLEL_BYTES,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    max_distinct: int = DEFAULT_MAX_DISTINCT,
    max_run_chars: int = DEFAULT_MAX_RUN_CHARS,
    window: int = WINDOW,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> PretokenCounts:
    """Count the pre-tokens of each (name, path) in `workers` processes (see the module docstring)."""
    PretokenCounter(scheme)  # the scheme's check, before any work
    sizes = [path.stat().st_size for _, path in files]
    total = sum(sizes)
    workers = default_workers() if workers is None else max(1, workers)
    if workers == 1 or total < min_parallel_bytes or (scheme not in CUT_SAFE and scheme != "none"):
        handles = [(name, path.open("rb")) for name, path in files]
        try:
            return count_streams(handles, scheme, total_bytes=total, block_bytes=block_bytes,
                                 max_distinct=max_distinct, max_run_chars=max_run_chars,
                                 progress=progress, should_stop=should_stop)
        finally:
            for _, handle in handles:
                handle.close()
    finder = _NEXT_CUT["none" if scheme == "none" else "pattern"]
    shards = plan_shards(files, sizes, workers, finder, window)
    results = _run_children(files, shards, scheme, total, block_bytes, max_distinct, max_run_chars,
                            progress, should_stop)
    merged = PretokenCounts(scheme=scheme, documents=len(files))
    for part in results:
        merged.pretokens += part.pretokens
        merged.chars += part.chars
        merged.bytes += part.bytes
        if not merged.counts:
            merged.counts = part.counts
        else:
            counts = merged.counts
            get = counts.get
            for pretoken, n in part.counts.items():
                counts[pretoken] = get(pretoken, 0) + n
        part.counts = Counter()  # let it go
        if len(merged.counts) > max_distinct:
            raise TokenizerError(
                f"corpus: more than {max_distinct:,} distinct pre-tokens (reached while adding up the counts of "
                f"the corpus's parts); the limit is {max_distinct:,}: train on less text or with a "
                "pre-tokenization that splits it into fewer distinct pre-tokens", field="corpus")
    return merged


def plan_shards(files: Sequence[tuple[str, Path]], sizes: list[int], workers: int, finder: re.Pattern[str],
                window: int = WINDOW) -> list[list[Segment]]:
    """Up to `workers` lists of segments, in corpus order, each about total / workers bytes."""
    total = sum(sizes)
    target = -(-total // workers)
    shards: list[list[Segment]] = []
    current: list[Segment] = []
    filled = 0
    for index, size in enumerate(sizes):
        position = 0
        while position < size or (size == 0 and position == 0):
            room = target - filled
            if size - position <= room or len(shards) == workers - 1:
                current.append(Segment(index, position, None))
                filled += size - position
                break
            cut = _safe_cut(files[index][1], position + room, finder, window)
            if cut is None or cut >= size:
                current.append(Segment(index, position, None))
                filled += size - position
                break
            current.append(Segment(index, position, cut))
            shards.append(current)
            current, filled, position = [], 0, cut
        if filled >= target and len(shards) < workers - 1:
            shards.append(current)
            current, filled = [], 0
    if current:
        shards.append(current)
    return shards


def _safe_cut(path: Path, at: int, finder: re.Pattern[str], window: int) -> int | None:
    """The byte offset of the first safe cut after byte `at` of the file, or None (see the docstring)."""
    with path.open("rb") as handle:
        handle.seek(at)
        data = handle.read(window)
        while True:
            skip = 0
            while skip < len(data) and 0x80 <= data[skip] < 0xC0:
                skip += 1  # a continuation byte: the character started before `at`
            decoder = codecs.getincrementaldecoder("utf-8")("strict")
            try:
                text = decoder.decode(data[skip:], final=False)
            except UnicodeDecodeError:
                return None
            match = finder.search(text, 1)
            if match is not None:
                return at + skip + len(text[:match.end()].encode("utf-8"))
            if len(data) < window or len(data) >= MAX_WINDOW:
                return None  # the file ended, or too long without a cut
            more = handle.read(len(data))
            if not more:
                return None
            data += more


def _run_children(files: Sequence[tuple[str, Path]], shards: list[list[Segment]], scheme: str, total: int,
                  block_bytes: int, max_distinct: int, max_run_chars: int, progress: Progress | None,
                  should_stop: ShouldStop | None) -> list[PretokenCounts]:
    """Fork one child per shard; wait for their counts while reporting progress; raise their errors."""
    page = mmap.mmap(-1, 8 * len(shards))
    children: list[tuple[int, int]] = []  # (pid, read end)
    try:
        for number, shard in enumerate(shards):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: never returns
                os.close(read_end)
                _child(write_end, page, number, len(shards), files, shard, scheme, block_bytes, max_distinct,
                       max_run_chars)
            os.close(write_end)
            children.append((pid, read_end))
        received = _collect(children, page, total, progress, should_stop)
    finally:
        for pid, read_end in children:
            _close_quietly(read_end)
            try:
                os.kill(pid, signal.SIGKILL)  # gone already after a normal end: ProcessLookupError
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        page.close()
    # A child that ended without a word was killed: under an address-space limit, by running out of memory.
    outcomes: list[tuple[Any, ...]] = [pickle.loads(data) if data else ("memory",) for data in received]
    for outcome in outcomes:
        if outcome[0] == "memory":
            raise MemoryError()
        if outcome[0] == "error":
            raise TokenizerError(outcome[1], field=outcome[2], location=outcome[3])
    counted: list[PretokenCounts] = [outcome[1] for outcome in outcomes]
    return counted


def _collect(children: list[tuple[int, int]], page: mmap.mmap, total: int, progress: Progress | None,
             should_stop: ShouldStop | None) -> list[bytes]:
    """Read every child's pipe to its end; report bytes read (from the shared page) and honour a stop."""
    buffers: dict[int, list[bytes]] = {fd: [] for _, fd in children}
    open_fds = set(buffers)
    while open_fds:
        if should_stop is not None and should_stop():
            raise TrainingCancelled()
        ready, _, _ = select.select(list(open_fds), [], [], 0.1)
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if chunk:
                buffers[fd].append(chunk)
            else:
                open_fds.discard(fd)
        if progress is not None:
            done = sum(struct.unpack_from("<q", page, 8 * k)[0] for k in range(len(children)))
            progress(min(done, total), total, f"counted {done:,} of {total:,} bytes in {len(children)} processes")
    return [b"".join(buffers[fd]) for _, fd in children]


def _child(write_end: int, page: mmap.mmap, number: int, children: int, files: Sequence[tuple[str, Path]],
           shard: list[Segment], scheme: str, block_bytes: int, max_distinct: int, max_run_chars: int) -> None:
    """In a forked child: count the shard, send the outcome, exit (never returns)."""
    code = 0
    # Out of the collector's sight: a collection walking the objects inherited from the job would
    # write their headers and so copy the job's pages into this process.
    gc.freeze()
    try:
        die_with_parent()
        _share_address_space(children)
        counter = PretokenCounter(scheme, max_distinct=max_distinct, max_run_chars=max_run_chars)
        read = [0]

        def on_block(size: int) -> None:
            read[0] += size
            struct.pack_into("<q", page, 8 * number, read[0])

        for segment in shard:
            name, path = files[segment.index]
            counter.start_document(name)
            with path.open("rb") as handle:
                handle.seek(segment.start)
                count_range(counter, name, handle, start=segment.start, end=segment.end,
                            block_bytes=block_bytes, on_block=on_block)
        result = counter.finish()
        result.documents = 0  # the parent counts the files
        outcome: tuple[Any, ...] = ("done", result)
    except TokenizerError as exc:
        outcome = ("error", exc.message, exc.field, exc.location)
    except MemoryError:
        outcome = ("memory",)
    except BaseException as exc:  # reported, never lost
        outcome = ("error", f"corpus: counting failed ({type(exc).__name__})", "corpus", None)
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _share_address_space(children: int) -> None:
    """In a child: take 1/children of the room left under RLIMIT_AS, so all together stay within it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return
    used = vm_size_bytes()
    if used and soft > used:
        resource.setrlimit(resource.RLIMIT_AS, (used + (soft - used) // children, hard))


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


__all__ = ["MIN_PARALLEL_BYTES", "Segment", "count_files", "default_workers", "plan_shards"]
