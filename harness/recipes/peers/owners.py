"""Owners of a large set of keys by a peer, as indices of the run's server list.

A migration to or from a peer (`[migration] to = { peer = ... }`) needs the peer's owner of
every object of its universe (up to 10**8 names), in the numbering the cache model and our
recipes use: the index of the server in the scenario's list. Two kinds of peer:

- a registry peer (a Python library, `harness.recipes.peers`) is asked key by key, as its
  library is; its answers are already indices of the servers it was built from;
- a foreign peer (`harness.recipes.peers.foreign`) routes batches of `BATCH_KEYS` keys, one
  ROUTE (or call) each, so a request stays a few megabytes whatever the universe; a peer
  given key hashes (input = "hashes", LOOKUP only, as Guava's jump) gets them from the
  recipe it routes like, built once, as the claim check gives them. A process peer numbers
  its servers in its own order, which its ADD and REMOVE change (a removed server comes
  back last), so its owners are mapped to ours by server name.

Every owner is checked against the server count; a peer that answers out of range fails
with one line naming it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers.base import Peer
from harness.recipes.peers.foreign import ForeignPeer
from harness.recipes.peers.foreign.claims import owners_by_name
from harness.recipes.peers.foreign.protocol import packed_keys

#: keys per request to a foreign peer: about 1.5 MB of request for names of 15 bytes, few
#: enough hand-overs through the pipe, and a bounded share of memory whatever the universe
BATCH_KEYS = 1 << 16


def registry_peer_owners(name: str, peer: Peer, servers: Sequence[Server],
                         keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
    """A registry peer's owner of each key, asked one key at a time (its library's call)."""
    owners = np.fromiter((peer.lookup_key(key.decode()) for key in keys), dtype=np.int64,
                         count=len(keys))
    return _in_range(name, owners, len(servers))


def foreign_peer_owners(peer: ForeignPeer, servers: Sequence[Server],
                        keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
    """A foreign peer's owner of each key, in batches, numbered as `servers` are."""
    hashing = None
    if peer.spec.input == "hashes" and peer.spec.routes_like is not None:
        hashing = get_algorithm(peer.spec.routes_like["algorithm"]).from_params(
            servers, peer.spec.recipe_params)
    owners = np.empty(len(keys), dtype=np.uint16)
    for start in range(0, len(keys), BATCH_KEYS):
        chunk = keys[start:start + BATCH_KEYS]
        hashes = None if hashing is None else np.ascontiguousarray(
            hashing.hash_keys(chunk), dtype=np.uint64)
        owners[start:start + len(chunk)] = peer.route_prepared(
            peer.prepare(*packed_keys(chunk), hashes))
    return owners_by_name(peer, servers, owners)


def _in_range(name: str, owners: npt.NDArray[np.int64],
              servers: int) -> npt.NDArray[np.uint16]:
    bad = np.flatnonzero((owners < 0) | (owners >= servers))
    if len(bad):
        at = int(bad[0])
        raise HarnessError(f"peer {name!r}: routed key {at} to owner {int(owners[at])}, out "
                           f"of range for {servers} servers")
    return owners.astype(np.uint16)
