"""The peak resident memory of a command and every process it starts, measured from
outside, every few milliseconds: the larger of the process tree's summed proportional
set size (PSS: a page shared by two processes counts half in each) and the largest
high-water mark of resident pages (VmHWM) of any one process in it, which covers a spike
between two samples. (The kernel's rusage of the command is no use: its high-water mark
includes the image of the process that forked it, before the command's exec.)"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):  # the process or one of its threads ended meanwhile
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _kib(text: str, field: str) -> int:
    return int(text.split(f"\n{field}:", 1)[1].split()[0]) * 1024


def tree_memory(root: int) -> int:
    """The larger of the tree's summed PSS and its largest process's VmHWM, now."""
    total, largest, stack = 0, 0, [(root, b"")]
    while stack:
        pid, parent_command = stack.pop()
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            # A child forked but not yet exec'd is a copy of its parent: the parent was read
            # before the fork, when it held those pages alone, so counting the copy's share
            # too would count them one and a half times (seen: 124 MiB read for an 84 MiB
            # run that starts git). The copy's own memory is counted once it has exec'd.
            if command == parent_command:
                continue
            total += _kib(Path(f"/proc/{pid}/smaps_rollup").read_text(), "Pss")
            largest = max(largest, _kib(Path(f"/proc/{pid}/status").read_text(), "VmHWM"))
        except (OSError, IndexError, ValueError):
            continue
        stack += [(child, command) for child in _children(pid)]
    return max(total, largest)


def run_measured(command: Sequence[str], *, interval: float = 0.004,
                 timeout: float = 900.0) -> tuple[int, int, str]:
    """(exit status, peak bytes of the whole tree, stderr) of `command`; a command still
    running at `timeout` is killed (status -9)."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        sampled, deadline = 0, time.monotonic() + timeout
        while True:
            sampled = max(sampled, tree_memory(process.pid))
            pid, status = os.waitpid(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
            time.sleep(interval)
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        text = errors.read().decode(errors="replace")
    return process.returncode, sampled, text
