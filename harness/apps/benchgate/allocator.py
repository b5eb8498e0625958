"""Pin glibc malloc's thresholds for the benchmark process.

glibc serves a block above its mmap threshold with a fresh mmap (and page
faults on first touch), a smaller one from its heap, and by default it moves
that threshold, and the heap trim threshold, as blocks are freed. Whether a
128 KiB ring build faults in fresh pages then depends on what the process
freed before: the same build timed 0.9x or 2.5x its reference from one run
to the next. Fixed thresholds make that choice the same in every run, so
build timings compare computation, not allocator history.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX): blocks up to it
#: come from the heap, larger ones always from mmap
MMAP_THRESHOLD = 32 * 1024 * 1024
#: keep freed heap memory instead of returning it (and faulting it in again)
TRIM_THRESHOLD = 1024 * 1024 * 1024


def pin_malloc_thresholds() -> bool:
    """Fix glibc's mmap and trim thresholds; False where the C library is not glibc."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
