"""Memory probes: what an action allocates, measured by memray, and fresh processes to
measure in.

`tracked` runs an action under memray and returns the bytes it left allocated and
its peak; `run_fresh` runs a probe module in a fresh Python process (so that forms
share no allocator state, caches or arenas), killed if the run dies. The memory
metric probes each form this way; comparison and removals probe theirs.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.errors import HarnessError


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * resource.getpagesize()


def tracked(action: Callable[[], Any], workdir: Path, label: str) -> tuple[Any, int, int]:
    """Run `action` under memray; return its result, bytes it left allocated, and its peak."""
    # memray only when memory is measured: a run without this metric (every run imports
    # the metric registry) skips its 30-50 ms import.
    import memray

    trace = workdir / f"{label}.memray"
    # trace_python_allocators: without it memray sees only pymalloc arenas, and objects
    # placed in arenas that existed before the build (tuples, ints) would go uncounted.
    with memray.Tracker(trace, file_format=memray.FileFormat.AGGREGATED_ALLOCATIONS,
                        trace_python_allocators=True):
        result = action()
    reader = memray.FileReader(trace)
    held = sum(r.size for r in reader.get_leaked_allocation_records(merge_threads=True))
    peak = int(reader.metadata.peak_memory)
    trace.unlink()
    return result, held, peak


def _die_with_parent() -> None:
    """In the child, before it starts: be killed if the run dies, even by SIGKILL (Linux's
    PR_SET_PDEATHSIG), so that no measurement goes on orphaned under PID 1."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


PR_SET_PDEATHSIG = 1


def run_fresh(module: str, args: list[str], spec_file: Path, name: str) -> str:
    """What `python -m module *args spec_file` prints, run in a fresh Python process; a
    HarnessError naming `name` if it fails.

    The child's temporary files (memray's traces) go to the folder of `spec_file`, the
    run's own, so that removing it removes them too; an interrupted run kills and reaps
    the child (subprocess.run does on any exception) before that folder is removed.
    """
    completed = subprocess.run(
        [sys.executable, "-m", module, *args, str(spec_file)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "TMPDIR": str(spec_file.parent)},
        preexec_fn=_die_with_parent,  # safe here: the harness starts no threads
    )
    if completed.returncode != 0:
        raise HarnessError(
            f"memory measurement of {name} failed (exit {completed.returncode}): "
            f"{completed.stderr.strip()[-2000:]}"
        )
    return completed.stdout


#: a fresh interpreter with the harness, numpy and memray imported: 42-43 MiB measured
PROBE_PROCESS_BYTES = 56 * 2**20
