"""Corpus training benchmark: ours vs Hugging Face `tokenizers` BpeTrainer, same corpus, same pieces.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_corpus_training.py [--corpus FOLDER] [--megabytes 10] [--merges 10000]
        [--repeat 2] [--no-check]

`--corpus FOLDER`: every file under the folder (recursively, sorted by
relative path, only those that are valid UTF-8), each one document. Without
it the corpus is built from what every machine with Python has, no downloads:
the standard library's `*.py` files (recursively, sorted by relative path,
only those that are valid UTF-8) until at least `--megabytes` MB, plus
`benchmarks/data/non_latin.txt`.

Both sides get the same job: read the files, pre-tokenize with GPT-2's
pattern, count the pieces, learn `--merges` byte-level merges.
* ours: `count_files` (as the corpus job: one forked process per core over
  shards of the files, each streaming 1 MiB blocks, never the whole corpus
  in memory) then `train_counts(level="bytes")`;
* theirs: a `Tokenizer(BPE())` with the `ByteLevel` pre-tokenizer
  (use_regex=True: the same GPT-2 pattern, add_prefix_space=False) and
  `BpeTrainer(vocab_size=256 + merges, min_frequency=0, initial_alphabet=all
  256 bytes)`, fed by `train_from_iterator` one file text at a time.

Counting and training are timed apart. Ours reports both phases itself;
`tokenizers` does both inside one `train_from_iterator`, so its counting is
a run with no merges (vocab_size=256: it reads, pre-tokenizes and counts,
then stops) and its training is its full run's time minus that.

Each run happens in its own process, started by a measuring process that
samples the run's process tree every 20 ms (ours forks counting processes)
and reads `resource.getrusage(RUSAGE_CHILDREN).ru_maxrss` after it. Two
peaks are printed: the summed RSS (the larger of the sampled sum and
ru_maxrss), which counts a page the job shares with its forked counting
processes once in each of them, and the summed PSS (/proc/<pid>/smaps_rollup),
which counts every page once. The memory goal is read on PSS: for
`tokenizers` (one process, threads) both are the same memory, while for ours
the RSS sum counts the job's own pages again for each counting process.
Runs alternate (ours, theirs, ours, ...) and the best time of each side is
compared.

Checks (exit status 1 if one fails, or if ours / theirs is over the 3.0 floor):
* pieces: ours are exactly the published pattern's (the `regex` package)
  over each whole file; HF's pre-tokenizer gives the same, except in files
  holding code points that `regex` calls letters or numbers and Python's
  (older) Unicode database leaves unassigned, where the engines' Unicode
  versions differ (reported, not failed);
* merges: identical up to the first step where they differ, and at that step
  the pair HF chose has, in our trainer, the same count as ours: a tie that
  the two tie-breaks decide differently (we: smallest (first, second) bytes;
  HF: its internal ids, which follow the GPT-2 byte alphabet's character
  order and then creation order). After that the runs legitimately diverge.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
import unicodedata
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TIME_FLOOR = 3.0  # ours / theirs
TIME_GOAL = 1.0
MEMORY_GOAL = 1.5


def folder_files(folder: Path) -> list[Path]:
    """Every valid UTF-8 file under `folder`, sorted by relative path."""
    files: list[Path] = []
    for path in sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix()):
        try:
            path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        files.append(path)
    return files


def corpus_files(megabytes: float) -> list[Path]:
    """Standard library sources (sorted, valid UTF-8) until `megabytes` MB, plus the shipped non-Latin text."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[Path] = []
    total = 0
    for path in sorted(stdlib.rglob("*.py"), key=lambda p: p.relative_to(stdlib).as_posix()):
        try:
            data = path.read_bytes()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        files.append(path)
        total += len(data)
        if total >= megabytes * 1_000_000:
            break
    files.append(ROOT / "benchmarks" / "data" / "non_latin.txt")
    return files


# --- the two workers (each runs in its own process) -------------------------------------------


def work_ours(files: list[Path], merges: int, out: Path) -> None:
    from webapp.tokenizer.training.corpus import train_counts
    from webapp.tokenizer.training.shards import count_files

    started = time.perf_counter()
    counted = count_files([(str(p), p) for p in files], "gpt2")
    counted_s = time.perf_counter() - started
    result = train_counts(counted.counts, "bytes", merges)
    total_s = time.perf_counter() - started
    out.write_text(json.dumps({
        "seconds": total_s, "count_seconds": counted_s, "train_seconds": total_s - counted_s,
        "pieces": counted.pretokens, "bytes": counted.bytes, "counts": counted.counts,
        "pairs": [[a.hex(), b.hex()] for a, b in result.pairs],
        "winning": result.counts, "runner_up": result.runner_up,
    }))


def work_hf(files: list[Path], merges: int, out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if os.environ.get("BENCH_HF_NICE"):
        os.nice(int(os.environ["BENCH_HF_NICE"]))  # the CPU priority our job process runs at (JOB_NICE)

    started = time.perf_counter()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=256 + merges, min_frequency=0, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator((p.read_bytes().decode("utf-8") for p in files), trainer=trainer)
    seconds = time.perf_counter() - started
    learned = json.loads(tok.to_str())["model"]["merges"]
    out.write_text(json.dumps({"seconds": seconds, "merges": [m.split(" ") if isinstance(m, str) else m
                                                             for m in learned]}))


def tree_rss_kb(pid: int) -> int:
    """VmRSS of a process and all its descendants, summed (shared copy-on-write pages count in each)."""
    return sum(own_rss_kb(current) for current in tree_pids(pid))


def tree_pss_kb(pid: int) -> int:
    """PSS of a process and all its descendants, summed: each page once (a page shared by k of them
    counts 1/k in each), so a forked counting process's inherited pages are not counted again."""
    return sum(own_pss_kb(current) for current in tree_pids(pid))


def tree_pids(pid: int) -> list[int]:
    """A process and all its descendants (those alive while the tree is walked)."""
    found = []
    todo = [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def own_pss_kb(pid: int) -> int:
    """Pss of one process from /proc/<pid>/smaps_rollup (0 when gone)."""
    return proc_kb(f"/proc/{pid}/smaps_rollup", "Pss:")


def proc_kb(path: str, field: str) -> int:
    """The kB figure on the line of a /proc file that starts with `field` (0 when the process is gone)."""
    try:
        text = Path(path).read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith(field)), 0)


def measure(side: str, files_list: Path, merges: int, out: Path) -> None:
    """Run one worker as a child; add its peak RSS, and the peak sum over its process tree (sampled)."""
    child = subprocess.Popen([sys.executable, __file__, "--work", side, "--files", str(files_list),
                              "--merges", str(merges), "--out", str(out)])
    tree_peak = pss_peak = 0
    while child.poll() is None:
        tree_peak = max(tree_peak, tree_rss_kb(child.pid))
        pss_peak = max(pss_peak, tree_pss_kb(child.pid))
        time.sleep(0.02)
    if child.returncode:
        raise SystemExit(f"{side} worker failed with code {child.returncode}")
    data = json.loads(out.read_text())
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    data["max_rss_kb"] = max(usage.ru_maxrss, tree_peak)  # the largest process, or the tree's sampled sum
    data["max_pss_kb"] = pss_peak
    data["cpu_seconds"] = usage.ru_utime + usage.ru_stime  # all threads and waited-for processes
    out.write_text(json.dumps(data))


def work_api(files: list[Path], merges: int, api: str, worker_pid: int | None, held_out: str) -> dict:
    """Ours end to end: POST the files to /api/corpus, poll the job to its end; time and the job's peak RSS.

    The time runs from the POST (upload, queue, count, train, store, summary)
    to the job's "done" as the API shows it (polled every 50 ms). Peak RSS is
    sampled every 20 ms over the worker's descendants (the job process and its
    counting processes), summed, when `worker_pid` is given.
    """
    import urllib.request

    boundary = "----bench" + os.urandom(8).hex()
    parts: list[bytes] = []
    fields = {"pretokenize": "gpt2", "level": "bytes", "num_merges": str(merges), "held_out": held_out}
    for key, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'.encode()
                     + value.encode() + b"\r\n")
    for path in files:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{path.name}"\r\n'
                     f"Content-Type: text/plain\r\n\r\n".encode() + path.read_bytes() + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    body = b"".join(parts)
    request = urllib.request.Request(api.rstrip("/") + "/api/corpus", data=body, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    peak = pss_peak = 0
    started = time.perf_counter()
    with urllib.request.urlopen(request) as answer:
        job = json.loads(answer.read())
    posted = time.perf_counter() - started
    url = api.rstrip("/") + job["url"] if job["url"].startswith("/") else job["url"]
    last_poll = 0.0
    while True:
        now = time.perf_counter()
        if worker_pid is not None:
            peak = max(peak, tree_rss_kb(worker_pid) - own_rss_kb(worker_pid))
            pss_peak = max(pss_peak, tree_pss_kb(worker_pid) - own_pss_kb(worker_pid))
        if now - last_poll >= 0.05:
            last_poll = now
            with urllib.request.urlopen(url) as answer:
                job = json.loads(answer.read())
            if job["state"] in ("done", "failed", "cancelled"):
                break
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    if job["state"] != "done":
        raise SystemExit(f"the job ended {job['state']}: {job.get('error')}")
    with urllib.request.urlopen(url + "/result") as answer:
        result = json.loads(answer.read())
    return {"seconds": seconds, "upload_seconds": posted, "count_seconds": result["seconds"]["count"],
            "train_seconds": result["seconds"]["train"], "summary_seconds": result["seconds"].get("summary"),
            "store_seconds": result["seconds"].get("store"),
            "max_rss_kb": peak, "max_pss_kb": pss_peak, "pieces": result["corpus"]["pieces"],
            "distinct": result["corpus"]["distinct"],
            "bytes_per_token": result["bytes_per_token"]}


def own_rss_kb(pid: int) -> int:
    """VmRSS of one process (0 when gone)."""
    return proc_kb(f"/proc/{pid}/status", "VmRSS:")


def run_side(side: str, files_list: Path, merges: int, tmp: Path) -> dict:
    out = tmp / f"{side}.json"
    subprocess.run([sys.executable, __file__, "--measure", side, "--files", str(files_list), "--merges", str(merges),
                    "--out", str(out)], check=True)
    return json.loads(out.read_text())


# --- checks ------------------------------------------------------------------------------------


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's byte alphabet, character -> byte (printable bytes stand for themselves)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    chars = {b: chr(b) for b in keep}
    n = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + n)
            n += 1
    return {c: b for b, c in chars.items()}


def hf_piece_counts(files: list[Path]) -> tuple[Counter[str], Counter[str], list[str]]:
    """HF's own pre-tokenizer over every document, pieces back in UTF-8 text; the published pattern's
    pieces (the `regex` package, whole files: the oracle ours must equal); and the files HF splits otherwise.

    A file is listed when HF's pieces differ from the published pattern's
    (the `regex` package: what ours gives, as the tests check) and nothing
    explains it: it holds no code point that the two engines' Unicode
    versions classify differently (a letter or number to `regex`, unassigned
    to Python's older Unicode database, which HF's engine is no newer than).
    """
    import regex
    from tokenizers import pre_tokenizers

    from webapp.tokenizer.pretokenize.patterns import GPT2_PATTERN

    decoder = gpt2_byte_decoder()
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    pattern = regex.compile(GPT2_PATTERN)
    newer = regex.compile(r"[\p{L}\p{N}]")
    found: Counter[str] = Counter()
    oracle: Counter[str] = Counter()
    unexplained: list[str] = []
    for path in files:
        text = path.read_bytes().decode("utf-8")
        pieces = Counter(bytes(decoder[c] for c in piece).decode("utf-8")
                         for piece, _ in pre.pre_tokenize_str(text))  # no newline translation
        published = Counter(pattern.findall(text))
        found.update(pieces)
        oracle.update(published)
        if pieces != published and not any(
                unicodedata.category(ch) == "Cn" and newer.match(ch) for ch in set(text)):
            unexplained.append(path.name)
    return found, oracle, unexplained


def compare_merges(ours: dict, theirs: dict) -> tuple[int, str, bool]:
    """(identical prefix length, what happened at the first difference, whether that is fine)."""
    from webapp.tokenizer.training.corpus import PretokenTrainer

    decoder = gpt2_byte_decoder()
    our_pairs = [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in ours["pairs"]]
    their_pairs = [(bytes(decoder[c] for c in a), bytes(decoder[c] for c in b)) for a, b in theirs["merges"]]
    same = 0
    for a, b in zip(our_pairs, their_pairs):
        if a != b:
            break
        same += 1
    if same == min(len(our_pairs), len(their_pairs)):
        return same, f"all {same:,} merges identical", len(our_pairs) == len(their_pairs)
    # Replay ours to that step and look at HF's choice there.
    trainer = PretokenTrainer(ours["counts"], "bytes")
    for _ in range(same):
        trainer.step()
    hf_a, hf_b = their_pairs[same]
    hf_count = trainer.pair_count(hf_a.decode("latin-1"), hf_b.decode("latin-1"))
    count = ours["winning"][same]
    tie = hf_count == count and ours["runner_up"][same] == count
    what = (f"step {same + 1}: ours {our_pairs[same]!r}, HF {their_pairs[same]!r}, both count {count:,} "
            f"(a tie)" if tie else
            f"step {same + 1}: ours {our_pairs[same]!r} count {count:,}, HF {their_pairs[same]!r} count {hf_count:,}")
    return same, what, tie


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages (the machine may be shared)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a folder: every file under it is one document")
    parser.add_argument("--megabytes", type=float, default=10.0, help="without --corpus: MB of stdlib sources")
    parser.add_argument("--merges", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs per side (alternating); the best time counts")
    parser.add_argument("--no-check", action="store_true", help="skip the pieces and merges checks")
    parser.add_argument("--api", help="time ours end to end through POST /api/corpus at this base URL "
                                      "(e.g. http://127.0.0.1:8000, a server with its worker running)")
    parser.add_argument("--worker-pid", type=int, help="with --api: the worker's pid, to sample the job's RSS")
    parser.add_argument("--held-out", type=Path, help="with --api: a file sent as the held-out text")
    parser.add_argument("--hf-nice", type=int, help="run tokenizers at this niceness (default: 10 with --api, "
                                                     "the corpus job's JOB_NICE, so both get the same CPU share "
                                                     "on a busy machine; else 0)")
    parser.add_argument("--work", choices=["ours", "hf"], help=argparse.SUPPRESS)
    parser.add_argument("--measure", choices=["ours", "hf"], help=argparse.SUPPRESS)
    parser.add_argument("--files", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.work or args.measure:
        files = [Path(line) for line in args.files.read_text().splitlines()]
        if args.measure:
            measure(args.measure, args.files, args.merges, args.out)
        elif args.work == "ours":
            work_ours(files, args.merges, args.out)
        else:
            work_hf(files, args.merges, args.out)
        return 0

    import tokenizers

    hf_nice = args.hf_nice if args.hf_nice is not None else (10 if args.api else 0)
    if hf_nice:
        os.environ["BENCH_HF_NICE"] = str(hf_nice)
    files = folder_files(args.corpus) if args.corpus else corpus_files(args.megabytes)
    size = sum(p.stat().st_size for p in files)
    source = str(args.corpus) if args.corpus else "stdlib sources + benchmarks/data"
    print(f"corpus: {len(files):,} files, {size:,} bytes ({source}); GPT-2 pattern; "
          f"{args.merges:,} byte-level merges; tokenizers {tokenizers.__version__}; cpus {os.cpu_count()}")
    print(f"load average before: {loadavg()}; tokenizers runs at nice {hf_nice}")
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        files_list = tmp / "files.txt"
        files_list.write_text("\n".join(str(p) for p in files))
        runs: dict[str, list[dict]] = {"ours": [], "hf": [], "hf-count": []}
        held_out = args.held_out.read_text() if args.held_out else ""
        for _ in range(args.repeat):
            if args.api:
                runs["ours"].append(work_api(files, args.merges, args.api, args.worker_pid, held_out))
            else:
                runs["ours"].append(run_side("ours", files_list, args.merges, tmp))
            runs["hf"].append(run_side("hf", files_list, args.merges, tmp))
            runs["hf-count"].append(run_side("hf", files_list, 0, tmp))
        ours = min(runs["ours"], key=lambda r: r["seconds"])
        theirs = min(runs["hf"], key=lambda r: r["seconds"])
        their_count = min(r["seconds"] for r in runs["hf-count"])
        our_rss = max(r["max_rss_kb"] for r in runs["ours"]) / 1024
        their_rss = max(r["max_rss_kb"] for r in runs["hf"]) / 1024
        our_pss = max(r["max_pss_kb"] for r in runs["ours"]) / 1024
        their_pss = max(r["max_pss_kb"] for r in runs["hf"]) / 1024
        if not args.no_check and not args.api:
            theirs_pieces, oracle, unexplained = hf_piece_counts(files)
            ours_pieces = Counter(ours["counts"])
            pieces_agree = theirs_pieces == ours_pieces
            if ours_pieces != oracle:
                failures.append("our pre-token counts differ from the published pattern over each whole file")
            differing = set((theirs_pieces - ours_pieces) + (ours_pieces - theirs_pieces))
            if unexplained:
                failures.append(f"HF's pre-tokenizer splits {', '.join(unexplained[:5])} otherwise")
            elif differing:
                # The engines' Unicode versions differ: a code point that `regex` calls a letter may be
                # unassigned for HF's. Such files are no fault of the split; any other difference is.
                print(f"pieces: {len(differing):,} distinct pieces differ, only in files holding code points that "
                      f"`regex` calls letters or numbers and Unicode {unicodedata.unidata_version} leaves "
                      "unassigned (the engines' Unicode versions differ)")
            same, what, fine = compare_merges(ours, theirs)
            if not fine:
                failures.append(f"merges differ where no tie explains it: {what}")
            print(f"pieces: {ours['pieces']:,} ({len(ours['counts']):,} distinct); HF's pre-tokenizer counts "
                  f"{'agree' if pieces_agree else 'DIFFER'}")
            print(f"merges learned: ours {len(ours['pairs']):,}, HF {len(theirs['merges']):,}; first {same:,} "
                  f"identical; {what}")
        else:
            distinct = ours["distinct"] if args.api else len(ours["counts"])
            print(f"pieces: {ours['pieces']:,} ({distinct:,} distinct); checks skipped")

    ratio = ours["seconds"] / theirs["seconds"]
    rss_ratio = our_rss / their_rss if our_rss else float("nan")
    if ratio > TIME_FLOOR:
        failures.append(f"ours / theirs time {ratio:.2f} is over the floor {TIME_FLOOR}")
    if args.api:
        print(f"ours through the API at {args.api}: upload {ours['upload_seconds']:.2f} s, the job's own count "
              f"{ours['count_seconds']:.2f} s and train {ours['train_seconds']:.2f} s, store {ours['store_seconds']} s, "
              f"summary {ours['summary_seconds']} s; bytes per token {ours['bytes_per_token']}"
              + ("" if args.worker_pid else "; no --worker-pid: RSS not sampled"))
    times = ", ".join(f"{r['seconds']:.2f}" for r in runs["ours"])
    their_times = ", ".join(f"{r['seconds']:.2f}" for r in runs["hf"])
    count_times = ", ".join(f"{r['seconds']:.2f}" for r in runs["hf-count"])
    print(f"time, best of {args.repeat}: ours {ours['seconds']:.2f} s (count {ours['count_seconds']:.2f} s + "
          f"train {ours['train_seconds']:.2f} s) [{times}]; HF {theirs['seconds']:.2f} s [{their_times}] "
          f"(count, a run with no merges: {their_count:.2f} s [{count_times}]; "
          f"train about {max(theirs['seconds'] - their_count, 0):.2f} s)")
    print(f"ours / HF time: {ratio:.2f} (goal <= {TIME_GOAL}, floor <= {TIME_FLOOR})")
    their_cpu = min(r["cpu_seconds"] for r in runs["hf"])
    if not args.api:
        our_cpu = min(r["cpu_seconds"] for r in runs["ours"])
        print(f"CPU time (user + system, whole process tree, best run): ours {our_cpu:.2f} s, HF {their_cpu:.2f} s, "
              f"ours / HF {our_cpu / their_cpu:.2f} (includes start-up)")
    pss_ratio = our_pss / their_pss if our_pss else float("nan")
    print(f"peak RSS (process tree, summed; a page shared by forked processes counts in each): ours {our_rss:.0f} MB, "
          f"HF {their_rss:.0f} MB, ours / HF {rss_ratio:.2f}")
    print(f"peak PSS (process tree, summed; each page once): ours {our_pss:.0f} MB, HF {their_pss:.0f} MB, "
          f"ours / HF {pss_ratio:.2f} (goal <= {MEMORY_GOAL})")
    print(f"load average after: {loadavg()}")
    if failures:
        print("FAILED:\n  - " + "\n  - ".join(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
