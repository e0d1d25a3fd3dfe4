"""BPE training: learn merge rules from words (words.py) or from a streamed corpus (corpus.py).

Above the engine and pre-tokenization, below file formats and presets.
Import names from the modules (or the public ones from `webapp.tokenizer`).
"""
