"""llama.cpp's pre-tokenizers by name: a GGUF file's `tokenizer.ggml.pre` -> the regexes that split its text.

llama.cpp applies a name's regexes one after another, each cutting the pieces the previous made, which
is a tokenizer.json Sequence of Isolated Split steps (`split_steps`). The patterns are llama.cpp's,
written for the `regex` package (its hand-written splitters as the patterns they implement, its own
rewrites kept). What it does not do: the pre-tokenizers llama.cpp runs with code of its own or without
the byte alphabet; those fall back as unknown names do, with a note. Details and the table of names:
docs/formats.md, "Pre-tokenizers by name".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webapp.tokenizer.pretokenize.class_split import CL100K_PATTERN, DEEPSEEK_V3_PATTERNS
from webapp.tokenizer.pretokenize.patterns import GPT2_PATTERN


@dataclass(frozen=True)
class PreType:
    """One of llama.cpp's pre-tokenizer types: its regexes in order, what they do, and the flags the
    type sets when a file names it (llama.cpp sets them before reading the file's own add_bos key)."""

    name: str
    patterns: tuple[str, ...]
    summary: str
    ignore_merges: bool = False
    add_bos: bool = False
    no_bos: bool = False  # (the type clears the default BOS id: chatglm's)


#: The contractions as llama.cpp spells them in the patterns it rewrote (no inline case flag).
_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_WHITESPACE_TAIL = r"|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*" + _WHITESPACE_TAIL
#: Letters: a letter that is not a-z (then: not A-Z), as llama.cpp rewrote the case classes.
_NOT_LOWER = r"((?=[\p{L}])([^a-z]))"
_NOT_UPPER = r"((?=[\p{L}])([^A-Z]))"


def _cased_words(contraction: str) -> str:
    return (rf"[^\r\n\p{{L}}\p{{N}}]?{_NOT_LOWER}*{_NOT_UPPER}+{contraction}"
            rf"|[^\r\n\p{{L}}\p{{N}}]?{_NOT_LOWER}+{_NOT_UPPER}*{contraction}")


#: DeepSeek LLM's letters (the cased letters, listed by range), written with escapes: several of these
#: characters (the Ohm and Kelvin signs, Greek letters with oxia) change under normalization.
_DEEPSEEK_LLM_LETTERS = (
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
    "\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba"
    "\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
    "\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe"
    "\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc"
    "\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
    "\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06"
    "\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
    "\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df"
    "\U0001e900-\U0001e943"
)
#: CJK ideographs, everything from U+0800 up to them, and Hangul (DeepSeek LLM's and Coder's).
_DEEPSEEK_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
#: Bloom's and Poro's one pattern: an optional space, then anything but whitespace and these marks
#: (the brackets and the bar are characters of the class too, as llama.cpp's string has them).
_PORO = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

_TYPES: tuple[PreType, ...] = (
    PreType("default", (r"[\p{P}\$\+<=>\^~\|]+", GPT2_PATTERN, r"\p{N}+", "[0-9][0-9][0-9]"),
            "punctuation runs, then GPT-2's pattern, then number runs, then ASCII digits three at a time"),
    PreType("llama3", (CL100K_PATTERN,),
            "Llama 3's pattern (cl100k's): contractions, words with one leading non-letter, numbers in threes",
            ignore_merges=True, add_bos=True),
    PreType("dbrx", (CL100K_PATTERN,), "Llama 3's pattern (cl100k's)"),
    PreType("chatglm4", (CL100K_PATTERN,), "Llama 3's pattern (cl100k's); no default BOS token", no_bos=True),
    PreType("deepseek-llm", (
        "[\r\n]", f"\\s?[{_DEEPSEEK_LLM_LETTERS}]+",
        "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+", "\\s+$", _DEEPSEEK_CJK, r"\p{N}+"),
        "line breaks alone, then runs of cased letters, of punctuation, trailing whitespace, CJK and Hangul, "
        "numbers"),
    PreType("deepseek-coder", ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _DEEPSEEK_CJK, r"\p{N}"),
            "line breaks alone, then runs of letters, of punctuation, CJK and Hangul, single digits"),
    PreType("deepseek-v3", DEEPSEEK_V3_PATTERNS,
            "DeepSeek-V3's three splits: numbers in threes, CJK and kana runs, then words and punctuation"),
    PreType("falcon", (r"[\p{P}\$\+<=>\^~\|`]+", GPT2_PATTERN, "[0-9][0-9][0-9]"),
            "punctuation runs, then GPT-2's pattern, then ASCII digits three at a time"),
    PreType("starcoder", (r"\p{N}", GPT2_PATTERN), "single digits, then GPT-2's pattern"),
    PreType("gpt2", (GPT2_PATTERN,), "GPT-2's pattern"),
    PreType("qwen2", (_QWEN2,), "Qwen2's pattern: as Llama 3's, with single digits"),
    PreType("qwen35", (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
                       + _WHITESPACE_TAIL,), "Qwen3.5's pattern: Qwen2's, with combining marks inside words"),
    PreType("poro", (_PORO,), "an optional space and a run of anything but whitespace and .,!?… 。，、।۔،"),
    PreType("viking", (_PORO, r"\p{N}"), "Poro's pattern, then single digits"),
    PreType("tekken", (_cased_words("") + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*" + _WHITESPACE_TAIL,),
            "Mistral Tekken's pattern as llama.cpp rewrote it: words split at case changes (non-ASCII letters "
            "count as either case), single digits", ignore_merges=True, add_bos=True),
    PreType("gpt-4o", (_cased_words(_CONTRACTIONS + "?") + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*"
                       + _WHITESPACE_TAIL,),
            "o200k's pattern as llama.cpp rewrote it: words split at case changes (non-ASCII letters count as "
            "either case) with their contraction, numbers in threes"),
    PreType("seed-coder", (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+"
                           + _WHITESPACE_TAIL,), "Llama 3's pattern with single digits, punctuation without line ends"),
    PreType("bailingmoe", (r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                           r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",),
            "Qwen2's pattern with one line break at a time"),
    PreType("jais-2", (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                       + "".join(rf"|\s{{{n}}}(?!\S)" for n in (512, 256, 128, 64, 32, 16, 8, 4))
                       + r"|\s{1,2}(?!\S)|\s{1}",),
            "Llama 3's pattern with whitespace runs cut in powers of two"),
    PreType("minicpm5", (r"\p{N}{1,3}", _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*"
                         + _WHITESPACE_TAIL), "numbers in threes, then Llama 3's pattern", ignore_merges=True),
    PreType("chameleon", ("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
                          r"\p{N}", r"[\p{P}!-/:-@\[-`{-~]", GPT2_PATTERN),
            "sentinel and image tokens, tabs, line breaks and space pairs, digits and punctuation one at a time, "
            "then GPT-2's pattern", add_bos=True),
)
PRE_TYPES: dict[str, PreType] = {t.name: t for t in _TYPES}

#: `tokenizer.ggml.pre` values -> the type llama.cpp gives them (llama_vocab::impl::load).
PRE_NAMES: dict[str, str] = {
    "default": "default",
    **dict.fromkeys(("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                     "jina-v5-nano"), "llama3"),
    **dict.fromkeys(("dbrx", "smaug-bpe"), "dbrx"),
    **dict.fromkeys(("glm4", "chatglm-bpe"), "chatglm4"),
    "deepseek-llm": "deepseek-llm",
    "deepseek-coder": "deepseek-coder",
    **dict.fromkeys(("deepseek-v3", "hunyuan-dense", "hy_v4", "joyai-llm"), "deepseek-v3"),
    "falcon": "falcon",
    **dict.fromkeys(("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"),
                    "starcoder"),
    **dict.fromkeys(("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
                     "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4", "mpt", "olmo",
                     "jais", "trillion", "granite-docling"), "gpt2"),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open",
                     "grok-2"), "qwen2"),
    "qwen35": "qwen35",
    **dict.fromkeys(("poro-chat", "bloom", "gpt3-finnish"), "poro"),
    "viking": "viking",
    "tekken": "tekken",
    **dict.fromkeys(("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"), "gpt-4o"),
    "seed-coder": "seed-coder",
    **dict.fromkeys(("bailingmoe", "bailingmoe2", "llada-moe"), "bailingmoe"),
    "jais-2": "jais-2",
    "minicpm5": "minicpm5",
    "chameleon": "chameleon",
}
#: Names llama.cpp knows but splits with code of its own, or without byte encoding: opened with the fallback.
OWN_CODE = frozenset({"kimi-k2", "afmoe", "superbpe", "tiny_aya", "cohere2moe", "gemma4", "sarvam-moe", "whitespace",
                      "granite-embed-multi-311m", "granite-embed-multi-97m", "youtu", "spark2_5", "ufakzeka",
                      "laguna", "exaone-moe"})
FALLBACK = "default"


def pre_type_for(name: str | None) -> tuple[PreType, str | None]:
    """The pre-tokenizer type for a file's `tokenizer.ggml.pre` (None: the key is missing), and a note
    when it is not the file's own: llama.cpp's `default` regexes stand in."""
    if name is not None and name in PRE_NAMES:
        return PRE_TYPES[PRE_NAMES[name]], None
    fallback = PRE_TYPES[FALLBACK]
    if name is None:
        return fallback, ("the file names no pre-tokenizer (tokenizer.ggml.pre); llama.cpp then warns and splits "
                          "with its 'default' regexes, as the playground does here")
    shown = name if len(name) <= 60 else name[:60] + "..."
    if name in OWN_CODE:
        why = "llama.cpp splits it with code of its own that the playground does not have"
    else:
        why = "it is not one of the names the playground knows (llama.cpp refuses a name it does not know)"
    return fallback, (f"the file's pre-tokenizer {shown!r} is split with llama.cpp's 'default' regexes instead: "
                      f"{why}; ids may differ from llama.cpp's")


def split_steps(patterns: tuple[str, ...]) -> dict[str, Any]:
    """A tokenizer.json pre-tokenizer doing the regexes one after another, then mapping bytes (GPT-2's alphabet)."""
    steps: list[dict[str, Any]] = [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
        for pattern in patterns
    ]
    steps.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
    return {"type": "Sequence", "pretokenizers": steps}


__all__ = ["FALLBACK", "OWN_CODE", "PRE_NAMES", "PRE_TYPES", "PreType", "pre_type_for", "split_steps"]
