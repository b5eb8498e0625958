"""pymemcache 4's `RendezvousHash` (the default of its `HashClient`) as a peer.

Server `node` scores key k as pymemcache's pure-Python MurmurHash3_x86_32
(seed 0) of the text "<node>-<k>"; the highest score wins, a tie goes to the
greater node string. Our `rendezvous` algorithm is the same scheme in C, so
for ASCII names and keys the two agree on every key (`exact`). pymemcache
hashes characters (`ord(ch) & 0xFF`), not UTF-8 bytes, so non-ASCII text
would differ; the harness's keys and server names are ASCII.

No weights: pymemcache has none, so every server must weigh 1. Memory is
the deep size of the node list (the hash function is code, not data).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

from harness.core.errors import HarnessError
from harness.core.servers import Server, server_list_problem
from harness.recipes.peers.sizing import deep_sizeof, per_server_bytes


def unweighted_servers_problem(library: str, servers: Sequence[Server]) -> str | None:
    """What a peer without weights needs of the servers, if these are refused."""
    problem = server_list_problem(servers)
    if problem:
        return problem
    weighted = next((s for s in servers if s.weight != 1), None)
    if weighted is not None:
        return (f"all of weight 1, since {library} has no weights (got weight "
                f"{weighted.weight:g} for {weighted.name!r})")
    return None


class PymemcachePeer:
    """pymemcache's rendezvous hashing over the server names."""

    name: ClassVar[str] = "pymemcache"
    #: the Python package it wraps: (module imported, requirement pip installs)
    package: ClassVar[tuple[str, str]] = ("pymemcache", "pymemcache>=4.0")
    agrees_with: ClassVar[dict[str, Any] | None] = {"algorithm": "rendezvous"}
    exact: ClassVar[bool] = True
    agreement_note: ClassVar[str] = ""

    def __init__(self, hasher: Any, servers: Sequence[Server]) -> None:
        self._hasher = hasher  # a pymemcache RendezvousHash; pymemcache ships no type hints
        self._index = {server.name: i for i, server in enumerate(servers)}
        self.get_node = hasher.get_node

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server]) -> float:
        """No ring: the node list (57 bytes a server measured), at 200 bytes a server."""
        return per_server_bytes(servers, 200)

    @classmethod
    def check_servers(cls, servers: Sequence[Server]) -> str | None:
        return unweighted_servers_problem("pymemcache", servers)

    @classmethod
    def build(cls, servers: Sequence[Server]) -> Self:
        problem = cls.check_servers(servers)
        if problem:
            raise HarnessError(f"peer {cls.name!r}: needs {problem}")
        try:
            from pymemcache.client.rendezvous import RendezvousHash
        except ImportError:
            raise HarnessError(
                f"peer {cls.name!r} needs pymemcache: pip install -e '.[test]'") from None
        return cls(RendezvousHash([server.name for server in servers]), servers)

    @property
    def entries(self) -> int:
        return len(self._hasher.nodes)

    @property
    def nbytes(self) -> int:
        return deep_sizeof([self._hasher.nodes, self._hasher.seed])

    def lookup_key(self, key: str) -> int:
        return self._index[self.get_node(key)]
