"""Set-up step: convert and precompile the real-tokenizer presets before the first request.

What it does not do: install js-tiktoken (npm ci does; a missing package is
reported with the command to run) or download anything.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.presets import catalog as presets

#: The project's instance folder, as Flask derives it for the `webapp` package.
DEFAULT_CACHE_DIR = Path(__file__).resolve().parents[3] / "instance" / "presets"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webapp.tokenizer.presets.prepare",
                                     description="Convert and precompile the tokenizer presets.")
    parser.add_argument("cache_dir", nargs="?", default=str(DEFAULT_CACHE_DIR),
                        help=f"where the web app reads them (default {DEFAULT_CACHE_DIR})")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these presets")
    args = parser.parse_args(argv)
    try:
        names = tuple(presets.get_preset(n).name for n in args.only) if args.only else presets.PRESET_NAMES
        with presets.marked_preparing(args.cache_dir):  # the pages say "preparing…" until each is ready
            for name in names:  # one line of progress per preset, as each is ready
                for done, seconds in presets.prepare(args.cache_dir, (name,)).items():
                    print(f"preset {done}: ready in {args.cache_dir} ({seconds:.1f} s)", flush=True)
    except TokenizerError as exc:  # PresetMissing included: it names the command to run
        print(f"prepare presets: {exc.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
