"""Instructions and simulated cache misses of a layout's calls, counted by valgrind's callgrind.

A probe runs in a fresh process under callgrind (`python -m harness.metrics.callgrind
SPEC.json`). It loads the ring and keys, builds the layout with instrumentation
off, starts it (harness.core.native.compiled._counted.instrument, cext/counted.c), then for each
phase (build, batch, scalar) does the work once to warm the simulated caches
and once more inside `counted(...)`, which zeroes callgrind's counters before
the call and dumps them after it, so each phase gets a file of its own.

What is counted inside a phase:
- a layout with C lookups (its class names them in `c_functions`): only the
  time spent in those C functions (--toggle-collect), so Python and cffi call
  overhead is left out and the figure is the search itself;
- any other layout: the whole call (numpy's searchsorted with its column copy,
  or the Python loop of scalar lookups, interpreter included).

The cache geometry is fixed (GEOMETRY), so the figures do not depend on the
host's caches. Simulated caches are LRU and inclusive, with no hardware
prefetcher and no timing: they count misses, not their cost.
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.native.counted import BUILT_WITH_CALLGRIND, counted, instrument
from harness.core.tools import tool_problem
from harness.recipes.layouts.base import CFunctions

#: simulated caches, as valgrind's size,associativity,line-size: 32 KiB 8-way L1s and an
#: 8 MiB 16-way last level, 64-byte lines (a common desktop and server core)
GEOMETRY = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "8388608,16,64"}
#: the phases a probe can count, in the order it runs them
PHASES = ("build", "batch", "scalar")
#: where probes find layouts by name
DEFAULT_REGISTRY = "harness.recipes.layouts:LAYOUTS"
#: a probe's files, in the folder of its ring file (its working directory)
SPEC_NAME, OUT_NAME = "callgrind-probe.json", "callgrind.out"
INSTALL_HINT = ("install valgrind (Debian/Ubuntu: apt-get install valgrind), then reinstall "
                "ring-harness (pip install -e .) so that harness.core.native.compiled._counted is "
                "built with valgrind's header")


def geometry_text() -> str:
    """The cache geometry as callgrind's options, as results record it."""
    return " ".join(f"--{cache}={value}" for cache, value in GEOMETRY.items())


def valgrind_problem() -> str | None:
    """Why callgrind cannot count here, or None (the tool table's valgrind first: its
    programs, setarch among them, which runs each count at fixed addresses)."""
    if (problem := tool_problem("valgrind")) is not None:
        return f"{problem}, then reinstall ring-harness so that its counted marker is " \
            "built with valgrind's header"
    if not BUILT_WITH_CALLGRIND:
        return f"harness.core.native.compiled._counted was built without valgrind's header: " \
            f"{INSTALL_HINT}"
    return None


@functools.cache
def valgrind_version() -> str:
    completed = subprocess.run(["valgrind", "--version"], capture_output=True, text=True,
                               check=False)
    return completed.stdout.strip() or "valgrind (unknown version)"


@dataclass(frozen=True)
class Events:
    """Callgrind's event totals of one counted call."""

    instructions: int
    #: D1 read and write misses
    d1_misses: int
    #: last-level data read and write misses
    ll_misses: int

    def per(self, keys: int) -> dict[str, float]:
        return {"instructions_per_key": self.instructions / keys,
                "l1_misses_per_key": self.d1_misses / keys,
                "ll_misses_per_key": self.ll_misses / keys}


def parse_totals(text: str, source: str) -> Events:
    """The `events:` and `totals:` lines of a callgrind output file (trailing zeros are left
    out by callgrind, so missing events are 0)."""
    names: list[str] = []
    totals: list[int] = []
    for line in text.splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith("totals:"):
            totals = [int(value) for value in line.split()[1:]]
    if not names or "Ir" not in names:
        raise HarnessError(f"{source}: no callgrind events line with Ir (was --cache-sim on?)")
    values = dict(zip(names, totals + [0] * (len(names) - len(totals)), strict=True))
    return Events(values["Ir"], values.get("D1mr", 0) + values.get("D1mw", 0),
                  values.get("DLmr", 0) + values.get("DLmw", 0))


def callgrind_command(out_file: Path, toggles: Sequence[str]) -> list[str]:
    """valgrind's command line; with `toggles`, only time inside those functions is counted
    (--toggle-collect), without, everything between zero and dump."""
    return [
        "valgrind", "--tool=callgrind", "--cache-sim=yes", "--instr-atstart=no",
        *(f"--{cache}={value}" for cache, value in GEOMETRY.items()),
        *(f"--toggle-collect={name}" for name in toggles),
        f"--callgrind-out-file={out_file}",
    ]


def count_layout(layout_name: str, ring_file: Path, phases: Sequence[str],
                 scalar_keys: int, c_functions: CFunctions | None,
                 registry: str = DEFAULT_REGISTRY) -> dict[str, Events]:
    """Run one probe under callgrind in a fresh process; the events of each phase.

    The child finds the layout by name in `registry` (module:attribute, importable in
    the child), so that the gate's tests can count layouts with an injected regression."""
    workdir = ring_file.parent
    # Each probe sees the same process every time, so that its memory addresses, and so
    # the cache sets its data falls in, repeat: address randomization off (setarch -R), a
    # fixed environment, one thread, and fixed file names relative to its working directory. (With
    # randomized addresses, L1 misses moved by up to 4% between unchanged runs.)
    out_file, spec = workdir / OUT_NAME, workdir / SPEC_NAME
    # Sorted: callgrind 3.19 mismatches --toggle-collect names that are prefixes of each
    # other (ring_bucketed_lookup, ring_bucketed_lookup_many) unless the shorter comes
    # first; and a phase that counts nothing is refused below, whatever the cause.
    toggles = sorted({c_functions.of(p) for p in phases}) if c_functions else []
    spec.write_text(json.dumps({"layout": layout_name, "ring_file": ring_file.name,
                                "phases": list(phases), "scalar_keys": scalar_keys,
                                "registry": registry}))
    # One thread: numpy's BLAS would start a pool of threads at import, and when they run
    # depends on real time, while callgrind simulates one cache for all of them.
    environment = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONHASHSEED": "0",
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    if "PYTHONPATH" in os.environ:  # where a registry of the gate's tests is found
        environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
    completed = subprocess.run(
        ["setarch", platform.machine(), "-R", *callgrind_command(Path(OUT_NAME), toggles),
         sys.executable, "-m", "harness.metrics.callgrind", SPEC_NAME],
        capture_output=True, text=True, check=False, cwd=workdir, env=environment,
    )
    # One dump per phase, in order (and a last one at exit, of nothing measured).
    dumps = [Path(f"{out_file}.{n}") for n in range(1, len(phases) + 1)]
    try:
        if completed.returncode != 0 or not all(d.exists() for d in dumps):
            raise HarnessError(
                f"callgrind run of {layout_name} failed (exit {completed.returncode}): "
                f"{completed.stderr.strip()[-2000:]}")
        events = {phase: parse_totals(dump.read_text(), str(dump))
                  for phase, dump in zip(phases, dumps, strict=True)}
        for phase, counted in events.items():
            if counted.instructions == 0:
                function = c_functions.of(phase) if c_functions else "the whole call"
                raise HarnessError(f"callgrind counted no instruction in {function} "
                                   f"({layout_name}, {phase})")
        return events
    finally:
        for leftover in workdir.glob(f"{OUT_NAME}*"):
            leftover.unlink()
        spec.unlink()


def probe(layout_name: str, ring_file: Path, phases: Sequence[str], scalar_keys: int,
          registry: str) -> None:
    """The child: build, start instrumenting, then warm up and count each phase."""
    module, _, attribute = registry.partition(":")
    layout_class = getattr(importlib.import_module(module), attribute)[layout_name]
    with np.load(ring_file) as data:  # relative to the working directory
        positions, owners, keys = data["positions"], data["owners"], data["keys"]
    layout = layout_class.build(positions, owners)
    scalar = keys[:scalar_keys].tolist()
    lookup, lookup_many = layout.lookup, layout.lookup_many

    def scalar_loop() -> None:
        for key in scalar:
            lookup(key)

    work: dict[str, Callable[[], Any]] = {
        "build": lambda: layout_class.build(positions, owners),
        "batch": lambda: lookup_many(keys),
        "scalar": scalar_loop,
    }
    # A collection landing in one measured call would be counted as that layout's work,
    # and when one lands depends on allocations made at start-up, which vary a little.
    gc.collect()
    gc.disable()
    instrument()
    for phase in phases:
        work[phase]()
        counted(work[phase])


if __name__ == "__main__":
    arguments = json.loads(Path(sys.argv[1]).read_text())
    probe(arguments["layout"], Path(arguments["ring_file"]), arguments["phases"],
          arguments["scalar_keys"], arguments["registry"])

