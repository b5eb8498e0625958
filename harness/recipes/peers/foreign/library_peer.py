"""A foreign peer behind the C ABI (`ring_peer.h`): a shared library.

In a run, the library is loaded in a worker process (`core/native/foreign_worker.py`)
under a supervisor, as a process peer is (`LibraryPeer`): a library that calls exit() or
abort(), crashes, or never returns ends that process, not the run, and the run stops with
one line naming the peer, what happened (the signal or exit status) and during which
call, within the peer's `timeout`; everything the library started is killed with it.
Batches reach it through a shared region and are never copied; each route is timed in
the worker around the C call alone (`last_call_ns`), so its figures are the library's own.

The memory metric measures it in a worker of its own, supervised the same way
(`metrics/foreign/memory_worker.py`, a worker with the probe's requests added: `ask`).
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.peers.foreign.base import Batch
from harness.recipes.peers.foreign.process import PeerProcess, cpu_ns
from harness.recipes.peers.foreign.protocol import SharedLookup, SharedRoute, packed_keys
from harness.recipes.peers.foreign.shared_region import SharedRegion
from harness.recipes.peers.foreign.spec import ForeignPeerSpec

#: the module the worker runs (`python -m`)
WORKER = "harness.core.native.foreign_worker"


class LibraryPeer:
    """A ring a shared library built in its worker process; `close()` ends the worker."""

    #: how tables name this door: where the library's calls run (its build, every route,
    #: the C call timed; the memory probe's worker is another of these)
    DOOR: ClassVar[str] = "C ABI, in a worker"

    def __init__(self, spec: ForeignPeerSpec, servers: Sequence[Server], *,
                 worker: str = WORKER, environment: Mapping[str, str] | None = None) -> None:
        """`worker`: the module the worker runs (one that adds requests of its own);
        `environment`: variables set for it."""
        assert spec.library is not None
        self.spec, self._servers = spec, len(servers)
        self.identity = spec.library
        #: wall and CPU ns of the last route's C call, timed in the worker
        self.last_call_ns: tuple[int, int] | None = None
        self._region = SharedRegion()
        self._loaded: Batch | None = None
        try:
            self._worker = PeerProcess(
                spec.name, [sys.executable, "-m", worker, spec.library],
                spec.timeout_s, self._region.fd, refusals_as_said=True,
                environment=environment)
        except BaseException:
            self._region.close()
            raise
        try:
            self._worker.request(_frame(b"O"), "dlopen")
            reply = self._worker.request(_frame(b"B" + json.dumps({
                "names": [s.name for s in servers], "weights": [float(s.weight) for s in servers],
                "params": spec.params}).encode()), "ring_peer_build")
            built = json.loads(reply)
            self._entries, self._nbytes = int(built["entries"]), int(built["nbytes"])
            self._has_lookup = bool(built["has_lookup"])
        except BaseException:
            self.close()
            raise

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def entries(self) -> int:
        return max(0, self._entries)

    @property
    def nbytes(self) -> int:
        return max(0, self._nbytes)

    def cpu_ns(self) -> int | None:
        """CPU ns its worker has used so far, None if unreadable."""
        return cpu_ns(self._worker.pid)

    def route_packed(self, blob: bytes,
                     offsets: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        return self.route_prepared(self.prepare(blob, offsets))

    def prepare(self, blob: bytes, offsets: npt.NDArray[np.uint64],
                hashes: npt.NDArray[np.uint64] | None = None) -> Batch:
        if hashes is not None:
            lookup = SharedLookup.of(len(hashes))
            batch = Batch(blob, offsets, _frame(b"l" + struct.pack(
                "<IQQ", lookup.keys, lookup.hashes_at, lookup.owners_at)), hashes, lookup)
        else:
            route = SharedRoute.of(len(offsets) - 1, int(offsets[-1]))
            batch = Batch(blob, offsets, _frame(b"r" + struct.pack(
                "<IQQQ", route.keys, route.offsets_at, route.keys_at, route.owners_at)),
                shared=route)
        self._load(batch)
        return batch

    def route_prepared(self, batch: Batch) -> npt.NDArray[np.uint16]:
        if batch.hashes is not None and not self._has_lookup:
            raise HarnessError(f"peer {self.name!r}: is given key hashes (input = "
                               "'hashes') but exports no ring_peer_lookup")
        self._load(batch)
        what = "ring_peer_route" if batch.hashes is None else "ring_peer_lookup"
        reply = self._worker.request(batch.request, what)
        if len(reply) != 16:
            raise self._worker.failure(f"answered {what} with garbage")
        wall, cpu = struct.unpack("<QQ", reply)
        self.last_call_ns = (wall, cpu)
        assert batch.shared is not None
        owners = np.array(self._region.view(np.uint16, batch.shared.owners_at, batch.keys),
                          np.uint16)
        if len(owners) and int(owners.max()) >= self._servers:
            at = int(np.argmax(owners >= self._servers))
            raise HarnessError(f"peer {self.name!r}: routed key {at} to owner "
                               f"{int(owners[at])}, out of range for {self._servers} servers")
        return owners

    def _load(self, batch: Batch) -> None:
        """Write the batch into the region unless it is there (mapping it anew in the
        worker when the region grew)."""
        if batch is self._loaded:
            return
        assert batch.shared is not None
        self._loaded = None
        if self._region.fit(batch.shared.size):
            self._worker.request(_frame(b"S" + struct.pack("<Q", self._region.size)), "mmap")
        self._region.load(batch)
        self._loaded = batch

    def route_many(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return self.route_packed(*packed_keys(keys))

    def lookup_key(self, key: str) -> int:
        return int(self.route_many([key.encode()])[0])

    def ask(self, body: bytes, what: str, batch: Batch | None = None) -> bytes:
        """The reply to a request the worker adds (within the peer's timeout, the
        library's failures one line as any call's), with `batch` in the region first."""
        if batch is not None:
            self._load(batch)
        return self._worker.request(_frame(body), what)

    def close(self) -> None:
        """End the worker (and whatever the library started), then drop the region."""
        self._worker.close()
        self._region.close()


def _frame(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body
