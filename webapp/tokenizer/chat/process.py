"""Rendering an opened (untrusted) chat template in a child process that can be killed.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
import math
import os
import resource
import select
import signal
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from webapp.tokenizer.chat import templates, watchdog
from webapp.tokenizer.chat.templates import DEFAULT_CHAT_LIMITS, FIELD, ChatLimits, ChatTemplate
from webapp.tokenizer.errors import TokenizerError
from webapp.system.processes import die_with_parent, vm_size_bytes

#: How long after the rendering's own deadline the worker kills the child (the child's watchdog,
#: which names the template's line, normally stops it first).
GRACE_SECONDS = 0.5

_CHUNK = 1 << 20


class IsolatedFailure(Exception):
    """The child ended without an answer: `kind` is "time", "memory", "output" or "crash"."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail


def _child_setup(seconds: float, memory_mb: int) -> None:
    die_with_parent()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
                signal.SIGWINCH, signal.SIGCHLD, signal.SIGALRM, signal.SIGXCPU):
        signal.signal(sig, signal.SIG_DFL)
    allowed = math.ceil(seconds + GRACE_SECONDS) + 1
    signal.alarm(allowed)  # (the default action of SIGALRM ends the process)
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime) + allowed
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mapped = vm_size_bytes()
    if mapped:
        limit = mapped + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    watchdog.WATCHDOG.reset_after_fork()
    templates.forget_compiled_in_child()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:_CHUNK])
        view = view[written:]


def _run_child(write_fd: int, func: Callable[[], Any], seconds: float, memory_mb: int) -> int:
    """In the child: set the limits, run, write the answer; the exit code."""
    try:
        _child_setup(seconds, memory_mb)
        try:
            answer: dict[str, Any] = {"ok": func()}
        except MemoryError:
            answer = {"memory": True}
        except TokenizerError as exc:
            answer = {"error": [exc.message, exc.field, exc.location]}
        _write_all(write_fd, json.dumps(answer, ensure_ascii=True).encode("ascii"))
        return 0
    except MemoryError:
        return 71
    except BaseException:  # anything at all: the worker reports a crash, the child never returns to its caller
        return 70


def run_isolated(func: Callable[[], Any], *, seconds: float, memory_mb: int, max_bytes: int) -> Any:
    """`func()` run in a forked child under the limits; its JSON-able result, a TokenizerError it raised,
    or an IsolatedFailure (killed at the time limit, out of memory, too much output, crashed)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 70
        try:
            os.close(read_fd)
            code = _run_child(write_fd, func, seconds, memory_mb)
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks: list[bytes] = []
    received = 0
    failure: IsolatedFailure | None = None
    deadline = time.monotonic() + seconds + GRACE_SECONDS
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = IsolatedFailure("time")
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            data = os.read(read_fd, _CHUNK)
            if not data:
                break
            received += len(data)
            if received > max_bytes:
                failure = IsolatedFailure("output", f"over {max_bytes:,} bytes")
                break
            chunks.append(data)
    finally:
        os.close(read_fd)
        if failure is not None:
            _kill(pid)
        _, status = os.waitpid(pid, 0)
    if failure is not None:
        raise failure
    if not chunks:
        code = os.waitstatus_to_exitcode(status)
        raise IsolatedFailure("memory" if code in (71, -signal.SIGSEGV, -signal.SIGKILL, -signal.SIGABRT)
                              else "time" if code in (-signal.SIGALRM, -signal.SIGXCPU) else "crash",
                              f"exit code {code}")
    answer = json.loads(b"".join(chunks))  # (written by this module: a flat object)
    if "memory" in answer:
        raise IsolatedFailure("memory")
    if "error" in answer:
        message, field, location = answer["error"]
        raise TokenizerError(message, field=field, location=location)
    return answer["ok"]


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def render_chat_isolated(template: ChatTemplate, messages: Iterable[Mapping[str, Any]], *,
                         add_generation_prompt: bool = False, tools: Sequence[Mapping[str, Any]] | None = None,
                         limits: ChatLimits = DEFAULT_CHAT_LIMITS) -> str:
    """`render_chat` in a child process with a memory limit and a hard time limit (errors: field chat_template)."""
    templates.check_template_size(templates.source_for(template, tools), limits)
    listed = [dict(m) for m in messages]
    try:
        text = run_isolated(lambda: templates.render_chat(template, listed, add_generation_prompt=add_generation_prompt,
                                                     tools=tools, limits=limits),
                            seconds=limits.seconds, memory_mb=limits.memory_mb,
                            max_bytes=12 * limits.rendered_chars + 65_536)
    except IsolatedFailure as exc:
        raise TokenizerError(_failure_message(exc, limits), field=FIELD) from None
    if not isinstance(text, str):
        raise TokenizerError("chat_template: the rendering process gave no text", field=FIELD)
    return text


def _failure_message(exc: IsolatedFailure, limits: ChatLimits) -> str:
    if exc.kind == "time":
        return (f"chat_template: refused: rendering took over {limits.seconds:g} s, the limit "
                "(setting LIMIT_CHAT_SECONDS); the rendering process was stopped")
    if exc.kind == "memory":
        return (f"chat_template: refused: the rendering needed more than {limits.memory_mb:,} MB, the limit "
                "(setting LIMIT_CHAT_MEMORY_MB)")
    if exc.kind == "output":
        return "chat_template: refused: the rendering process sent more than the rendered text can be"
    return f"chat_template: the rendering process ended without an answer ({exc.detail})"
