"""The peer registry: third-party libraries measured beside our layouts and algorithms.

`PEERS[name].build(servers)` builds that library's ring for the servers.
"""

from __future__ import annotations

from harness.core.errors import UnknownNameError
from harness.recipes.peers.base import Peer
from harness.recipes.peers.hashring_peer import HashringPeer
from harness.recipes.peers.jump_peer import JumpConsistentHashPeer
from harness.recipes.peers.pymemcache_peer import PymemcachePeer
from harness.recipes.peers.uhashring_peer import UhashringKetamaPeer, UhashringPeer

PEERS: dict[str, type[Peer]] = {cls.name: cls for cls in (
    UhashringPeer, UhashringKetamaPeer, PymemcachePeer, JumpConsistentHashPeer, HashringPeer)}


def get_peer(name: str) -> type[Peer]:
    """The peer class called `name`, or an error that lists the valid names."""
    try:
        return PEERS[name]
    except KeyError:
        raise UnknownNameError("peer", name, list(PEERS)) from None


__all__ = ["PEERS", "Peer", "get_peer"]
