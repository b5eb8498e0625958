"""A foreign peer in its own process, spoken to by the process protocol (`protocol`).

Built at start: HELLO (the protocol version it speaks and what it supports), then BUILD,
with the process's PSS read from /proc before and after, since its memory is not in our
process for memray to see. It also reports what it believes: MEMORY (its own byte count)
and TIME (R repeats of a batch on its own monotonic clock), which the report labels as
the peer's own figures, apart from those we time through the pipe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from harness.core.servers import Server
from harness.recipes.peers.foreign import protocol
from harness.recipes.peers.foreign.base import Batch
from harness.recipes.peers.foreign.process import PeerProcess, cpu_ns, pss_bytes
from harness.recipes.peers.foreign.protocol import ProtocolError, packed_keys
from harness.recipes.peers.foreign.spec import ForeignPeerSpec

T = TypeVar("T")


class ProcessPeer:
    """A peer process, started and built for the servers; `close()` ends it."""

    def __init__(self, spec: ForeignPeerSpec, servers: Sequence[Server]) -> None:
        assert spec.command is not None
        self.spec, self._servers = spec, [s.name for s in servers]
        self._process = PeerProcess(spec.name, spec.command, spec.timeout_s)
        try:
            self.hello = self._parse(protocol.parse_hello,
                                     self._process.request(protocol.hello(), "HELLO",
                                                           protocol.reply_limit("HELLO")))
            if self.hello.version != protocol.PROTOCOL_VERSION:
                raise self._process.failure(
                    f"speaks protocol version {self.hello.version}, this harness speaks "
                    f"{protocol.PROTOCOL_VERSION}")
            self.identity = f"{self.hello.name} {self.hello.library_version}".strip()
            self.pss_before_build = pss_bytes(self._process.pid)
            reply = self._process.request(protocol.build(
                self._servers, [float(s.weight) for s in servers], spec.params), "BUILD",
                protocol.reply_limit("BUILD"))
            self._entries = self._parse(lambda p: protocol.parse_count(p, "BUILD"), reply)
            self.pss_after_build = pss_bytes(self._process.pid)
        except BaseException:
            self._process.stop()
            raise

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
        if hashes is not None:
            return Batch(blob, offsets, protocol.lookup(hashes), hashes)
        return Batch(blob, offsets, protocol.route(blob, offsets))

    def route_prepared(self, batch: Batch) -> npt.NDArray[np.uint16]:
        what = "ROUTE" if batch.hashes is None else "LOOKUP"
        reply = self._process.request(batch.request, what,
                                      protocol.reply_limit(what, keys=batch.keys))
        return self._parse(lambda p: protocol.parse_owners(
            p, batch.keys, len(self._servers), what), reply)

    def route_many(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return self.route_packed(*packed_keys(keys))

    def lookup_key(self, key: str) -> int:
        return int(self.route_many([key.encode()])[0])

    def lookup_hashes(self, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        reply = self._process.request(protocol.lookup(hashes), "LOOKUP",
                                      protocol.reply_limit("LOOKUP", keys=len(hashes)))
        return self._parse(lambda p: protocol.parse_owners(
            p, len(hashes), len(self._servers), "LOOKUP"), reply)

    def self_timed(self, blob: bytes, offsets: npt.NDArray[np.uint64],
                   repeats: int) -> list[float]:
        """ns per key of each of `repeats` routes of the batch, by the peer's own clock."""
        reply = self._process.request(protocol.time(repeats, blob, offsets), "TIME",
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
