"""The Languages page's view model: the table's rows (filtered, sorted) and the charts' shapes.

What it does not do: count (webapp.web.languages.kinds) or parse requests.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode

SORT_KEYS = ("name", "script", "tokens", "premium", "bytes_per_token", "premium_b")
#: (upper bound of the premium, css class, legend label); the last band has no bound.
BANDS: tuple[tuple[float, str, str], ...] = (
    (1.25, "band-0", "under 1.25x"), (1.5, "band-1", "1.25-1.5x"), (2.0, "band-2", "1.5-2x"),
    (3.0, "band-3", "2-3x"), (4.0, "band-4", "3-4x"), (math.inf, "band-5", "4x and over"),
)
UNKNOWN_PLACE = (-75.0, 30.0)
LABELLED = 6
OFF_DIAGONAL = 1.1
CHART_W, CHART_H, CHART_LEFT, CHART_BOTTOM = 900.0, 260.0, 44.0, 20.0
MAP_W, MAP_H = 720.0, 360.0
SCATTER = 420.0
SCATTER_PAD = 44.0


@dataclass(frozen=True)
class PageState:
    tokenizer: str
    compare: str = ""
    script: str = ""
    q: str = ""
    complete: bool = False
    sort: str = "-premium"

    def query(self, **changes: Any) -> str:
        values = {"tokenizer": self.tokenizer, "compare": self.compare, "script": self.script, "q": self.q,
                  "complete": "1" if self.complete else "", "sort": self.sort}
        values.update({k: v for k, v in changes.items()})
        return urlencode({k: v for k, v in values.items() if v})


def read_sort(value: object) -> str:
    if isinstance(value, str) and value.lstrip("-") in SORT_KEYS:
        return value
    return "-premium"


def band_of(premium: float | None) -> str:
    if premium is None:
        return "band-none"
    return next(css for bound, css, _ in BANDS if premium < bound)


@dataclass
class Row:
    code: str
    name: str
    script: str
    complete: bool
    latitude: float
    longitude: float
    chars: int
    bytes: int
    tokens: int | None = None
    english_tokens: int | None = None
    premium: float | None = None
    bytes_per_token: float | None = None
    chars_per_token: float | None = None
    tokens_b: int | None = None
    premium_b: float | None = None
    band: str = "band-none"


def build_rows(catalog: Sequence[Mapping[str, Any]], result: Mapping[str, Any] | None,
               other: Mapping[str, Any] | None) -> list[Row]:
    """The catalog joined with one or two tokenizers' counts, by language code."""
    first = {r["code"]: r for r in result["languages"]} if result else {}
    second = {r["code"]: r for r in other["languages"]} if other else {}
    rows = []
    for entry in catalog:
        a, b = first.get(entry["code"], {}), second.get(entry["code"], {})
        rows.append(Row(
            code=entry["code"], name=entry["name"], script=entry["script"], complete=entry["complete"],
            latitude=entry["latitude"], longitude=entry["longitude"], chars=entry["chars"], bytes=entry["bytes"],
            tokens=a.get("tokens"), english_tokens=a.get("english_tokens"), premium=a.get("premium"),
            bytes_per_token=a.get("bytes_per_token"), chars_per_token=a.get("chars_per_token"),
            tokens_b=b.get("tokens"), premium_b=b.get("premium"), band=band_of(a.get("premium")),
        ))
    return rows


def filter_rows(rows: Sequence[Row], state: PageState) -> list[Row]:
    needle = state.q.casefold().strip()
    return [r for r in rows
            if (not state.script or r.script == state.script)
            and (not needle or needle in r.name.casefold() or needle == r.code.casefold())
            and (not state.complete or r.complete)]


def sort_rows(rows: Sequence[Row], sort: str) -> list[Row]:
    """Rows by a column (rows without a value last), ties by name."""
    key = sort.lstrip("-")
    descending = sort.startswith("-")
    by_name = sorted(rows, key=lambda r: (r.name.casefold(), r.code))
    if key in ("name", "script"):
        return sorted(by_name, key=lambda r: str(getattr(r, key)).casefold(), reverse=descending)
    valued = [r for r in by_name if getattr(r, key) is not None]
    rest = [r for r in by_name if getattr(r, key) is None]
    valued.sort(key=lambda r: getattr(r, key), reverse=descending)
    return valued + rest


# --- the chart ----------------------------------------------------------------------


@dataclass
class Chart:
    bars: list[dict[str, Any]] = field(default_factory=list)
    ticks: list[dict[str, Any]] = field(default_factory=list)
    baseline: float = 0.0
    english: dict[str, Any] | None = None
    width: float = CHART_W
    height: float = CHART_H
    left: float = CHART_LEFT


def _log_range(values: Sequence[float]) -> tuple[int, int]:
    low = min(0, math.floor(math.log2(min(values))))
    high = max(1, math.ceil(math.log2(max(values))))
    return low, high


def premium_chart(rows: Sequence[Row], english_code: str) -> Chart | None:
    """Bars of premium, sorted ascending, log2 scale; None when no row has a premium."""
    counted = sorted((r for r in rows if r.premium), key=lambda r: (r.premium or 0.0, r.name))
    if not counted:
        return None
    low, high = _log_range([r.premium or 1.0 for r in counted])
    plot_h = CHART_H - CHART_BOTTOM - 10

    def y_of(value: float) -> float:
        return round(10 + plot_h * (high - math.log2(value)) / (high - low), 2)

    baseline = y_of(1.0)
    step = (CHART_W - CHART_LEFT) / len(counted)
    chart = Chart(baseline=baseline)
    for index, row in enumerate(counted):
        y = y_of(row.premium or 1.0)
        bar = {"x": round(CHART_LEFT + index * step, 2), "w": round(max(step * 0.9, 0.5), 2),
               "y": min(y, baseline), "h": round(max(abs(baseline - y), 0.5), 2), "row": row,
               "english": row.code == english_code}
        chart.bars.append(bar)
        if bar["english"]:
            chart.english = bar
    chart.ticks = [{"y": y_of(2.0 ** k), "label": _times(2.0 ** k)} for k in range(low, high + 1)]
    return chart


def _times(value: float) -> str:
    return f"{value:g}x"


# --- the map -------------------------------------------------------------------------


def map_dots(rows: Sequence[Row]) -> tuple[list[dict[str, Any]], list[Row]]:
    """(dots at their projected places, rows whose place is unknown)."""
    dots: list[dict[str, Any]] = []
    unplaced: list[Row] = []
    for row in rows:
        if (row.latitude, row.longitude) == UNKNOWN_PLACE:
            unplaced.append(row)
            continue
        dots.append({"x": round((row.longitude + 180.0) / 360.0 * MAP_W, 2),
                     "y": round((90.0 - row.latitude) / 180.0 * MAP_H, 2), "row": row})
    dots.sort(key=lambda d: float(d["row"].premium or 0.0))  # the costliest drawn last, on top
    return dots, unplaced


GRATICULE = [{"x": (lon + 180.0) / 360.0 * MAP_W, "label": f"{abs(lon)}°{'E' if lon > 0 else 'W' if lon else ''}"}
             for lon in range(-150, 180, 30)]
PARALLELS = [{"y": (90.0 - lat) / 180.0 * MAP_H, "lat": lat} for lat in range(-60, 90, 30)]


# --- the scatter -----------------------------------------------------------------------


def scatter(rows: Sequence[Row]) -> dict[str, Any] | None:
    """Premium under the first tokenizer (x) against the second (y); None without both."""
    both = [r for r in rows if r.premium and r.premium_b]
    if not both:
        return None
    low, high = _log_range([r.premium or 1.0 for r in both] + [r.premium_b or 1.0 for r in both])
    span = SCATTER - 2 * SCATTER_PAD

    def at(value: float) -> float:
        return (math.log2(value) - low) / (high - low) * span

    dots: list[dict[str, Any]] = []
    for row in both:
        a, b = row.premium or 1.0, row.premium_b or 1.0
        side = "worse-b" if b >= a * OFF_DIAGONAL else "worse-a" if a >= b * OFF_DIAGONAL else "even"
        dots.append({"x": round(SCATTER_PAD + at(a), 2), "y": round(SCATTER - SCATTER_PAD - at(b), 2),
                     "row": row, "side": side, "off": abs(math.log2(b / a))})
    labelled: list[dict[str, Any]] = []
    for dot in sorted((d for d in dots if d["side"] != "even"), key=lambda d: -float(d["off"])):
        if len(labelled) == LABELLED:
            break
        if all(abs(dot["y"] - other["y"]) > 14 or abs(dot["x"] - other["x"]) > 90 for other in labelled):
            labelled.append(dot)  # the farthest off the diagonal, each label clear of the others
    ticks = [{"at": round(at(2.0 ** k), 2), "label": _times(2.0 ** k)} for k in range(low, high + 1)]
    return {"dots": dots, "labelled": labelled, "ticks": ticks, "size": SCATTER, "pad": SCATTER_PAD,
            "worse_a": sum(1 for d in dots if d["side"] == "worse-a"),
            "worse_b": sum(1 for d in dots if d["side"] == "worse-b"), "even": sum(1 for d in dots
                                                                                   if d["side"] == "even")}
