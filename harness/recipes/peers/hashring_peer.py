"""PyPI hashring 1.5.1 (`hashring.HashRing`, pure Python) as a peer: a ketama-like ring.

How it builds its ring (hashring/hashring.py, `_generate_circle`): server s of
weight w (default 1) gets `floor(40 * N * w / total_weight)` MD5 digests of
"<name>-<j>" for j = 0, 1, ..., and each digest gives **three** 32-bit
little-endian points (bytes 0-3, 4-7, 8-11): 120 points per server at equal
weights. Points go in a dict filled in server order, so of equal points the
server listed last wins. A key hashes to the first 4 bytes of MD5(key),
little-endian, and goes to the first point **strictly greater** than its hash
(`bisect_right`), wrapping.

Which of our recipes it matches: the closest is libketama's continuum
(construction `libketama`: the same digests, the same names, the same digest
counts, the same key hash, the same collision rule), and hashring's ring is
exactly its points without the fourth point of every digest. So it is not the
same ring, and agreement is not exact: a key whose successor in libketama's
ring is a fourth-word point (a quarter of the points, so about a quarter of the
keys) goes on to the next point in hashring's ring, which belongs to the same
server with probability about 1/N. Expected agreement is about 3/4 + 1/(4N);
the strictly-greater rule changes only keys whose hash equals a point.

Memory is the deep size of its point list and its point-to-node dict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.peers.sizing import deep_sizeof, points_per_server, ring_peer_bytes
from harness.recipes.peers.uhashring_peer import servers_problem


def expected_agreement(servers: int) -> float:
    """Expected share of keys hashring routes as libketama does: 3/4 + 1/(4N)."""
    return 0.75 + 0.25 / servers


class HashringPeer:
    """hashring 1.5.1's ring: three MD5 points per digest, strictly-greater lookup."""

    name: ClassVar[str] = "hashring"
    #: the Python package it wraps: (module imported, requirement pip installs)
    package: ClassVar[tuple[str, str]] = ("hashring", "hashring==1.5.1")
    agrees_with: ClassVar[dict[str, Any] | None] = {"algorithm": "ring",
                                                     "construction": "libketama"}
    exact: ClassVar[bool] = False
    agreement_note: ClassVar[str] = (
        "hashring keeps 3 of libketama's 4 points per MD5 digest: about 3/4 + 1/(4N) "
        "of keys agree")

    def __init__(self, ring: Any, servers: Sequence[Server]) -> None:
        self._ring = ring  # a hashring.HashRing; hashring ships no type hints
        self._index = {server.name: i for i, server in enumerate(servers)}
        self.get_node = ring.get_node

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server]) -> float:
        """40 digests of 3 points per server, shared by weight."""
        return ring_peer_bytes(points_per_server(servers, 120))

    @classmethod
    def check_servers(cls, servers: Sequence[Server]) -> str | None:
        # hashring takes any weights, but our libketama recipe and its digest counts are
        # compared on integer weights (as uhashring, the other MD5 ring, needs).
        return servers_problem(servers)

    @classmethod
    def build(cls, servers: Sequence[Server]) -> Self:
        problem = cls.check_servers(servers)
        if problem:
            raise HarnessError(f"peer {cls.name!r}: needs {problem}")
        try:
            from hashring import HashRing
        except ImportError:
            raise HarnessError(
                f"peer {cls.name!r} needs hashring: pip install -e '.[test]'") from None
        names = [server.name for server in servers]
        weights = {server.name: int(server.weight) for server in servers}
        return cls(HashRing(names, weights), servers)

    @property
    def entries(self) -> int:
        return len(self._ring.ring)

    @property
    def nbytes(self) -> int:
        return deep_sizeof([self._ring.ring, self._ring._sorted_keys])

    def lookup_key(self, key: str) -> int:
        return self._index[self.get_node(key)]
