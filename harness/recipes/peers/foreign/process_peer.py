"""A foreign peer in its own process, spoken to by the process protocol (`protocol`).

Built at start: HELLO (the protocol version it speaks and what it supports), then BUILD,
with the process's PSS read from /proc before and after, since its memory is not in our
process for memray to see. It also reports what it believes: MEMORY (its own byte count)
and TIME (R repeats of a batch on its own monotonic clock), which the report labels as
the peer's own figures, apart from those we time through the pipe.

A peer that answers HELLO with version 2 and the SHARED_BATCHES feature takes its batches
in a shared region (`SharedRegion`): a prepared batch is written there once, and each
round sends only where it lies, so the timing rounds time the same thing in both modes
(a prepared request, its reply, the owners copied out and checked), less the copies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.peers.foreign import protocol
from harness.recipes.peers.foreign.base import Batch
from harness.recipes.peers.foreign.process import PeerProcess, cpu_ns, pss_bytes
from harness.recipes.peers.foreign.protocol import (
    ProtocolError,
    SharedLookup,
    SharedRoute,
    packed_keys,
)
from harness.recipes.peers.foreign.shared_region import SharedRegion
from harness.recipes.peers.foreign.spec import ForeignPeerSpec

T = TypeVar("T")


class ProcessPeer:
    """A peer process, started and built for the servers; `close()` ends it."""

    #: how tables name this door
    DOOR: ClassVar[str] = "process protocol (pipe)"

    def __init__(self, spec: ForeignPeerSpec, servers: Sequence[Server], *,
                 shared_batches: bool = True) -> None:
        """`shared_batches=False` keeps a protocol-2 peer to version 1's batches (to
        compare the two)."""
        assert spec.command is not None
        self.spec, self._servers = spec, [s.name for s in servers]
        region: SharedRegion | None = SharedRegion() if shared_batches else None
        #: the batch the region holds now (a peer's timing rounds reuse one)
        self._loaded: Batch | None = None
        try:
            self._process = PeerProcess(spec.name, spec.command, spec.timeout_s,
                                        None if region is None else region.fd)
        except BaseException:
            if region is not None:
                region.close()
            raise
        try:
            self.hello = self._parse(protocol.parse_hello,
                                     self._process.request(protocol.hello(), "HELLO",
                                                           protocol.reply_limit("HELLO")))
            if self.hello.version not in protocol.VERSIONS:
                raise self._process.failure(
                    f"speaks protocol version {self.hello.version}, this harness speaks "
                    f"{' and '.join(map(str, protocol.VERSIONS))}")
            if region is not None and not (
                    self.hello.version >= 2
                    and self.hello.supports(protocol.FEATURE_SHARED_BATCHES)):
                region.close()
                region = None
            self._region = region
            self.identity = f"{self.hello.name} {self.hello.library_version}".strip()
            self.pss_before_build = pss_bytes(self._process.pid)
            reply = self._process.request(protocol.build(
                self._servers, [float(s.weight) for s in servers], spec.params), "BUILD",
                protocol.reply_limit("BUILD"))
            self._entries = self._parse(lambda p: protocol.parse_count(p, "BUILD"), reply)
            self.pss_after_build = pss_bytes(self._process.pid)
        except BaseException:
            self._process.stop()
            if region is not None:
                region.close()
            raise

    @property
    def shares_batches(self) -> bool:
        """Whether batches go through the shared region (protocol 2), not the pipe."""
        return self._region is not None

    @property
    def region_bytes(self) -> int:
        """The shared region's size now (mapped, so no allocator counts it); 0 without."""
        return 0 if self._region is None else self._region.size

    def _parse(self, parse: Callable[[bytes], T], payload: bytes) -> T:
        try:
            return parse(payload)
        except ProtocolError as exc:
            raise self._process.failure(str(exc)) from None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def entries(self) -> int:
        return max(0, self._entries)

    def supports(self, feature: int) -> bool:
        return self.hello.supports(feature)

    @property
    def server_names(self) -> tuple[str, ...]:
        """The servers in the order its owners number them (an added one goes last)."""
        return tuple(self._servers)

    def owners_in(self, owners: npt.NDArray[np.uint16],
                  servers: Sequence[Server]) -> npt.NDArray[np.uint16]:
        """Its owners (indexes of the servers it holds, in its own order, which its ADD and
        REMOVE change: a removed server added back comes last) as indexes of the same
        server names in `servers`; a HarnessError naming it if it holds other servers."""
        index = {server.name: i for i, server in enumerate(servers)}
        if len(self._servers) != len(servers) or any(n not in index for n in self._servers):
            shown = ", ".join(repr(n) for n in self._servers[:5])
            raise HarnessError(f"peer {self.name!r}: holds servers {shown}"
                               f"{', ...' if len(self._servers) > 5 else ''}, not the "
                               f"{len(servers)} servers it is compared with")
        ours = np.array([index[name] for name in self._servers], dtype=np.uint16)
        mapped: npt.NDArray[np.uint16] = ours[owners]
        return mapped

    @property
    def nbytes(self) -> int:
        """What the peer says its structure holds (MEMORY); 0 if it does not say."""
        if not self.supports(protocol.FEATURE_MEMORY):
            return 0
        reply = self._process.request(protocol.memory(), "MEMORY",
                                      protocol.reply_limit("MEMORY"))
        return max(0, self._parse(lambda p: protocol.parse_count(p, "MEMORY"), reply))

    @property
    def pss(self) -> int | None:
        return pss_bytes(self._process.pid)

    def cpu_ns(self) -> int | None:
        """CPU ns its process has used so far (its threads'), None if unreadable."""
        return cpu_ns(self._process.pid)

    def route_packed(self, blob: bytes,
                     offsets: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        return self.route_prepared(self.prepare(blob, offsets))

    def prepare(self, blob: bytes, offsets: npt.NDArray[np.uint64],
                hashes: npt.NDArray[np.uint64] | None = None) -> Batch:
        if self._region is not None:
            # Written into the region now, before any timing, as a library's keys are
            # packed before; routing another batch in between writes it again.
            if hashes is not None:
                lookup = SharedLookup.of(len(hashes))
                batch = Batch(blob, offsets, protocol.lookup_shared(lookup), hashes, lookup)
            else:
                route = SharedRoute.of(len(offsets) - 1, int(offsets[-1]))
                batch = Batch(blob, offsets, protocol.route_shared(route), shared=route)
            self._load(batch)
            return batch
        if hashes is not None:
            return Batch(blob, offsets, protocol.lookup(hashes), hashes)
        return Batch(blob, offsets, protocol.route(blob, offsets))

    def route_prepared(self, batch: Batch) -> npt.NDArray[np.uint16]:
        what = "ROUTE" if batch.hashes is None else "LOOKUP"
        if batch.shared is None:
            reply = self._process.request(batch.request, what,
                                          protocol.reply_limit(what, keys=batch.keys))
            return self._parse(lambda p: protocol.parse_owners(
                p, batch.keys, len(self._servers), what), reply)
        what += "_SHARED"
        self._load(batch)
        # The owners are in the region: the reply holds only their count.
        reply = self._process.request(batch.request, what, protocol.reply_limit(what))
        self._parse(lambda p: protocol.parse_shared_count(p, batch.keys, what), reply)
        assert self._region is not None
        # Copied out: the region is the next batch's, and a peer could still write to it.
        owners = np.array(self._region.view(np.uint16, batch.shared.owners_at, batch.keys),
                          np.uint16)
        try:
            protocol.check_owners(owners, len(self._servers), what)
        except ProtocolError as exc:
            raise self._process.failure(str(exc)) from None
        return owners

    def _load(self, batch: Batch) -> None:
        """Write the batch into the region, unless it is there already (telling the peer
        the region's new size first when it had to grow)."""
        if batch is self._loaded:
            return
        assert self._region is not None and batch.shared is not None
        self._loaded = None
        if self._region.fit(batch.shared.size):
            reply = self._process.request(protocol.share(self._region.size), "SHARE",
                                          protocol.reply_limit("SHARE"))
            self._parse(lambda p: protocol.parse_empty(p, "SHARE"), reply)
        self._region.load(batch)
        self._loaded = batch

    def route_many(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return self.route_packed(*packed_keys(keys))

    def lookup_key(self, key: str) -> int:
        return int(self.route_many([key.encode()])[0])

    def lookup_hashes(self, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        return self.route_prepared(self.prepare(
            b"", np.zeros(len(hashes) + 1, np.uint64), hashes))

    def self_timed(self, blob: bytes, offsets: npt.NDArray[np.uint64],
                   repeats: int) -> list[float]:
        """ns per key of each of `repeats` routes of the batch, by the peer's own clock:
        from the region when it shares batches, as our rounds route it, else the pipe's."""
        if self._region is None:
            request, what = protocol.time(repeats, blob, offsets), "TIME"
        else:
            batch = self.prepare(blob, offsets)
            assert isinstance(batch.shared, SharedRoute)
            self._load(batch)
            request, what = protocol.time_shared(repeats, batch.shared), "TIME_SHARED"
        reply = self._process.request(request, what,
                                      protocol.reply_limit("TIME", repeats=repeats))
        return self._parse(lambda p: protocol.parse_times(p, repeats), reply)

    def add(self, name: str, weight: float) -> int:
        reply = self._process.request(protocol.add(name, weight), "ADD",
                                      protocol.reply_limit("ADD"))
        self._servers.append(name)
        return self._parse(lambda p: protocol.parse_count(p, "ADD"), reply)

    def remove(self, name: str) -> int:
        reply = self._process.request(protocol.remove(name), "REMOVE",
                                      protocol.reply_limit("REMOVE"))
        self._servers.remove(name)
        return self._parse(lambda p: protocol.parse_count(p, "REMOVE"), reply)

    def close(self) -> None:
        self._process.close()
        if self._region is not None:
            self._region.close()
            self._region = None
