"""The decoding half of tiktoken's `Encoding` API: ids back to bytes and text, with tiktoken's errors.

`DecodeMethods` is the base class of `Encoding` (encoding.py), which
gives it `name` and its `TokenTables` (every id's bytes, made once). Decode
joins the tokens' bytes, as tiktoken's does.

What it does not do: encode, or a tokenizer.json's own decoder.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Sequence

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.api.parts import char_offsets, check_threads, token_index, token_list


class UnknownId(TokenizerError, KeyError):
    """An id no token has: a `TokenizerError` naming `ids` and its position, and tiktoken's KeyError."""

    def __str__(self) -> str:
        return self.message


class TokenTables(NamedTuple):
    """What decoding and the attributes look up, made once per encoding."""

    decoder: dict[int, bytes]  # every id -> its bytes (special tokens as their text)
    encoder: dict[bytes, int]  # ordinary tokens' bytes -> id
    special_ids: frozenset[int]
    max_id: int


class DecodeMethods:
    """tiktoken's decode methods, over the tables the encoding makes."""

    name: str

    def _token_tables(self) -> TokenTables:
        raise NotImplementedError

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The tokens' bytes joined (special tokens as their text). KeyError for an unknown id.

        >>> from webapp.tokenizer import get_encoding
        >>> get_encoding("cl100k_base").decode_bytes([71, 19010, 385, 100257])
        b'h\xc3\xa9llo<|endoftext|>'
        """
        ids = token_list(tokens)
        decoder = self._token_tables().decoder
        try:
            return b"".join(map(decoder.__getitem__, ids))
        except KeyError:
            pass
        for token_id in ids:  # an id outside 32 bits anywhere is an OverflowError first, as in tiktoken
            token_index(token_id)
        index, missing = next((index, token_id) for index, token_id in enumerate(ids) if token_id not in decoder)
        raise UnknownId(f"ids: id {missing} at position {index + 1} is not in {self.name}'s vocab",
                        field="ids", location={"index": index + 1})

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of the tokens; bytes that are not UTF-8 per `errors` (default: U+FFFD).

        >>> from webapp.tokenizer import get_encoding
        >>> enc = get_encoding("cl100k_base")
        >>> enc.decode([71, 19010, 385])
        'héllo'
        >>> enc.decode([71, 127]) == "h\\ufffd"  # 127 is the byte 0xc3 alone: half of "é"
        True
        >>> enc.decode([71, 127], errors="strict")
        Traceback (most recent call last):
        UnicodeDecodeError: 'utf-8' codec can't decode byte 0xc3 in position 1: unexpected end of data
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """One token's bytes (special tokens too). KeyError for an unknown id.

        >>> from webapp.tokenizer import get_encoding
        >>> get_encoding("cl100k_base").decode_single_token_bytes(19010)
        b'\xc3\xa9l'
        """
        value = token_index(token)
        found = self._token_tables().decoder.get(value)
        if found is None:
            raise KeyError(f"{value} is not a token id of {self.name}")
        return found

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """Each token's bytes.

        >>> from webapp.tokenizer import get_encoding
        >>> get_encoding("cl100k_base").decode_tokens_bytes([15339, 1917])
        [b'hello', b' world']
        """
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and where each token starts in it (characters). UnicodeDecodeError if not UTF-8.

        >>> from webapp.tokenizer import get_encoding
        >>> get_encoding("cl100k_base").decode_with_offsets([71, 19010, 385])
        ('héllo', [0, 1, 3])
        """
        parts = self.decode_tokens_bytes(tokens)
        offsets = char_offsets(parts)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Iterable[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        check_threads(num_threads)
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Iterable[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        check_threads(num_threads)
        return [self.decode_bytes(tokens) for tokens in batch]
