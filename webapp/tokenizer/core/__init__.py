"""The engine: exact BPE encoding and decoding, with traces, grouped by merge order.

list_order/ visits every rule once in list order (docs/algorithms.md);
library_order/ fires the best pair present next, as the libraries do; the
modules shared by both sit here. Which module holds what, and why the split:
docs/architecture.md and docs/engine.md. This module exports nothing.
"""
