"""Cassandra's NetworkTopologyStrategy: a key's replicas over data centres and racks.

Read from apache/cassandra (src/java/org/apache/cassandra/locator/
NetworkTopologyStrategy.java, `calculateNaturalEndpoints` / `calculateNaturalReplicas`).
A keyspace gives each data centre its replication factor. One walk clockwise over the
tokens, from the first token >= the key's (the ring's owner rule), offers each token's
node to its data centre, which takes it:

- if the data centre still needs replicas and the node's rack (a (dc, rack) pair) was
  not seen yet: a new rack, always taken;
- else, if the data centre has fewer racks than its factor, a node of a rack already
  seen, up to `rf - racks` such repeats, taken in the order the walk meets them (and
  never a node twice);
- else it is passed over.

A data centre with fewer nodes than its factor places as many replicas as it has nodes;
one with no nodes is skipped. The walk ends when every data centre is done. The list
is in the order nodes were taken, the key's owner first when its data centre has a
factor (Cassandra's insertion-ordered set).

Two implementations of one rule, cross-checked by tests/unit/test_network_topology.py:
- `placement_reference`: the walk for one key, in plain Python; the definition.
- `Topology.lists`: every key at once. As on the plain ring, the list depends only on
  the token the walk starts from, so it is tabled once per token (`start_table`, the
  walk above per token) and keys index the table by the owner lookup's search.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.ring import Ring


def split_zone(zone: str) -> tuple[str, str]:
    """A zone "dc/rack" as (data centre, rack); a zone without "/" is a data centre of one
    rack, named as the zone."""
    dc, slash, rack = zone.partition("/")
    return (dc, rack) if slash else (zone, zone)


@dataclass(frozen=True)
class Topology:
    """Each server's data centre and rack (as indexes), and each data centre's factor."""

    #: per server: its data centre's index into `factors`, -1 for a data centre given none
    dc_of: tuple[int, ...]
    #: per server: its rack, unique across data centres
    rack_of: tuple[int, ...]
    #: replication factor of each data centre listed
    factors: tuple[int, ...]

    @classmethod
    def of(cls, zones: Sequence[str], factors: Mapping[str, int]) -> Topology:
        """The topology of servers in these zones ("dc/rack"), for a keyspace's factors."""
        names = list(factors)
        places = [split_zone(z) for z in zones]
        racks = {place: i for i, place in enumerate(dict.fromkeys(places))}
        return cls(dc_of=tuple(names.index(dc) if dc in factors else -1 for dc, _ in places),
                   rack_of=tuple(racks[place] for place in places),
                   factors=tuple(int(factors[n]) for n in names))

    def placed(self) -> list[int]:
        """Replicas each data centre places: its factor, or its node count when fewer."""
        nodes = np.bincount([d for d in self.dc_of if d >= 0], minlength=len(self.factors))
        return [min(rf, int(n)) for rf, n in zip(self.factors, nodes, strict=True)]

    @property
    def copies(self) -> int:
        """Length of every preference list."""
        return sum(self.placed())

    def without(self, index: int) -> Topology:
        """The topology once server `index` has left (the others renumbered down)."""
        keep = [i for i in range(len(self.dc_of)) if i != index]
        return Topology(tuple(self.dc_of[i] for i in keep), tuple(self.rack_of[i] for i in keep),
                        self.factors)

    def joined(self, like: int) -> Topology:
        """The topology with one more server, last, in the data centre and rack of `like`."""
        return Topology((*self.dc_of, self.dc_of[like]), (*self.rack_of, self.rack_of[like]),
                        self.factors)

    @cached_property
    def _quotas(self) -> tuple[dict[int, int], dict[int, int]]:
        """Per data centre: the replicas it places, and the rack repeats it may take
        (its factor less its racks, as Cassandra's `acceptableRackRepeats`)."""
        racks_in: dict[int, set[int]] = {}
        for server, dc in enumerate(self.dc_of):
            if dc >= 0:
                racks_in.setdefault(dc, set()).add(self.rack_of[server])
        placed = self.placed()
        return ({dc: placed[dc] for dc in range(len(self.factors))},
                {dc: rf - len(racks_in.get(dc, ())) for dc, rf in enumerate(self.factors)})

    def walk(self, owners: Sequence[int], start: int) -> list[int]:
        """Cassandra's one pass over the tokens' owners from index `start`, wrapping."""
        quotas, repeat_quotas = self._quotas
        left, repeats = dict(quotas), dict(repeat_quotas)
        to_fill = sum(1 for n in left.values() if n > 0)
        dc_of, rack_of = self.dc_of, self.rack_of
        chosen: list[int] = []
        seen_racks: set[int] = set()
        for step in range(len(owners)):
            if to_fill == 0:
                break
            server = owners[(start + step) % len(owners)]
            dc = dc_of[server]
            if dc < 0 or left[dc] == 0:
                continue
            rack = rack_of[server]
            if rack not in seen_racks:
                seen_racks.add(rack)
            elif repeats[dc] <= 0 or server in chosen:
                continue
            else:
                repeats[dc] -= 1
            chosen.append(server)
            left[dc] -= 1
            if left[dc] == 0:
                to_fill -= 1
        return chosen

    def start_table(self, ring: Ring) -> npt.NDArray[np.uint16]:
        """Row j: the preference list of a walk starting at token j (entries x copies)."""
        copies = self.copies
        owners = ring.owners.tolist()
        table = np.empty((ring.entries, copies), dtype=np.uint16)
        for start in range(ring.entries):
            chosen = self.walk(owners, start)
            if len(chosen) != copies:
                raise HarnessError(f"replication: the ring's tokens place {len(chosen)} of "
                                   f"{copies} replicas: a node of the topology has no token")
            table[start] = chosen
        return table

    def lists(self, ring: Ring, key_hashes: npt.NDArray[np.unsignedinteger],
              table: npt.NDArray[np.uint16] | None = None) -> npt.NDArray[np.uint16]:
        """Each key's replicas (keys x copies, in the order the walk takes them)."""
        if table is None:
            table = self.start_table(ring)
        start = np.searchsorted(ring.positions, key_hashes, side="left")
        start[start == ring.entries] = 0
        lists: npt.NDArray[np.uint16] = table[start]
        return lists


def placement_reference(positions: Sequence[int], owners: Sequence[int], key_hash: int,
                        topology: Topology) -> list[int]:
    """One key's replicas: the walk from the first token at or after `key_hash`."""
    start = bisect.bisect_left(positions, key_hash)
    return topology.walk(owners, start % len(positions))
