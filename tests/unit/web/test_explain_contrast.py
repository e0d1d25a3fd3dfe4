"""The boundary outlines' colours (static/explain.css) against the page's backgrounds (static/app.css).

WCAG 2.1's non-text contrast asks 3:1 for a graphical object that carries meaning; an outline
colour says a boundary's cause, so each is checked against every background the Bytes page
puts behind the tokens (`--bg`, `--surface`, `--surface-2`), in light and dark mode. The
colours are read from the stylesheets themselves, so a change to either file is checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from webapp import PROJECT_ROOT

STATIC = PROJECT_ROOT / "static"
BACKGROUNDS = ("--bg", "--surface", "--surface-2")


def _luminance(hex_colour: str) -> float:
    """Relative luminance (WCAG 2.1) of #rrggbb."""
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _split_schemes(css: str) -> tuple[str, str]:
    """(light part, dark part): the dark part is what stands inside `@media (prefers-color-scheme: dark)`."""
    dark_parts, light = [], css
    for m in re.finditer(r"@media \(prefers-color-scheme: dark\)\s*\{", css):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(css[i], 0)
            i += 1
        dark_parts.append(css[m.end():i - 1])
        light = light.replace(css[m.start():i], "")
    return light, "\n".join(dark_parts)


def _variables(part: str) -> dict[str, str]:
    return dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{6})\b", part))


def _outlines(part: str) -> dict[str, str]:
    """{selector: colour} of every outline colour given in `part`."""
    found = {}
    for selector, body in re.findall(r"([^{}]*\.gap[^{}]*)\{([^{}]*border-left[^{}]*)\}", part):
        colour = re.search(r"border-left(?:-color)?:[^;#]*(#[0-9a-fA-F]{6})", body)
        if colour:
            found[" ".join(selector.split())] = colour.group(1)
    return found


APP_LIGHT, APP_DARK = _split_schemes((STATIC / "app.css").read_text(encoding="utf-8"))
EXPLAIN_LIGHT, EXPLAIN_DARK = _split_schemes((STATIC / "explain.css").read_text(encoding="utf-8"))


def test_the_stylesheets_give_what_this_test_reads() -> None:
    # (so that a renamed variable or rule makes this test fail rather than check nothing)
    assert len(_outlines(EXPLAIN_LIGHT)) >= 8 and len(_outlines(EXPLAIN_DARK)) >= 7
    for part in (APP_LIGHT, APP_DARK):
        assert set(BACKGROUNDS) <= set(_variables(part))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_outline_colour_has_3_to_1_against_every_background(scheme: str) -> None:
    backgrounds = {**_variables(APP_LIGHT), **(_variables(APP_DARK) if scheme == "dark" else {})}
    outlines = _outlines(EXPLAIN_LIGHT if scheme == "light" else EXPLAIN_DARK)
    low = [(selector, colour, name, round(contrast(colour, backgrounds[name]), 2))
           for selector, colour in outlines.items() for name in BACKGROUNDS
           if contrast(colour, backgrounds[name]) < 3.0]
    assert low == []


def test_the_contrast_formula_on_known_pairs() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
