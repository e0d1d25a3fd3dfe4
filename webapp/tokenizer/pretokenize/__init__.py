"""Pre-tokenization: split text with a published regex pattern, encode each pre-token.

Above the engine (`webapp.tokenizer.core`), below training, Hugging Face
pipelines, file formats and presets. Import names from the modules (or the
public ones from `webapp.tokenizer`); this module exports nothing.
"""
