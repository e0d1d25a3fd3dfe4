"""The child process an opened chat template renders in (webapp/tokenizer/chat/process.py).

The size predictions of chat/bounds.py are the first line; these tests turn
them off (limits far above anything the machine has) to show the second
line on its own: the hard time limit holds inside C code and inside Jinja's
own Python loops, the memory limit ends the child and never the caller, and
the caller's memory does not grow.
"""

from __future__ import annotations

import os
import time

import pytest

from webapp.tokenizer import ChatTemplate, TokenizerError, preset_chat_template, render_chat
from webapp.tokenizer.chat.templates import ChatLimits
from webapp.tokenizer.chat.process import GRACE_SECONDS, IsolatedFailure, render_chat_isolated, run_isolated

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi <b>!"}]

#: The first line off: only the child's memory and time limits remain.
NO_PREDICTIONS = dict(rendered_chars=10**12, built_chars=10**15)
#: Time allowed beyond the limit and its grace for forking, killing and reaping the child on a loaded
#: machine (CI shares two cores); far below the 30 s the template would otherwise take.
STARTUP_SLACK = 1.5


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def test_the_child_renders_what_the_worker_renders() -> None:
    for name in ("qwen3", "llama3"):
        template = preset_chat_template(name)
        if template is None:
            pytest.skip(f"{name}'s package is not installed")
        for prompt in (False, True):
            assert render_chat_isolated(template, MESSAGES, add_generation_prompt=prompt) == \
                render_chat(template, MESSAGES, add_generation_prompt=prompt)


def test_a_template_error_comes_back_with_its_line() -> None:
    with pytest.raises(TokenizerError) as caught:
        render_chat_isolated(ChatTemplate("a\n{{ raise_exception('no ' ~ messages[0].role) }}"), MESSAGES)
    assert caught.value.field == "chat_template" and caught.value.location == {"line": 2}
    assert caught.value.message == "chat_template: the template raised an exception at line 2: no system"


def test_a_lone_surrogate_made_by_the_template_survives_the_pipe() -> None:
    assert render_chat_isolated(ChatTemplate("x\ud800y"), MESSAGES) == "x\ud800y"


@pytest.mark.alone
def test_the_hard_time_limit_holds_inside_c_code() -> None:
    start = time.perf_counter()
    with pytest.raises(IsolatedFailure) as caught:
        run_isolated(lambda: time.sleep(30), seconds=0.3, memory_mb=64, max_bytes=1000)
    took = time.perf_counter() - start
    assert caught.value.kind == "time"
    # (the slack covers starting and reaping the child on a busy machine; the sleep itself is 30 s)
    assert 0.3 <= took < 0.3 + GRACE_SECONDS + STARTUP_SLACK, took


@pytest.mark.alone
def test_the_hard_time_limit_holds_inside_lipsum_with_the_predictions_off() -> None:
    """Jinja's lipsum is a plain Python loop outside the template's code: the watchdog cannot stop it."""
    start = time.perf_counter()
    with pytest.raises(TokenizerError) as caught:
        render_chat_isolated(ChatTemplate("{{ lipsum(n=1000, min=99999, max=100000)|length }}"), MESSAGES,
                             limits=ChatLimits(seconds=0.5, **NO_PREDICTIONS))
    took = time.perf_counter() - start
    assert "took over 0.5 s" in caught.value.message and "LIMIT_CHAT_SECONDS" in caught.value.message
    assert took < 0.5 + GRACE_SECONDS + STARTUP_SLACK, took


def test_the_memory_limit_ends_the_child_never_the_caller() -> None:
    before = rss_bytes()
    doubling = ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
                "{{ ns.s|length }}")
    with pytest.raises(TokenizerError) as caught:
        render_chat_isolated(ChatTemplate(doubling), MESSAGES, limits=ChatLimits(memory_mb=64, **NO_PREDICTIONS))
    assert caught.value.field == "chat_template"
    assert "needed more than 64 MB" in caught.value.message and "LIMIT_CHAT_MEMORY_MB" in caught.value.message
    assert rss_bytes() - before < 32 * 1024 * 1024  # the caller did not build the string


def test_a_child_that_allocates_in_c_or_crashes_is_a_clear_failure() -> None:
    with pytest.raises(IsolatedFailure) as caught:
        run_isolated(lambda: len(bytearray(4 * 1024**3)), seconds=5, memory_mb=64, max_bytes=1000)
    assert caught.value.kind == "memory"
    with pytest.raises(IsolatedFailure) as caught:
        run_isolated(lambda: os._exit(3), seconds=5, memory_mb=64, max_bytes=1000)
    assert caught.value.kind == "crash" and "exit code 3" in caught.value.detail


def test_too_much_output_is_cut_off() -> None:
    with pytest.raises(IsolatedFailure) as caught:
        run_isolated(lambda: "x" * 100_000, seconds=5, memory_mb=64, max_bytes=1000)
    assert caught.value.kind == "output"


def test_the_child_is_reaped_and_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    forked: list[int] = []
    real_fork = os.fork

    def recording_fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording_fork)
    for _ in range(3):
        with pytest.raises(IsolatedFailure):
            run_isolated(lambda: time.sleep(30), seconds=0.05, memory_mb=64, max_bytes=1000)
    assert run_isolated(lambda: 7, seconds=5, memory_mb=64, max_bytes=1000) == 7
    assert len(forked) == 4
    for pid in forked:  # killed or finished, and reaped: no process, not even a zombie
        assert not os.path.exists(f"/proc/{pid}"), pid
