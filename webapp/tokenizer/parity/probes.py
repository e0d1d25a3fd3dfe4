"""The parity lab's built-in probe texts: short, varied texts where tokenizers tend to part.

Each probe is named for what it tries (`PROBES`); `PROBE_TEXTS` is the texts alone, in that order.
They are chosen so that each stage has texts that reach it: scripts whose marks a normalizer or a
split may treat differently (Hindi, Thai, Arabic, CJK), emoji ZWJ sequences, composed and decomposed
accents (NFC / NFD), whitespace runs, code, numbers, contractions, and text that looks like special
tokens. docs/parity.md lists them.
"""

from __future__ import annotations

#: (name, text) of every built-in probe.
PROBES: tuple[tuple[str, str], ...] = (
    ("english", "The quick brown fox jumps over the lazy dog."),
    ("contractions", "I'm sure they'll say it's fine, but we've NEVER done it; don't you'd've?"),
    ("contractions, upper case", "IT'S WHAT WE'RE TOLD. SHE'LL SAY I'D BEEN THERE."),
    ("numbers", "1234567890 3.14159 1,234,567 0x1F 2026-12-01 +44 20 7946 0958"),
    ("numbers in words", "abc123def 12ab 7th 1st 99% $4.50 €12"),
    ("whitespace runs", "a  b   c    d\t\te\n\nf \n \n  g" + " " * 9 + "h"),
    ("leading and trailing spaces", "   leading and trailing   "),
    ("newlines", "line one\nline two\r\nline three\n\n\n\nend"),
    ("code", "def f(x):\n    return x**2 + 1  # square\n\nfor i in range(10):\n\tprint(f(i))\n"),
    ("code, braces", "if (a && b) { c[i] = d->e; } else { return -1; } // done"),
    ("json", '{"key": [1, 2.5, null], "nested": {"a": "b\\n"}}'),
    ("url and email", "https://example.com/a_b?c=d&e=f#top mail@example.org"),
    ("punctuation runs", "Wait... what?!?! --- (really) [yes] {no} <maybe> ... !!! ???"),
    ("composed accents", "café naïve façade résumé Ångström"),
    ("decomposed accents", "cafe\u0301 nai\u0308ve fac\u0327ade re\u0301sume\u0301 A\u030angstro\u0308m"),
    ("combining marks stacked", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319 a\u0300\u0301\u0302 q\u0323\u0307"),
    ("compatibility forms", "ｆｕｌｌｗｉｄｔｈ ﬁ ﬂ ² ½ Ⅻ ㎏ ℌ"),
    ("vietnamese", "Tiếng Việt là ngôn ngữ chính thức của Việt Nam."),
    ("greek and cyrillic", "Καλημέρα κόσμε. Привет, мир! Ёлка и йод."),
    ("hindi", "हिन्दी भारत की राजभाषा है। क्षत्रिय और ज्ञान।"),
    ("thai", "ภาษาไทยเป็นภาษาราชการของประเทศไทย สวัสดีครับ"),
    ("arabic", "اللغة العربية جميلة. مرحبا بالعالم! ١٢٣٤٥"),
    ("hebrew", "שלום עולם, עִבְרִית עם ניקוד"),
    ("chinese", "北京是中华人民共和国的首都。我爱自然语言处理。"),
    ("japanese", "東京は日本の首都です。カタカナとひらがなと漢字。"),
    ("korean", "한국어 텍스트입니다. 안녕하세요!"),
    ("korean, decomposed jamo", "\u1112\u1161\u11ab\u1100\u1173\u11af"),
    ("emoji", "I ❤️ emoji 😀😃😄 👍🏽 🇫🇷🇯🇵"),
    ("emoji zwj sequences", "👨\u200d👩\u200d👧\u200d👦 family, 🏳️\u200d🌈 flag, 👩🏾\u200d💻 coder"),
    ("zero-width and odd spaces", "a\u200bb c\u00a0d e\u3000f g\u2009h\ufeffi"),
    ("control characters", "tab\there\x00nul\x07bell\x7fdel"),
    ("special-looking text", "<|endoftext|> <|begin_of_text|> <s> </s> [INST] <unk> <|im_start|>user"),
    ("special-looking text inside words", "word<|endoftext|>word and<s>inside</s>"),
    ("mixed scripts", "English, Русский, 中文, العربية, हिन्दी and ไทย in one line."),
    ("long word", "Donaudampfschifffahrtsgesellschaftskapitänswitwe pneumonoultramicroscopicsilicovolcanoconiosis"),
    ("repeated characters", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ============ ------ ______"),
    ("math", "∑ᵢ xᵢ² ≤ ∫₀^∞ e^{-x} dx; α+β=γ; ∀x∈ℝ"),
    ("historic and rare scripts", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓀀 𐍈 ᚠᛇᚻ"),
)

#: The probe texts alone, in the order of `PROBES`.
PROBE_TEXTS: tuple[str, ...] = tuple(text for _name, text in PROBES)

__all__ = ["PROBES", "PROBE_TEXTS"]
