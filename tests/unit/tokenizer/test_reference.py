"""The literal reference (webapp/tokenizer/reference.py) against the worked examples of docs/algorithms.md.

The reference is the oracle of every engine test, so it is checked on its own
here: each worked example of the contract, the errors it defines, and a
round trip for well-formed merge lists.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import reference

LOW = [[108, 111, 256], [256, 119, 257]]
LOWER = [["l", "o"], ["e", "r"], ["lo", "w"], ["low", "er"]]
LOWER_VOCAB = {"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "er": 6, "low": 7, "lower": 8}


# --- 1. byte-level encode -------------------------------------------------------


@pytest.mark.parametrize(
    "text,merges,expected",
    [
        ("low", LOW, [257]),
        ("aaa", [[97, 97, 256]], [256, 97]),  # non-overlapping, left to right
        ("aaaa", [[97, 97, 97]], [97, 97]),  # a visit does not rescan its own output
        ("aaaa", [[97, 97, 97], [97, 97, 97]], [97]),  # a repeated pair is applied twice
        ("abc", [[256, 99, 257], [97, 98, 256]], [256, 99]),  # a forward reference matches nothing
        ("abc", [[98, 99, 300], [97, 98, 256]], [97, 300]),  # list order, not id order
        ("é", [], [0xC3, 0xA9]),  # UTF-8 bytes, not code points
        ("", LOW, []),
    ],
)
def test_encode_worked_examples(text: str, merges: list[list[int]], expected: list[int]) -> None:
    before = copy.deepcopy(merges)
    assert reference.encode(text, merges) == expected
    assert merges == before


def test_encode_rejects_text_that_cannot_be_utf8() -> None:
    with pytest.raises(ValueError):
        reference.encode("a\ud800", [])


# --- 2. decode ------------------------------------------------------------------


def test_decode_worked_examples() -> None:
    vocab = {"256": [108, 111], "257": [108, 111, 119]}
    assert reference.decode([257], vocab) == "low"
    assert reference.decode([256, 119], vocab) == "low"  # ids 0..255 not listed are their byte
    assert reference.decode([65], {65: [66]}) == "B"  # the vocab wins where it lists a byte id
    # One character split over two tokens: strict UTF-8 over the whole sequence.
    assert reference.decode([256, 0xA9], {256: [0xC3]}) == "é"


def test_decode_unknown_id_says_which() -> None:
    with pytest.raises(ValueError, match=r"^id 300 \(position 2\) is not in the vocab$"):
        reference.decode([97, 300], {})


@pytest.mark.parametrize("ids,offset", [([97, 0xFF], 1), ([97, 0xC3], 1), ([0xE6, 0x97, 97], 0)])
def test_decode_invalid_utf8_says_the_byte_offset(ids: list[int], offset: int) -> None:
    with pytest.raises(ValueError, match=rf"^the bytes are not valid UTF-8 at byte offset {offset}$"):
        reference.decode(ids, {})


# --- 3. character-level encode ----------------------------------------------------


def test_char_encode_worked_example() -> None:
    assert reference.char_tokens("lower", LOWER) == ["lower"]
    assert reference.bpe_encode_text("lower", LOWER_VOCAB, LOWER) == [8]
    assert reference.bpe_encode_text("lower", {"lower": 41}, LOWER) == [41]  # ids are labels


def test_char_encode_is_literal_about_code_points_spaces_and_case() -> None:
    assert reference.char_tokens("e\u0301", []) == ["e", "\u0301"]  # code points, not graphemes
    assert reference.char_tokens("Lo lo", [["l", "o"]]) == ["L", "o", " ", "lo"]


def test_char_encode_missing_token_says_which_and_where() -> None:
    with pytest.raises(ValueError, match=r"^token 'w' \(position 2\) is not in the vocab$"):
        reference.bpe_encode_text("low", {"lo": 0}, [["l", "o"]])


# --- 4. training -----------------------------------------------------------------


@pytest.mark.parametrize(
    "words,num_merges,expected",
    [
        (["low", "lower", "lowest"], 2, ["lo", "low"]),
        (["aaa"], 3, ["aa", "aaa"]),  # stops when no word has two symbols left
        (["aaaa", "bc", "bc"], 1, ["aa"]),  # (a, a) counted three times in "aaaa"
        (["ba", "ab"], 1, ["ab"]),  # a tie goes to the smallest (first, second)
        (["ab", "Ab"], 1, ["Ab"]),  # code-point order: "A" < "a"
        (["ab", "cd", "cd"], 1, ["cd"]),  # a repeated word counts every time
        (["a b", "a b"], 1, [" b"]),  # words are any strings: " " < "a"
        (["low"], 0, []),
    ],
)
def test_training_worked_examples(words: list[str], num_merges: int, expected: list[str]) -> None:
    before = list(words)
    assert reference.bpe_merges(words, num_merges) == expected
    assert words == before


def test_training_steps_keep_the_counts_each_winner_came_from() -> None:
    (pair, counts), (pair2, counts2) = reference.train_steps(["aaaaa"], 2)
    assert (pair, counts) == (("a", "a"), {("a", "a"): 4})
    # "aaaaa" became aa aa a: (aa, aa) and (aa, a) tie at 1, the smaller tuple wins.
    assert (pair2, counts2) == (("aa", "a"), {("aa", "aa"): 1, ("aa", "a"): 1})


# --- the visit log used to check traces -----------------------------------------------


def test_steps_lists_only_the_rules_that_changed_something() -> None:
    rules = [[97, 97, 256], [98, 98, 257], [256, 97, 258]]
    assert reference.steps(list(b"aaa"), rules) == [(0, 1, (256, 97)), (2, 1, (258,))]


# --- a round trip for well-formed lists ---------------------------------------------


@st.composite
def well_formed_merges(draw: st.DrawFn) -> tuple[list[list[int]], dict[int, bytes]]:
    """Rules whose operands exist before them and whose new ids are fresh, with the vocab they imply."""
    vocab = {i: bytes([i]) for i in range(256)}
    alphabet = list(b"ab \xc3\xa9")
    merges: list[list[int]] = []
    for new in range(256, 256 + draw(st.integers(0, 12))):
        known = alphabet + list(range(256, new))
        left, right = draw(st.sampled_from(known)), draw(st.sampled_from(known))
        merges.append([left, right, new])
        vocab[new] = vocab[left] + vocab[right]
    return merges, vocab


@settings(max_examples=examples(200), deadline=None)
@given(text=st.text(alphabet="ab é"), case=well_formed_merges())
def test_decode_inverts_encode_for_well_formed_lists(text: str, case: tuple[list[list[int]], dict[int, bytes]]) -> None:
    merges, vocab = case
    assert reference.decode(reference.encode(text, merges), vocab) == text
