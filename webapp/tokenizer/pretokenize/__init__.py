"""Pre-tokenization: split text with a published regex pattern, encode each pre-token.

- pretokenized: the public functions (split_text, split_pretokens,
  pretokenized_encode, pretokenized_encode_trace)
- chunks: exact, fast splitting (cut points the patterns never cross, ASCII forms)
- textencode: the fast encoder of split text, with its chunk and pre-token caches

Above the engine (`webapp.tokenizer.core`) and below training, Hugging Face
pipelines, file formats and presets, which may import it. Import names from
the modules (or the public ones from `webapp.tokenizer`); this module exports
nothing.
"""
