"""Segments led by a run of spaces, merged in parts (models/space_runs.py), against the whole segment merged.

- The Mistral files meet `runs_last`; each run-led segment put together by `joined`
  equals the segment merged whole, for runs of 2 to 40 spaces before words of
  several scripts (byte fallback included).
- SentencePiece models made here, their run pieces scored below every other
  piece or anywhere: indented text gives sentencepiece's ids either way, and
  `runs_last` holds only where the argument needs it.
- A rule set where a run rule fires first: `runs_last` is false, and `joined`
  would have been wrong there (the condition is needed).
- A long indented text of more than PAUSE_SEGMENTS segments: sentencepiece's ids,
  merged with the collector paused once (models/library.py) and running again after.
"""

from __future__ import annotations

import gc
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tests.loaded_calls import encode_loaded
from tests.mistral_files import mistral_file

from webapp.tokenizer import import_tokenizer
from webapp.tokenizer.core.library_order.score_order import ScoreMerges
from webapp.tokenizer.models import library
from webapp.tokenizer.models.library import LibraryModel
from webapp.tokenizer.models.long_pieces import long_piece_ids
from webapp.tokenizer.models.space_runs import SPACE, joined, led_segments, parts_of, runs_last
from webapp.tokenizer.stages.models import library_model

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

FILES = ["tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"]


def _model(data: bytes) -> LibraryModel:
    return library_model(import_tokenizer(data, filename="tokenizer.model"))


def _parts_ids(model: LibraryModel, segments: list[str]) -> list[tuple[int, ...]]:
    """Each run-led segment's ids through `joined`, its parts merged alone."""
    led = led_segments(segments)
    assert list(led) == segments
    ids_of = {part: model.merge_alone(part) for part in parts_of(led)}
    return [joined(segment, run, ids_of, model.vocab[SPACE]) for segment, run in led.items()]


@pytest.mark.parametrize("name", FILES)
def test_mistral_files_meet_the_condition_and_parts_give_the_whole_segments_ids(name: str) -> None:
    model = _model(mistral_file(name))
    assert model.runs_last()
    words = ["else", "return", "x", "self.offset", "kythdbrown", "日本語", "العربية", "हिन्दी", "über", "1234",
             "Ti", "()", "ẞ𝔘", "\u0301a"]
    segments = [SPACE * run + word for run in range(2, 41) for word in words]
    assert _parts_ids(model, segments) == [model.merge_alone(s) for s in segments]


def _proto(pieces: list[tuple[str, float]]) -> bytes:
    """A SentencePiece BPE model: <unk>, <s>, </s>, the 256 byte pieces, then `pieces` (text, score)."""
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = pb.TrainerSpec.BPE
    proto.trainer_spec.byte_fallback = True
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = False
    for text, kind in (("<unk>", pb.ModelProto.SentencePiece.UNKNOWN), ("<s>", pb.ModelProto.SentencePiece.CONTROL),
                       ("</s>", pb.ModelProto.SentencePiece.CONTROL)):
        proto.pieces.add(piece=text, score=0.0, type=kind)
    for b in range(256):
        proto.pieces.add(piece=f"<0x{b:02X}>", score=0.0, type=pb.ModelProto.SentencePiece.BYTE)
    for text, score in pieces:
        proto.pieces.add(piece=text, score=score)
    return bytes(proto.SerializeToString())


LETTERS = ["a", "b", "c", SPACE]
WORDS = st.text(alphabet="abcé", min_size=1, max_size=6)


@st.composite
def models(draw: st.DrawFn) -> tuple[bytes, bool]:
    """Pieces over a, b, c and the space (every character a piece, then joined pieces with random scores),
    and run pieces ("▁▁" to "▁" * 8) scored below every other piece, or scored at random."""
    singles = [(ch, -100.0) for ch in LETTERS]
    # (the space joins each letter, so that a run and the word after it make one segment)
    spaced = [(SPACE + ch, float(draw(st.integers(-50, -1)))) for ch in "abc"]
    joined_pieces = draw(st.lists(st.text(alphabet="abc", min_size=2, max_size=3).map(lambda t: SPACE + t)
                                  | st.text(alphabet="abc", min_size=2, max_size=4), unique=True, max_size=12))
    scores = draw(st.lists(st.integers(-50, -1), min_size=len(joined_pieces), max_size=len(joined_pieces)))
    runs_lowest = draw(st.booleans())
    runs = [SPACE * n for n in range(2, 9)]
    run_scores = [-1000.0] * len(runs) if runs_lowest else [float(draw(st.integers(-60, -1))) for _ in runs]
    pieces = [*singles, *spaced, *zip(joined_pieces, map(float, scores)), *zip(runs, run_scores)]
    # (every piece's halves must be pieces for the BPE model to reach it: sentencepiece keeps the rest as pieces
    # that no merge makes, and so does the playground)
    return _proto(pieces), runs_lowest


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.lists(st.tuples(st.integers(0, 12), WORDS), min_size=8, max_size=30))
def test_indented_text_gives_sentencepieces_ids(model_runs: tuple[bytes, bool], lines: list[tuple[int, str]]) -> None:
    data, runs_lowest = model_runs
    text = "\n".join(" " * indent + word for indent, word in lines)
    tok = import_tokenizer(data, filename="tokenizer.model")
    model = library_model(tok)
    if runs_lowest:
        assert model.runs_last()
    assert encode_loaded(tok, text) == spm.SentencePieceProcessor(model_proto=data).encode(text)


def test_a_run_rule_that_fires_first_is_refused() -> None:
    # "▁▁" at level 0 fires before "▁a" (level 1): "▁▁a" literally merges to "▁▁" "a", while its parts
    # would give "▁" then "▁a". So the condition must not hold.
    vocab = {"▁": 0, "a": 1, "▁▁": 2, "▁a": 3, "▁▁a": 4}
    runs_first = ScoreMerges([(0, 0, 2), (0, 1, 3)], [0, 1])
    assert not runs_last(vocab, runs_first)
    assert runs_first.merge([0, 0, 1]) == [2, 1]
    assert joined("▁▁a", 2, {"▁a": (3,), "▁": (0,), "▁▁": (2,)}, 0) == (0, 3)  # (what the condition prevents)
    assert runs_last(vocab, ScoreMerges([(0, 1, 3), (0, 0, 2)], [0, 1]))
    # A run joining a piece that starts with a space but is no run, or a long run joining a plain piece,
    # also breaks it; and so does a file with no rule joining runs (nothing to put together).
    assert not runs_last(vocab, ScoreMerges([(0, 1, 3), (0, 3, 4), (0, 0, 2)], [0, 0, 1]))
    assert not runs_last(vocab, ScoreMerges([(0, 1, 3), (2, 1, 4), (0, 0, 2)], [0, 0, 1]))
    assert not runs_last(vocab, ScoreMerges([(0, 1, 3)], [0]))


@pytest.mark.usefixtures("collector_on")  # (tests/conftest.py)
def test_a_batch_past_pause_segments_gives_sentencepieces_ids_with_the_collector_paused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    entered: list[bool] = []
    real = library.collector_paused

    def recorded() -> Any:
        entered.append(gc.isenabled())
        return real()

    monkeypatch.setattr(library, "collector_paused", recorded)
    data = mistral_file(FILES[0])
    rng = random.Random(7)
    words = ["else", "self.offset", "日本語", "über", "1234", "\u0301a", "(x)"]
    text = "\n".join("  " * rng.randrange(6) + "".join(rng.choices("abcdefghij", k=4)) + rng.choice(words)
                     for _ in range(library.PAUSE_SEGMENTS // 2))
    tok = import_tokenizer(data, filename="tokenizer.model")
    texts = long_piece_ids(library_model(tok).cut, [SPACE + text.replace(" ", SPACE)])[0]
    assert len(texts) >= library.PAUSE_SEGMENTS
    expected = spm.SentencePieceProcessor(model_proto=data).encode(text)
    assert encode_loaded(tok, text, allowed_special=frozenset()) == expected
    assert entered == [True] and gc.isenabled()  # (paused once, for the one batch, and on again after it)
