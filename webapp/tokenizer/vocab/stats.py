"""What a vocabulary holds, counted: token lengths in bytes, and the Unicode scripts of its tokens.

What it does not do: use Script_Extensions, or look at anything but the tokens' bytes.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from functools import lru_cache

import regex
import regex._regex_core as regex_core

from webapp.tokenizer.vocab.index import VocabIndex

PARTIAL = "(not UTF-8 alone)"
_WEAK = ("Common", "Inherited")


@lru_cache(maxsize=1)
def script_names() -> tuple[str, ...]:
    """Every value of the Script property, one name each (the long one, title case)."""
    values = regex_core.PROPERTIES["SCRIPT"][1]  # type: ignore[attr-defined]  # (the package's own table)
    names: dict[int, list[str]] = {}
    for name, number in values.items():
        names.setdefault(number, []).append(name)

    def long_name(aliases: list[str]) -> str:
        # the longest alias, but not a four-letter ISO code when a name of another length exists
        others = [a for a in aliases if len(a) != 4] or aliases
        return max(others, key=len).title()

    return tuple(long_name(aliases) for _, aliases in sorted(names.items()))


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[str, "regex.Pattern[str]"], ...]:
    return tuple((name, regex.compile(r"\p{Script=" + name + "}")) for name in script_names())


def scripts_of_chars(chars: str) -> dict[str, str]:
    """{character: its script} for each distinct character of `chars`."""
    distinct = "".join(sorted(set(chars)))
    out: dict[str, str] = {}
    for name, pattern in _patterns():
        for ch in pattern.findall(distinct):
            out[ch] = name
    return out


def length_histogram(index: VocabIndex) -> dict[int, int]:
    counts: dict[int, int] = {}
    for value in index.data.values():
        counts[len(value)] = counts.get(len(value), 0) + 1
    return dict(sorted(counts.items()))


def script_counts(index: VocabIndex) -> dict[str, int]:
    """{script: tokens}, most tokens first (see the module docstring)."""
    texts: list[str] = []
    partial = 0
    for token_id in index.ids:
        text = index.text(token_id)
        if text is None:
            partial += 1
        elif text:
            texts.append(text)
    script = scripts_of_chars("".join(texts))
    counts: dict[str, int] = {}
    for text in texts:
        found = {script.get(ch, "Unknown") for ch in text}
        strong = found.difference(_WEAK)
        for name in strong or found:
            counts[name] = counts.get(name, 0) + 1
    if partial:
        counts[PARTIAL] = partial
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
