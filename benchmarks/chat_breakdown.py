"""Where a new chat's time goes, ours and transformers': medians of wall times, in milliseconds.

Usage (from the repository root):

    .venv/bin/python benchmarks/chat_breakdown.py [--model deepseek_v3] [--reps 40]

For each repetition a new 20-message conversation (bench_chat_counts.py's) is
rendered and counted the app's way with both sides' caches of encoded pieces
emptied first, as bench_chat_counts.py does for "new text" (and with the
collector frozen first, as a served worker has it). Our stages are timed by
wrapping the functions that do them (a few microseconds of overhead each):
rendering (`render_chat`), splitting and spelling the pieces
(`Pipeline.parts`), looking them up (`LibraryModel.piece_ids` less what it
hands on), merging the ones never seen (`LibraryModel._uncached_ids`) and,
inside that, the Python merge loops (`LibraryMerges._merge_ranked`,
`_merge_heap`). transformers' side: `apply_chat_template(tokenize=False)`
(rendering) and `backend_tokenizer.encode` of its text, each timed alone.
It prints figures for docs/chat.md#performance; it checks no target.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_chat_counts as bench  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.infra import inputs  # noqa: E402
from webapp.infra.storage import default_sqlite_url  # noqa: E402
from webapp.tokenizer import preset_chat_template  # noqa: E402
from webapp.tokenizer.chat.templates import preset_config_path  # noqa: E402
from webapp.tokenizer.core.library_order.merges import LibraryMerges  # noqa: E402
from webapp.tokenizer.models.library import LibraryModel  # noqa: E402
from webapp.tokenizer.hf.pipeline import Pipeline  # noqa: E402
from webapp.opened.store import preset_entry  # noqa: E402
from webapp.web.chat import chatting  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)


def timed_as(owner: Any, name: str, stage: str) -> None:
    """Replace owner.name by a wrapper adding its wall time to SPENT[stage]."""
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[stage] += time.perf_counter() - start

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="deepseek_v3")
    parser.add_argument("--reps", type=int, default=40)
    args = parser.parse_args()
    from transformers import PreTrainedTokenizerFast  # the reference (requirements-test.txt)

    for owner, name, stage in [(chatting, "render_and_count", "ours: in all"), (chatting, "render_chat", "render"),
                               (Pipeline, "parts", "split and spell"), (LibraryModel, "piece_ids", "look up"),
                               (LibraryModel, "_uncached_ids", "merge new pieces"),
                               (LibraryMerges, "_merge_ranked", "merge loops"),
                               (LibraryMerges, "_merge_heap", "merge loops")]:
        timed_as(owner, name, stage)
    pool = bench.lines()
    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(Path(tempfile.mkdtemp()))})
    with app.app_context():
        entry = preset_entry(args.model)
        template = preset_chat_template(args.model)
        path = preset_config_path(args.model)
        assert template is not None and path is not None, args.model
        library = PreTrainedTokenizerFast(tokenizer_file=str(path.parent / "tokenizer.json"),
                                          chat_template=template.template, bos_token=template.bos_token,
                                          eos_token=template.eos_token)
        limits = inputs.Limits()
        chatting.render_and_count(entry, bench.conversation(pool, args.reps + 1), False, limits)
        library.apply_chat_template(bench.conversation(pool, args.reps + 1), tokenize=True)
        bench.freeze_as_served()
        samples: dict[str, list[float]] = defaultdict(list)
        for rep in range(args.reps):
            messages = bench.conversation(pool, rep)
            bench.forget_loaded(entry.tok, entry.compiled)
            gc.collect()
            SPENT.clear()
            chatting.render_and_count(entry, messages, False, limits)
            SPENT["look up"] -= SPENT["merge new pieces"]
            for stage, seconds in SPENT.items():
                samples[stage].append(seconds)
            library.backend_tokenizer.model._clear_cache()
            gc.collect()
            start = time.perf_counter()
            text = library.apply_chat_template(messages, tokenize=False)
            middle = time.perf_counter()
            library.backend_tokenizer.encode(text, add_special_tokens=False)
            samples["transformers: render"].append(middle - start)
            samples["transformers: encode"].append(time.perf_counter() - middle)
    for stage, values in samples.items():
        print(f"{stage:22s} {statistics.median(values) * 1e3:6.3f} ms")


if __name__ == "__main__":
    main()
