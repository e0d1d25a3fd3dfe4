"""BPE training: learn merge rules from words or from a corpus.

- words: the incremental trainer; bpe_merges / train_trace / training_vocab
  on a list of words (character level), exactly the literal algorithm
- corpus: stream a corpus, count its distinct pre-tokens, train on them at
  the character or the byte level (the corpus jobs)

Above the engine and pre-tokenization (it takes the patterns from
`webapp.tokenizer.pretokenize`), below file formats and presets. Import names
from the modules (or the public ones from `webapp.tokenizer`); this module
exports nothing.
"""
