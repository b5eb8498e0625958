"""Preference lists on the ring: the R distinct servers that hold a key's copies.

Dynamo's rule, which Cassandra (SimpleStrategy) and Riak follow: a key's first
copy is on its owner (the first point at or after its hash, wrapping) and the
next R - 1 copies on the next *distinct* servers met walking clockwise, points
of servers already chosen skipped. Zone-aware (racks, data centres, as
Cassandra's NetworkTopologyStrategy places replicas over racks): points of
*zones* already chosen are skipped too, so no two copies share a zone; the
server chosen in a zone is the first of that zone met on the walk.

Two implementations of one rule, cross-checked by tests/unit/test_replicas.py:
- `preference_list_reference`: the walk for one key, in plain Python; the definition.
- `preference_lists`: every key at once. The list only depends on where the walk
  starts, so it is tabled once per point and keys index the table by the same
  search the owner lookup makes. The table is built in C (cext/replicas.c) by one
  sweep counter-clockwise over the points, keeping the first R distinct servers (or
  zones) met from the current point in a move-to-front list: each point costs O(R),
  whatever the ring (a walk per point would cost up to a whole ring per point when a
  zone, or a server of small weight, has few points).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native import replicas as c_replicas
from harness.core.ring import Ring


def preference_list_reference(positions: Sequence[int], owners: Sequence[int], key_hash: int,
                              copies: int, zone_of: Sequence[int] | None = None) -> list[int]:
    """The servers (indexes) holding the key's copies, first the owner: the clockwise walk
    from the first point at or after `key_hash`, skipping servers (and, with `zone_of`, the
    zones of servers) already chosen. Shorter than `copies` when the ring runs out."""
    start = bisect.bisect_left(positions, key_hash)
    chosen: list[int] = []
    zones_taken: set[int] = set()
    for step in range(len(positions)):
        owner = owners[(start + step) % len(positions)]
        if owner in chosen or (zone_of is not None and zone_of[owner] in zones_taken):
            continue
        chosen.append(owner)
        if zone_of is not None:
            zones_taken.add(zone_of[owner])
        if len(chosen) == copies:
            break
    return chosen


def distinct_places(ring: Ring, zone_of: npt.NDArray[np.integer] | None = None) -> int:
    """How many distinct servers (or zones) own points: the most copies a list can have."""
    if zone_of is None:
        return len(np.unique(ring.owners))
    return len(np.unique(np.asarray(zone_of)[ring.owners]))


def start_table(ring: Ring, copies: int,
                zone_of: npt.NDArray[np.integer] | None = None) -> npt.NDArray[np.uint16]:
    """Row j: the preference list of a walk starting at point j (entries x copies), from
    cext/replicas.c."""
    places = distinct_places(ring, zone_of)
    if places < copies:
        what = "zones" if zone_of is not None else "servers"
        raise HarnessError(f"replication: {copies} copies need {copies} distinct {what} "
                           f"owning points on the ring (got {places})")
    labels = ring.owners if zone_of is None else np.asarray(zone_of)[ring.owners]
    return c_replicas.replica_start_table(labels, ring.owners, copies)


def preference_lists(ring: Ring, key_hashes: npt.NDArray[np.unsignedinteger], copies: int,
                     zone_of: npt.NDArray[np.integer] | None = None,
                     table: npt.NDArray[np.uint16] | None = None) -> npt.NDArray[np.uint16]:
    """Each key's preference list (keys x copies, owner first), as the reference walks it;
    `table` is `start_table(ring, copies, zone_of)` when the caller already holds it."""
    if table is None:
        table = start_table(ring, copies, zone_of)
    start = np.searchsorted(ring.positions, key_hashes, side="left")
    start[start == ring.entries] = 0
    lists: npt.NDArray[np.uint16] = table[start]
    return lists
