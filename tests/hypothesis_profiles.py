"""Hypothesis profiles: `examples(n)` is a test's example count under the loaded one.

Every property test asks for `examples(n)`: n under the default profile
("playground", the counts the suite has always run), ten times n under
`pytest --hypothesis-profile=deep` (for a long run before a release), and a
tenth of n, at least 5, under "quick" (a smoke run while editing).
"""

from __future__ import annotations

from hypothesis import settings

#: Hypothesis' own default; a profile's max_examples over this scales every test alike.
BASE_EXAMPLES = 100

settings.register_profile("playground", max_examples=BASE_EXAMPLES, deadline=None)
settings.register_profile("deep", max_examples=10 * BASE_EXAMPLES, deadline=None)
settings.register_profile("quick", max_examples=BASE_EXAMPLES // 10, deadline=None)
settings.load_profile("playground")


def examples(n: int) -> int:
    """`n` scaled by the loaded profile (read when the test module is imported,
    after pytest has loaded `--hypothesis-profile`)."""
    scaled = n * settings.default.max_examples // BASE_EXAMPLES
    return max(min(n, 5), scaled)
