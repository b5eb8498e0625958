"""Memory of one layout, measured at the allocator by memray in a fresh process.

Each (ring, layout) pair is measured in its own subprocess
(`python -m harness.metrics.memory layout NAME RING.npz`), so that layouts do
not share allocator state, caches or arenas. A peer (a third-party ring
library) is measured the same way from its servers and key names
(`... peer NAME SPEC.json`); its lookup peak covers looking the keys up one by
one, as it has no batch lookup. memray sees every allocation,
including those made in C by malloc (cffi) and numpy's data buffers.

- `structure_bytes`: bytes allocated while building and still held after
  (the layout's own memory; the input arrays existed before and do not count).
- `build_peak_bytes`: the most memory held at any moment during the build.
- `lookup_peak_bytes`: the most extra memory held during one batch lookup of
  the workload's keys; it includes the result (2 bytes a key) and any hidden
  copy of the ring a layout makes (numpy-packed copies its hash column).
- `rss_before_bytes`, `rss_after_bytes`: resident set size around the build,
  context only (lazy pages and allocator caching blur it).
- `tracemalloc_bytes`: what Python's tracemalloc sees of the same build (its
  own pass, after memray's, since each would count the other's bookkeeping):
  Python objects and numpy's buffers (numpy reports them to tracemalloc), but
  not memory that C code takes from malloc, such as the cffi layouts' arrays.
  A cross-check, and a warning about what tracemalloc-based tools miss.
"""

from __future__ import annotations

import functools
import json
import resource
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import memray
import numpy as np
import numpy.typing as npt

from harness.errors import HarnessError


@dataclass(frozen=True)
class Memory:
    layout: str
    entries: int
    structure_bytes: int
    bytes_per_entry: float
    build_peak_bytes: int
    lookup_peak_bytes: int
    rss_before_bytes: int
    rss_after_bytes: int
    tracemalloc_bytes: int

    def as_record(self) -> dict[str, object]:
        return asdict(self)


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * resource.getpagesize()


def _tracked(action: Callable[[], Any], workdir: Path, label: str) -> tuple[Any, int, int]:
    """Run `action` under memray; return its result, bytes it left allocated, and its peak."""
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


def _measure_built(
    name: str, build: Callable[[], Any], lookup_all: Callable[[Any], object]
) -> Memory:
    with tempfile.TemporaryDirectory(prefix="ring-harness-memray-") as tmp:
        workdir = Path(tmp)
        rss_before = rss_bytes()
        built, held, build_peak = _tracked(build, workdir, "build")
        rss_after = rss_bytes()
        _, _, lookup_peak = _tracked(functools.partial(lookup_all, built), workdir, "lookup")
    entries = int(built.entries)
    del built  # one structure at a time: the tracemalloc pass builds its own
    tracemalloc.start()
    try:
        rebuilt = build()
        tracemalloc_bytes = tracemalloc.get_traced_memory()[0]
        del rebuilt
    finally:
        tracemalloc.stop()
    return Memory(
        layout=name,
        entries=entries,
        structure_bytes=held,
        bytes_per_entry=held / entries,
        build_peak_bytes=build_peak,
        lookup_peak_bytes=lookup_peak,
        rss_before_bytes=rss_before,
        rss_after_bytes=rss_after,
        tracemalloc_bytes=tracemalloc_bytes,
    )


def measure_layout_here(layout_name: str, ring_file: Path) -> Memory:
    """Measure a layout in this process (the subprocess entry point calls this)."""
    from harness.layouts import get_layout

    layout_class = get_layout(layout_name)
    with np.load(ring_file) as data:
        positions, owners, keys = data["positions"], data["owners"], data["keys"]
    return _measure_built(
        layout_name, lambda: layout_class.build(positions, owners),
        lambda layout: layout.lookup_many(keys),
    )


def measure_peer_here(peer_name: str, spec_file: Path) -> Memory:
    """Measure a peer library's ring in this process, from servers and key names."""
    from harness.generator import Server
    from harness.peers import get_peer

    peer_class = get_peer(peer_name)
    spec = json.loads(spec_file.read_text())
    servers = [Server(name, weight) for name, weight in spec["servers"]]
    keys: list[str] = spec["keys"]
    return _measure_built(
        peer_name, lambda: peer_class.build(servers),
        lambda peer: [peer.lookup_key(key) for key in keys],
    )


def measure_in_subprocess(kind: str, name: str, spec_file: Path) -> Memory:
    """Measure one layout or peer in a fresh Python process; raise HarnessError if it fails."""
    completed = subprocess.run(
        [sys.executable, "-m", "harness.metrics.memory", kind, name, str(spec_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise HarnessError(
            f"memory measurement of {name} failed (exit {completed.returncode}): "
            f"{completed.stderr.strip()[-2000:]}"
        )
    return Memory(**json.loads(completed.stdout))


def save_ring_for_probe(
    path: Path,
    positions: npt.NDArray[np.unsignedinteger],
    owners: npt.NDArray[np.uint16],
    keys: npt.NDArray[np.unsignedinteger],
) -> None:
    np.savez(path, positions=positions, owners=owners, keys=keys)


def save_peer_spec(path: Path, servers: list[tuple[str, float]], keys: list[str]) -> None:
    path.write_text(json.dumps({"servers": servers, "keys": keys}))


if __name__ == "__main__":
    kind, name, spec = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    measure = measure_layout_here if kind == "layout" else measure_peer_here
    print(json.dumps(measure(name, spec).as_record()))
