"""Two facts about the current process that forked workers need: its address space, and dying with its parent.

Used by the corpus counter's forked shards (webapp/tokenizer/training/shards.py),
the child an opened chat template renders in (webapp/tokenizer/chat/process.py)
and the job runner's forked job processes (webapp.jobs.runner), which set memory
limits relative to what is already mapped. Linux only where it matters; elsewhere
they do nothing. What it does not do: fork, or set limits.
"""

from __future__ import annotations

import ctypes
import ctypes.util


def vm_size_bytes() -> int:
    """This process's current address space (VmSize), 0 when /proc is missing."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def die_with_parent() -> None:
    """Linux: have the kernel kill this process if the one that forked it dies (SIGKILL included)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
    except (OSError, AttributeError):
        pass
