"""Issue 44, row 8, on a real gunicorn server with two workers: reading a large vocabulary's
unreachable tokens (its job queued once, no job worker running) is not charged as a write."""

from __future__ import annotations

import json

import pytest

from webapp.tokenizer import is_installed

pytestmark = pytest.mark.skipif(not is_installed("r50k_base"), reason="the r50k_base preset is not installed")


def test_row8_reads_of_the_unreachable_tokens_are_not_writes_across_workers(gunicorn_factory) -> None:
    server = gunicorn_factory(workers=2, extra_env={"PLAYGROUND_RATE_LIMIT_WRITES": "20/minute;300/hour",
                                                    "PLAYGROUND_JOB_VOCAB_TOKENS": "1000"}).start()
    answers = [server.request("GET", "/api/tokenizers/r50k_base/unreachable") for _ in range(25)]
    assert [status for status, _h, _b in answers] == [202] * 25, answers[-1][2][:300]
    assert len({json.loads(body)["job"] for _s, _h, body in answers}) == 1
    pages = [server.request("GET", "/vocab?tokenizer=r50k_base")[0] for _ in range(25)]
    assert pages == [200] * 25
