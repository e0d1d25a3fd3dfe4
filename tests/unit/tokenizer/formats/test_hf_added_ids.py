"""A tokenizer.json's added tokens get the ids the `tokenizers` library gives them on load, not the file's:
checked against the library on random added-token lists (texts in the vocab or not, ids that collide,
skip or repeat), and the encode of a file whose added token names a vocab token's id."""

from __future__ import annotations

import json
import random
from typing import Any

from tokenizers import Tokenizer

from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer
from webapp.tokenizer import formats
from webapp.tokenizer.api import Encoding
from webapp.tokenizer.formats.hf_json import library_added_ids

BASE = json.loads(byte_level_tokenizer(SAMPLE_CORPUS, use_regex=True).to_str())
VOCAB: dict[str, int] = BASE["model"]["vocab"]
BY_ID = {token_id: token for token, token_id in VOCAB.items()}


def _added(token_id: int, content: str, special: bool = True) -> dict[str, Any]:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def test_random_added_token_lists_are_numbered_as_the_library_numbers_them() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(200):
        added = [_added(rng.choice([rng.randrange(2 * len(VOCAB)), len(VOCAB) + k, rng.randrange(len(VOCAB))]),
                        rng.choice([f"<t{rng.randrange(5)}>", BY_ID[rng.randrange(len(VOCAB))], "<x>"]),
                        rng.random() < 0.5)
                 for k in range(rng.randint(1, 6))]
        library = Tokenizer.from_str(json.dumps({**BASE, "added_tokens": added}))
        ours, _moved = library_added_ids(added, VOCAB)
        assert [library.token_to_id(item["content"]) for item in ours] == [item["id"] for item in ours], added
        checked += 1
    assert checked == 200


def test_an_added_token_naming_a_vocab_tokens_id_encodes_and_decodes_as_the_library() -> None:
    taken = BY_ID[70]
    content = json.dumps({**BASE, "added_tokens": [_added(70, "<X>"), _added(900, "<Y>", special=False)]})
    library = Tokenizer.from_str(content)
    loaded = formats.import_tokenizer(content)
    ours = Encoding.from_loaded("moved", loaded)
    text = "low <X> er<Y>"
    assert ours.encode(text) == library.encode(text).ids and library.token_to_id("<X>") == len(VOCAB)
    assert ours.decode([70, len(VOCAB)]) == library.decode([70, len(VOCAB)], skip_special_tokens=False) == taken + "<X>"
    assert any("'<X>' 70 -> " in note for note in loaded.notes)  # said, not done quietly
