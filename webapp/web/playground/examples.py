"""The example content of the tool pages: the seed examples each page offers, and the landing sentence.

What it does not do: compute or render anything (webapp.web.playground.compute, webapp.web.playground.pages).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    note: str
    state: dict[str, str]


SEED_VOCAB_LOW = '{"256": [108, 111], "257": [108, 111, 119]}'
SEED_CHAR_VOCAB = '{"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "er": 6, "low": 7, "lower": 8}'
SEED_CHAR_MERGES = '[["l", "o"], ["e", "r"], ["lo", "w"], ["low", "er"]]'

EXAMPLES: dict[str, tuple[Example, ...]] = {
    "bytes": (
        Example("low", '"low" → [257]', "the seed: two rules build one token",
                {"text": "low", "merges": "[[108, 111, 256], [256, 119, 257]]", "ids": "257", "vocab": SEED_VOCAB_LOW}),
        Example("aaa", '"aaa" → [256, 97]', "one visit per rule, no overlaps",
                {"text": "aaa", "merges": "[[97, 97, 256]]", "ids": "256 97", "vocab": '{"256": [97, 97]}'}),
        Example("decode", "decode [257]", 'ids and vocab back to "low"',
                {"text": "low", "merges": "[[108, 111, 256], [256, 119, 257]]", "ids": "[257]", "vocab": SEED_VOCAB_LOW}),
        Example("plain", "plain rules", "one rule per line, as you would type it",
                {"text": "lower lowest slow", "merges": "108 111 256\n256 119 257\n101 114 258\n257 258 259\n101 115 260",
                 "ids": "", "vocab": ""}),
        Example("split-char", "half a character", "a token ends inside é: its bytes show in hex, grouped",
                {"text": "café crème", "merges": "102 195 256\n169 32 257\n99 97 258",
                 "ids": "258 256 257 99 114 195 168 109 101", "vocab": '{"256": [102, 195], "257": [169, 32], "258": [99, 97]}'}),
        Example("markup", "<b>x</b> as text", "token text is always escaped",
                {"text": "<b>x</b>", "merges": "60 98 256\n256 62 257\n60 47 258\n258 98 259\n259 62 260", "ids": "", "vocab": ""}),
    ),
    "chars": (
        Example("lower", '"lower" → [8]', "the seed: four string rules",
                {"text": "lower", "merges": SEED_CHAR_MERGES, "vocab": SEED_CHAR_VOCAB}),
        Example("plain", "plain rules", "rules as `l o` lines, vocab as `token id` lines",
                {"text": "lowerlow", "merges": "l o\ne r\nlo w\nlow er",
                 "vocab": "l 0\no 1\nw 2\ne 3\nr 4\nlo 5\ner 6\nlow 7\nlower 8"}),
        Example("missing", "a missing entry", "the vocab lacks a token the merges produce",
                {"text": "lowest", "merges": SEED_CHAR_MERGES, "vocab": SEED_CHAR_VOCAB}),
    ),
    "train": (
        Example("low", "low lower lowest, 2", 'the seed: learns ["lo", "low"]', {"words": '["low", "lower", "lowest"]', "num_merges": "2"}),
        Example("aaa", '"aaa", 3', 'overlapping pairs: ["aa", "aaa"]', {"words": '["aaa"]', "num_merges": "3"}),
        Example("corpus", "a small corpus", "plain text split on whitespace, with ties",
                {"words": "the cat sat on the mat\nthe rat sat on the hat\nthat cat", "num_merges": "10"}),
    ),
}


# The landing page is the Bytes playground, open on a real tokenizer with a
# sentence that shows merges, a split character and digits.
LANDING_PRESET = "cl100k_base"
LANDING_TEXT = "Tokenizers split text into pieces: lower, lowest, naïve café, λόγος and 1234567."
