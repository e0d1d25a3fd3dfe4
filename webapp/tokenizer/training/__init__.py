"""BPE training: learn merge rules from words or from a streamed corpus.

What it does not do: HTTP or jobs (the web layer runs corpus training as a
job). Import names from the modules (or the public ones from
`webapp.tokenizer`). Map: docs/architecture.md.
"""
