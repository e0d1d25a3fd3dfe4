"""The seeds' list order: every rule of a merge list visited once, in list order (docs/algorithms.md).

At the byte and the character level, with traces and the numpy batch. The
library orders are in core/library_order/, which this package never
imports. This package exports nothing (import from the modules). Map:
docs/architecture.md.
"""
