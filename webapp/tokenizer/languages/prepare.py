"""Set-up step: count every language under every preset and store the counts (languages/stored.py).

What it does not do: download anything, or count opened tokenizers.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.languages import declarations as decl
from webapp.tokenizer.languages.counting import catalog
from webapp.tokenizer.languages.stored import DEFAULT_DIR, DEFAULT_PRESETS_DIR, count_preset, write_extracted, write_stored
from webapp.tokenizer.presets import catalog as presets
from webapp.tokenizer.presets.openai import set_cache_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webapp.tokenizer.languages.prepare",
                                     description="Count every language under every preset and store the counts.")
    parser.add_argument("dir", nargs="?", default=str(DEFAULT_DIR), help=f"where to store (default {DEFAULT_DIR})")
    parser.add_argument("--presets-dir", default=str(DEFAULT_PRESETS_DIR), help="where the prepared presets are")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these presets")
    args = parser.parse_args(argv)
    set_cache_dir(args.presets_dir)
    try:
        declarations = decl.load_all()
        names = tuple(presets.get_preset(n).name for n in args.only) if args.only else presets.PRESET_NAMES
    except TokenizerError as exc:
        print(f"languages: {exc.message}", file=sys.stderr)
        return 1
    path = write_extracted(Path(args.dir), declarations, catalog(declarations))
    print(f"languages: {len(declarations)} declarations extracted -> {path}", flush=True)
    failed = 0
    for name in names:
        if not presets.is_installed(name):
            print(f"languages {name}: skipped, the preset is not installed", flush=True)
            continue
        try:
            result = count_preset(name, declarations)
        except TokenizerError as exc:
            print(f"languages {name}: skipped, {exc.message}", flush=True)
            failed += 1
            continue
        path = write_stored(Path(args.dir), result)
        print(f"languages {name}: {len(result['languages'])} languages counted in {result['seconds']:.1f} s, "
              f"median premium {result['summary']['median_premium']} -> {path}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
