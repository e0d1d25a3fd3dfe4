"""Set-up step: convert and precompile the real-tokenizer presets before the first request.

    python -m webapp.tokenizer.presets.prepare [CACHE_DIR] [--only NAME ...]

CACHE_DIR defaults to `instance/presets` of the project, the folder the web
app reads (webapp.opened.store.init_app points the cache there: `<instance>/presets`).
Without this step the first use of cl100k_base or o200k_base in a fresh
install converts js-tiktoken's ranks and precompiles them inside that request
(seconds), and the first use of an open model opens its tokenizer.json there
(up to about 10 s for gpt_oss). The Makefile runs it once after `npm ci` (a marker file in the
cache folder), for `make run`, `make serve-prod` and `make test`.

What it does not do: install js-tiktoken (npm ci does; a missing package is
reported with the command to run) or download anything.
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
