"""Parity: where two tokenizers part on a list of texts, and at which stage, by the API and on the Parity page (docs/parity.md)."""
