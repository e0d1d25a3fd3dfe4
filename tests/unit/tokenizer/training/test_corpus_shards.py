"""Counting in forked processes over shards: exactly the streamed, one-process count.

The oracle is `count_streams` (itself tested against the pattern over each
whole document in test_corpus_training.py). The strategies force the parallel
path on tiny files (`min_parallel_bytes=0`), with windows of a few bytes, so
shards end inside files at safe cuts, at file ends, after a failed search, and
the counts of up to five processes are added up.
"""

from __future__ import annotations

import io
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import TokenizerError
from webapp.tokenizer.training.corpus import SCHEMES, TrainingCancelled, count_streams
from webapp.tokenizer.training.shards import _NEXT_CUT, count_files, plan_shards

pytestmark = pytest.mark.forks  # count_files forks this process (tests/conftest.py puts it first)

SPICY = "ab A'sltdé中文1234.,!/  \t\n\r\x0b\x1c\xa0\u3000。-_"


def _write(folder: Path, docs: list[str]) -> list[tuple[str, Path]]:
    files = []
    for i, doc in enumerate(docs):
        path = folder / f"doc{i}.txt"
        path.write_bytes(doc.encode("utf-8"))
        files.append((f"doc{i}.txt", path))
    return files


def _serial(docs: list[str], scheme: str):
    return count_streams([(f"doc{i}.txt", io.BytesIO(d.encode())) for i, d in enumerate(docs)], scheme)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.text(alphabet=SPICY, max_size=80), min_size=1, max_size=4),
       workers=st.integers(2, 5), window=st.integers(1, 16), block=st.integers(1, 32),
       scheme=st.sampled_from(SCHEMES))
@pytest.mark.slow
def test_parallel_counts_are_the_serial_counts(tmp_path: Path, docs: list[str], workers: int, window: int,
                                               block: int, scheme: str) -> None:
    files = _write(tmp_path, docs)
    got = count_files(files, scheme, workers=workers, min_parallel_bytes=0, window=window, block_bytes=block)
    want = _serial(docs, scheme)
    assert Counter(got.counts) == Counter(want.counts)
    assert (got.pretokens, got.chars, got.bytes, got.documents) == (want.pretokens, want.chars, want.bytes,
                                                                     want.documents)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.text(alphabet=SPICY, max_size=200), min_size=1, max_size=4),
       workers=st.integers(2, 6), window=st.integers(1, 64), scheme=st.sampled_from(SCHEMES))
def test_shards_cover_the_files_in_order(tmp_path: Path, docs: list[str], workers: int, window: int,
                                         scheme: str) -> None:
    files = _write(tmp_path, docs)
    sizes = [path.stat().st_size for _, path in files]
    finder = _NEXT_CUT["none" if scheme == "none" else "pattern"]
    shards = plan_shards(files, sizes, workers, finder, window)
    assert 1 <= len(shards) <= workers
    segments = [segment for shard in shards for segment in shard]
    # Every byte of every file exactly once, in order; a cut inside a file starts a character.
    expected_start = {i: 0 for i in range(len(files))}
    for segment in segments:
        assert segment.start == expected_start[segment.index]
        end = sizes[segment.index] if segment.end is None else segment.end
        assert segment.start <= end <= sizes[segment.index]
        if segment.end is not None:
            assert not 0x80 <= files[segment.index][1].read_bytes()[segment.end] < 0xC0
        expected_start[segment.index] = end
    assert expected_start == dict(enumerate(sizes))
    assert [s.index for s in segments] == sorted(s.index for s in segments)


def test_big_files_are_counted_in_parallel(tmp_path: Path) -> None:
    docs = ["Hello wörld, it's 2024!\n  indented line\r\n" * 3000, "x" * 10 + " 中文 text\n" * 5000]
    files = _write(tmp_path, docs)
    reports: list[tuple[int, int]] = []
    got = count_files(files, "gpt2", workers=3, min_parallel_bytes=0, block_bytes=4096,
                      progress=lambda done, total, message: reports.append((done, total)))
    assert Counter(got.counts) == Counter(_serial(docs, "gpt2").counts)
    assert reports and all(done <= total for done, total in reports)
    assert reports[-1][0] == reports[-1][1] == sum(len(d.encode()) for d in docs)


def test_errors_in_a_shard_name_the_file_and_offset(tmp_path: Path) -> None:
    good = ("fine words here\n" * 200).encode()
    bad = good + b"\xff" + good
    (tmp_path / "a.txt").write_bytes(good)
    (tmp_path / "b.txt").write_bytes(bad)
    files = [("a.txt", tmp_path / "a.txt"), ("b.txt", tmp_path / "b.txt")]
    with pytest.raises(TokenizerError, match=f"b.txt is not UTF-8: byte offset {len(good):,}") as info:
        count_files(files, "gpt2", workers=4, min_parallel_bytes=0, block_bytes=100)
    assert info.value.location == {"file": "b.txt", "offset": len(good)}


def test_too_many_distinct_over_all_shards(tmp_path: Path) -> None:
    docs = [" ".join(f"w{i}" for i in range(0, 300)), " ".join(f"w{i}" for i in range(300, 600))]
    files = _write(tmp_path, docs)
    assert len(count_files(files, "none", workers=2, min_parallel_bytes=0, max_distinct=600).counts) == 600
    with pytest.raises(TokenizerError, match="more than 599 distinct"):
        count_files(files, "none", workers=2, min_parallel_bytes=0, max_distinct=599)


def test_a_stop_ends_the_children(tmp_path: Path) -> None:
    files = _write(tmp_path, ["word " * 200_000, "more " * 200_000])
    with pytest.raises(TrainingCancelled):
        count_files(files, "gpt2", workers=2, min_parallel_bytes=0, block_bytes=1000, should_stop=lambda: True)


@pytest.mark.parametrize("failure", ["memory", "killed"])
def test_a_child_out_of_memory_is_a_memory_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 failure: str) -> None:
    # The job's runner turns MemoryError into the message naming JOB_MEMORY_MB.
    from webapp.tokenizer.training import shards

    def fail(*args: object, **kwargs: object) -> None:
        if failure == "memory":
            raise MemoryError()
        os._exit(1)  # killed without a word

    monkeypatch.setattr(shards, "count_range", fail)  # the forked children inherit the patch
    files = _write(tmp_path, ["some words here\n" * 100, "more words\n" * 100])
    with pytest.raises(MemoryError):
        count_files(files, "gpt2", workers=2, min_parallel_bytes=0)


def test_children_share_the_address_space_limit() -> None:
    import multiprocessing
    import resource

    from webapp.tokenizer.training import shards

    def child(queue: "multiprocessing.Queue[int]") -> None:
        used = shards.vm_size_bytes()
        resource.setrlimit(resource.RLIMIT_AS, (used + (400 << 20), resource.RLIM_INFINITY))
        shards._share_address_space(4)
        queue.put(resource.getrlimit(resource.RLIMIT_AS)[0] - shards.vm_size_bytes())

    context = multiprocessing.get_context("fork")
    queue: "multiprocessing.Queue[int]" = context.Queue()
    process = context.Process(target=child, args=(queue,))
    process.start()
    room = queue.get(timeout=30)
    process.join()
    assert 90 << 20 <= room <= 101 << 20  # a quarter of the 400 MiB left
