"""The main Unicode script of a text: the script most of its letters are written in.

What it does not do: split a text by script, or guess a language.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import regex

#: Unicode's script names (its Scripts.txt property values, long form).
SCRIPT_NAMES = (
    "Adlam", "Ahom", "Anatolian_Hieroglyphs", "Arabic", "Armenian", "Avestan", "Balinese", "Bamum", "Bassa_Vah",
    "Batak", "Bengali", "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese", "Buhid", "Canadian_Aboriginal",
    "Carian", "Caucasian_Albanian", "Chakma", "Cham", "Cherokee", "Chorasmian", "Coptic", "Cuneiform", "Cypriot",
    "Cypro_Minoan", "Cyrillic", "Deseret", "Devanagari", "Dives_Akuru", "Dogra", "Duployan", "Egyptian_Hieroglyphs",
    "Elbasan", "Elymaic", "Ethiopic", "Georgian", "Glagolitic", "Gothic", "Grantha", "Greek", "Gujarati",
    "Gunjala_Gondi", "Gurmukhi", "Han", "Hangul", "Hanifi_Rohingya", "Hanunoo", "Hatran", "Hebrew", "Hiragana",
    "Imperial_Aramaic", "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese", "Kaithi", "Kannada",
    "Katakana", "Kawi", "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khmer", "Khojki", "Khudawadi", "Lao",
    "Latin", "Lepcha", "Limbu", "Linear_A", "Linear_B", "Lisu", "Lycian", "Lydian", "Mahajani", "Makasar",
    "Malayalam", "Mandaic", "Manichaean", "Marchen", "Masaram_Gondi", "Medefaidrin", "Meetei_Mayek",
    "Mende_Kikakui", "Meroitic_Cursive", "Meroitic_Hieroglyphs", "Miao", "Modi", "Mongolian", "Mro", "Multani",
    "Myanmar", "Nabataean", "Nag_Mundari", "Nandinagari", "New_Tai_Lue", "Newa", "Nko", "Nushu",
    "Nyiakeng_Puachue_Hmong", "Ogham", "Ol_Chiki", "Old_Hungarian", "Old_Italic", "Old_North_Arabian",
    "Old_Permic", "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic", "Old_Uyghur", "Oriya", "Osage",
    "Osmanya", "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa", "Phoenician", "Psalter_Pahlavi", "Rejang",
    "Runic", "Samaritan", "Saurashtra", "Sharada", "Shavian", "Siddham", "SignWriting", "Sinhala", "Sogdian",
    "Sora_Sompeng", "Soyombo", "Sundanese", "Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa", "Tai_Le", "Tai_Tham",
    "Tai_Viet", "Takri", "Tamil", "Tangsa", "Tangut", "Telugu", "Thaana", "Thai", "Tibetan", "Tifinagh", "Tirhuta",
    "Toto", "Ugaritic", "Vai", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi", "Yi", "Zanabazar_Square",
)
NOT_COUNTED = ("Common", "Inherited", "Unknown")


def _known(name: str) -> bool:
    try:
        regex.compile(r"\p{Script=" + name + "}")
    except regex.error:
        return False
    return True


_PATTERN = regex.compile("|".join(f"(?P<{n}>\\p{{Script={n}}})" for n in SCRIPT_NAMES if _known(n)))


@lru_cache(maxsize=65536)
def script_of(char: str) -> str:
    """One character's script name ("Latin", "Han", ...; "Common" / "Inherited" / "Unknown" for the rest)."""
    match = _PATTERN.match(char)
    if match is not None and match.lastgroup:
        return match.lastgroup
    for name in NOT_COUNTED:
        if regex.match(r"\p{Script=" + name + "}", char):
            return name
    return "Unknown"


def script_counts(text: str) -> Counter[str]:
    """{script: characters} over the counted scripts."""
    counts: Counter[str] = Counter()
    for char, n in Counter(text).items():
        name = script_of(char)
        if name not in NOT_COUNTED:
            counts[name] += n
    return counts


def main_script(text: str) -> str:
    """The script of most of the text's letters ("Common" when it has none); see the module docstring."""
    counts = script_counts(text)
    if not counts:
        return "Common"
    return min(counts, key=lambda name: (-counts[name], name)).replace("_", " ")
