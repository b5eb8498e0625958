"""What the peers cost in a run (`harness.core.cost.Cost`), from their own bounds.

A Python peer holds what `Peer.estimated_bytes` bounds, at the fleet where it is largest;
all are held at once. A foreign peer's share is `harness.recipes.peers.foreign.sizing`'s:
its batch of every key (all peers hold theirs at once), a library's structure, and what
is held once for them all. Their routes' seconds are `foreign_routing_cost`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.cost import Cost, largest
from harness.core.servers import Server
from harness.recipes.algorithms.cost import recipe_cost
from harness.recipes.peers import get_peer
from harness.recipes.peers.foreign import sizing
from harness.recipes.peers.foreign.spec import ForeignPeerSpec

#: seconds to start a foreign peer's process or load its library, and build it
FOREIGN_START_S = 2.0


def peer_cost(name: str, fleets: Sequence[Sequence[Server]]) -> Cost:
    """The peer built, held through the sweep point."""
    return Cost(held=max(get_peer(name).estimated_bytes(fleet) for fleet in fleets))


def foreign_cost(peers: Sequence[ForeignPeerSpec], keys: int, longest_name: int,
                 points: int, why: str) -> Cost:
    """Every foreign peer's batch and structure, and what they share, held all run."""
    if not peers:
        return Cost()
    held = (sizing.shared_bytes(keys, longest_name)
            + sum(sizing.held_bytes(peer, keys, longest_name, points) for peer in peers))
    return Cost(held=held, why=why)


def foreign_routing_cost(peers: Sequence[ForeignPeerSpec], keys: int, batches: int,
                         fleets: Sequence[Sequence[Server]] = ()) -> Cost:
    """Every foreign peer started and routing every key in `batches` batches, each at the
    ns per key it declares, at one sweep point; and the recipe each claims (`routes_like`)
    built on each of `fleets` to check the claim (and hash the keys of a peer given
    hashes), priced by its algorithm (`recipe_cost`), one at a time."""
    if not peers:
        return Cost()
    seconds = sum(FOREIGN_START_S + batches * keys * peer.ns_per_key * 1e-9 for peer in peers)
    routes = Cost(seconds=seconds, why_seconds="measure.peers: its foreign peers, each routing "
                                               "every key of keys.count in several batches")
    claims = [recipe_cost(str(peer.routes_like["algorithm"]), peer.recipe_params, fleets,
                          keys=keys, builds=2 * len(fleets) + 1,
                          why=f"measure.peers ({peer.name!r}: its routes_like, "
                              f"{peer.routes_like['algorithm']} and its parameters)")
              for peer in peers if peer.routes_like is not None and fleets]
    return routes + largest(claims).passing()
