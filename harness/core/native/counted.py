"""Bindings of cext/counted.c: the hooks callgrind counts by.

`counted(f)` zeroes callgrind's counters, calls f() and dumps them; `instrument()`
starts callgrind's instrumentation (both do nothing but their call outside
valgrind). They are the C functions themselves, not wrappers, so that no Python
frame of ours is inside a counted region. `BUILT_WITH_CALLGRIND` is False when
valgrind's header was missing at build time: then nothing can be counted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import harness.core.native.compiled._counted as _counted

BUILT_WITH_CALLGRIND: bool = bool(_counted.CALLGRIND)
counted: Callable[[Callable[[], Any]], Any] = _counted.counted
instrument: Callable[[], None] = _counted.instrument
