"""uhashring (pure Python) as a peer, in its default ring and in its ketama mode.

Default mode (`uhashring`): 160 points per unit weight named "<name>-<i>",
each placed at the *whole* 128-bit MD5 of its name as a Python int, so its
rings have no collisions and do not fit our 32/64-bit `Ring`. Ketama mode
(`uhashring-ketama`): libketama's continuum, the ring our `libketama`
construction builds. Both look keys up with `bisect_right` over a sorted list
of point ints and a dict from point to server name.

uhashring needs integer weights (it calls `range` on points times weight).
Memory is the deep size of the ring object's own attributes: the sorted point
list, the point-to-name dict, the per-node configuration dicts and counters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.peers.sizing import (
    deep_sizeof,
    points_per_server,
    points_per_weight,
    ring_peer_bytes,
)


def servers_problem(servers: Sequence[Server]) -> str | None:
    """What uhashring needs of the servers, if these are refused; None if they are fine."""
    if not servers:
        return "at least one server"
    if len({server.name for server in servers}) != len(servers):
        return "servers with unique names (uhashring keys nodes by name)"
    for server in servers:
        if server.weight != int(server.weight) or server.weight < 1:
            return (f"positive integer weights, as uhashring requires (server "
                    f"{server.name!r} has {server.weight})")
    return None


def _nodes(peer: str, servers: Sequence[Server]) -> dict[str, dict[str, int]]:
    """uhashring's node configuration: name -> {"weight": w}, in server order."""
    problem = servers_problem(servers)
    if problem:
        raise HarnessError(f"{peer}: needs {problem}")
    return {server.name: {"weight": int(server.weight)} for server in servers}


class UhashringPeer:
    """uhashring's default ring: 160 points per unit weight at full 128-bit MD5."""

    name: ClassVar[str] = "uhashring"
    #: the Python package it wraps: (module imported, requirement pip installs)
    package: ClassVar[tuple[str, str]] = ("uhashring", "uhashring>=2.5")
    # Its points are whole 128-bit MD5 values: no ring of ours (32 or 64 bits) holds them.
    agrees_with: ClassVar[dict[str, Any] | None] = None
    exact: ClassVar[bool] = False
    agreement_note: ClassVar[str] = "128-bit MD5 points: no recipe of ours holds them"
    #: uhashring's `hash_fn` argument; None selects its default MD5 ring
    hash_fn: ClassVar[str | None] = None

    def __init__(self, ring: Any, servers: Sequence[Server]) -> None:
        self._ring = ring  # a uhashring.HashRing; uhashring ships no type hints
        self._index = {server.name: i for i, server in enumerate(servers)}

    @classmethod
    def build(cls, servers: Sequence[Server]) -> Self:
        try:
            # uhashring is a test extra, not a dependency; it ships no type hints.
            from uhashring import HashRing  # type: ignore[import-untyped]
        except ImportError:
            raise HarnessError(
                f"peer {cls.name!r} needs uhashring: pip install -e '.[test]'"
            ) from None
        return cls(HashRing(_nodes(cls.name, servers), hash_fn=cls.hash_fn), servers)

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server]) -> float:
        """160 points per unit of integer weight, each a 128-bit int in a dict and a list."""
        return ring_peer_bytes(points_per_weight(servers, 160))

    @classmethod
    def check_servers(cls, servers: Sequence[Server]) -> str | None:
        return servers_problem(servers)

    @property
    def entries(self) -> int:
        return len(self._ring.runtime._ring)

    @property
    def nbytes(self) -> int:
        # The default ring keeps its hash function (a lambda) among its attributes: code, not data.
        attributes = vars(self._ring.runtime).values()
        return deep_sizeof(value for value in attributes if not callable(value))

    def lookup_key(self, key: str) -> int:
        return self._index[self._ring.get_node(key)]


class UhashringKetamaPeer(UhashringPeer):
    """uhashring's ketama mode: libketama's continuum of 32-bit points."""

    name: ClassVar[str] = "uhashring-ketama"
    agrees_with: ClassVar[dict[str, Any] | None] = {"algorithm": "ring",
                                                     "construction": "libketama"}
    exact: ClassVar[bool] = True
    agreement_note: ClassVar[str] = ""
    hash_fn: ClassVar[str | None] = "ketama"

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server]) -> float:
        """libketama's continuum: 40 digests of 4 points per server, shared by weight."""
        return ring_peer_bytes(points_per_server(servers, 160))
