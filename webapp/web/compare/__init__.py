"""Compare: two tokenizers on one text, by the API and in the Bytes page's comparison card (docs/pages.md#comparing-two-tokenizers)."""
