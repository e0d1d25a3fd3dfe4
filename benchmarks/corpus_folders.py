"""Build the corpus folders that docs/performance.md measures, from files that registry packages ship.

Usage (from the repository root; the sources are fetched with the ordinary clients first):

    mkdir -p /tmp/cs && cd /tmp/cs
    pip download --no-deps --no-binary :all: -d sdist django==5.1.4 && tar xzf sdist/Django-5.1.4.tar.gz
    pip download --no-deps -d whl sphinx==8.1.3 && unzip -q whl/sphinx-8.1.3-py3-none-any.whl -d whl/sphinx
    apt-get download python3.11-doc && dpkg-deb -x python3.11-doc_*.deb pydoc
    cd - && .venv/bin/python benchmarks/corpus_folders.py /tmp/cs /tmp/corpora

Kinds (tuned on the first, the second held out and measured only at the end):
* prose: Django's documentation (`docs/**/*.txt`, reStructuredText) / Python
  3.11's documentation sources (`_sources/**/*.txt` of python3.11-doc);
* code: Django's own sources (`django/**/*.py`, `*.js`) / the `.py` files of
  this project's virtualenv (site-packages, Django excluded);
* multilingual: Sphinx's translations (`sphinx/locale/**/*.po`, 60+
  languages) / Django's translations (`django/**/*.po`);
* mixed-100: about 100 MB of all of the above (site-packages sources first).
Each folder holds up to 10 files, each the concatenation of source files (sorted by path, valid UTF-8 only)
up to a tenth of the target size; the kinds stop short of 10 MB where the sources run out.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

M = 1_000_000


def build(out: Path, paths: list[Path], target: int, parts: int = 10) -> int:
    """Concatenate `paths` into at most `parts` files of about target / parts bytes in `out`; bytes written."""
    out.mkdir(parents=True, exist_ok=True)
    per = target // parts
    total = index = 0
    current = bytearray()
    for path in paths:
        try:
            data = path.read_bytes()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        current += data if data.endswith(b"\n") else data + b"\n"
        if len(current) >= per:
            (out / f"part{index:02d}.txt").write_bytes(current)
            total += len(current)
            index += 1
            current = bytearray()
            if index == parts:
                return total
    if current:
        (out / f"part{index:02d}.txt").write_bytes(current)
        total += len(current)
    return total


def files(root: Path, *extensions: str, exclude: tuple[str, ...] = ()) -> list[Path]:
    """Files under `root` with one of the extensions, sorted by path, none whose path holds an `exclude` part."""
    found = (p for ext in extensions for p in root.rglob(f"*.{ext}") if p.is_file())
    return sorted((p for p in found if not any(part in str(p) for part in exclude)), key=str)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    sources, target = Path(argv[0]), Path(argv[1])
    django, pydoc, sphinx = sources / "Django-5.1.4", sources / "pydoc", sources / "whl" / "sphinx"
    site = Path(sysconfig.get_paths()["purelib"])
    plan = {
        "prose-tune": files(django / "docs", "txt"),
        "prose-held": files(pydoc, "txt"),
        "code-tune": files(django / "django", "py", "js"),
        "code-held": files(site, "py", exclude=("/django/",)),
        "multi-tune": files(sphinx, "po"),
        "multi-held": files(django / "django", "po"),
    }
    for name, paths in plan.items():
        print(f"{name}: {build(target / name, paths, 10 * M):,} bytes")
    mixed = (files(site, "py", exclude=("/django/",)) + files(django, "txt", "po", "py") + files(pydoc, "txt")
             + files(sphinx, "po"))
    print(f"mixed-100: {build(target / 'mixed-100', mixed, 100 * M):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
