"""The Vocabulary feature: the vocab API, the unreachable-tokens job kind and the Vocabulary page."""
