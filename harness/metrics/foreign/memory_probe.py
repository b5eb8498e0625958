"""A library peer's memory, measured in a supervised worker of its own
(`memory_worker.py`): the harness's side of the probe.

A fresh worker per library, as a layout's probe is a fresh process: built once unmeasured
(loading the library and its own libraries is not its ring; the keys are packed, or
hashed, for it unmeasured too, as a layout's keys are), then a build and a route of every
key under memray, and another build under tracemalloc. Each is one request with the
peer's `timeout`; a library that fails in any ends in the one line of a failed call, its
worker and whatever it started killed, memray's traces in a folder removed here.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.core.servers import Server
from harness.recipes.peers.foreign import ForeignPeerSpec
from harness.recipes.peers.foreign.claims import batch_for
from harness.recipes.peers.foreign.library_peer import LibraryPeer

#: the module the probe's worker runs
MEMORY_WORKER = "harness.metrics.foreign.memory_worker"


def measure_library(spec: ForeignPeerSpec, servers: Sequence[Server], keys: Sequence[str],
                    workdir: Path) -> dict[str, Any]:
    """The memory metric's figures (`metrics/memory.py`'s `Memory`, as a record) of
    `spec`'s library built for `servers` and routing `keys`."""
    # The worker's TMPDIR (memray's traces) is a folder of ours, removed here whatever
    # became of the worker: one killed at its deadline removes nothing itself.
    with tempfile.TemporaryDirectory(prefix="ring-harness-memray-", dir=workdir) as traces:
        peer = LibraryPeer(spec, servers, worker=MEMORY_WORKER,
                           environment={"TMPDIR": traces})
        try:
            batch = batch_for(peer, servers, [key.encode() for key in keys])
            build = json.loads(peer.ask(b"Pb", "ring_peer_build (measured by memray)"))
            route = json.loads(peer.ask(b"Pr" + batch.request[4:],
                                        "ring_peer_route (measured by memray)", batch))
            seen = json.loads(peer.ask(b"Pt", "ring_peer_build (measured by tracemalloc)"))
        finally:
            peer.close()
    held, entries = int(build["held"]), peer.entries
    return {
        "structure_bytes": held,
        # A foreign library may not know its point count (0): no figure per entry then.
        "bytes_per_entry": held / entries if entries else 0.0,
        "build_peak_bytes": int(build["peak"]),
        "lookup_peak_bytes": int(route["peak"]),
        "rss_before_bytes": int(build["rss_before"]),
        "rss_after_bytes": int(build["rss_after"]),
        "tracemalloc_bytes": int(seen["tracemalloc"]),
    }
