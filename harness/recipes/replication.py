"""Which algorithms give a key R distinct servers, and those servers (its preference list).

- The ring, in every construction (points, nginx, libketama, HAProxy, allocated tokens),
  walks clockwise as Dynamo does (`harness.core.replicas`): allocated tokens are
  Cassandra's own, and Cassandra places its replicas by that walk.
- Rendezvous and rendezvous-weighted rank every server for every key already: the
  top R scores are the replica set (Thaler and Ravishankar's paper ranks the servers
  for exactly this; a failed server's keys pass to the next in the ranking). Zone-aware,
  the ranking is walked skipping zones already taken. The ranking is computed over a
  score matrix in numpy (`ranked`), and `ranked_reference` is each key's plain-Python
  definition; rendezvous-weighted keys with two of their best R+1 scores too close for
  numpy's log to order are settled by the plain reference, as its owners are.
- With a keyspace's data centres (`Topology`), the ring places replicas as Cassandra's
  NetworkTopologyStrategy does (`harness.core.network_topology`): one walk clockwise,
  each data centre taking nodes of new racks first, then rack repeats while it has fewer
  racks than its factor. Only the ring has that walk; the ranking algorithms are refused.
- Riak's fixed ring (`riak`) takes the owners of the key's partition and the next N - 1
  partitions, as riak_core's primary preference list does (a node may appear twice
  when its claim could not keep `target_n_val`); its claim knows no zones, so the
  zone-aware walk and data centres are refused for it.
- The other algorithms are refused, each with its reason (`replication_problem`),
  before any work: their papers define one owner per key, and a replica set made up
  here would be a new algorithm, not theirs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.network_topology import Topology
from harness.core.replicas import preference_lists, start_table
from harness.recipes.algorithms.base import Algorithm
from harness.recipes.algorithms.rendezvous import RendezvousAlgorithm
from harness.recipes.algorithms.rendezvous_weighted import (
    CLOSE_GAP,
    WeightedRendezvousAlgorithm,
)
from harness.recipes.algorithms.riak import RiakAlgorithm

#: why an algorithm's preference list is not measured: what its source defines instead
REFUSED: dict[str, str] = {
    "jump": ("jump consistent hash (Lamping and Veach) returns one bucket; a replica set "
             "would need a successor rule the paper does not give, and buckets can only "
             "leave from the end, so one failing server is not a change it models"),
    "maglev": ("Maglev's lookup table (Eisenbud et al.) holds one backend per slot, and its "
               "paper defines no second choice; the next slots' backends depend on the fill "
               "order, not on the key"),
    "multi-probe": ("multi-probe consistent hashing (Appleton and O'Reilly) keeps the one "
                    "nearest probe; the paper defines no order among the other servers"),
    "bounded-load": ("bounded loads (Mirrokni, Thorup and Zadimoghaddam) place each request "
                     "by the loads already assigned, so a key has no fixed set of servers"),
}
#: algorithms whose replica set is their top R scores
RANKED = ("rendezvous", "rendezvous-weighted")
#: algorithms whose replica set is the next partitions' owners, without zones
PARTITIONED = ("riak",)
#: score-matrix elements computed at once (keys x servers), about 32 MB of int64 or float64
CHUNK_ELEMENTS = 1 << 22

Ranking = RendezvousAlgorithm | WeightedRendezvousAlgorithm


def replication_problem(algorithm: str) -> str | None:
    """Why this algorithm's replica sets cannot be measured, or None if they can."""
    if algorithm == "ring" or algorithm in RANKED or algorithm in PARTITIONED:
        return None
    return REFUSED.get(algorithm, f"{algorithm} defines no replica set")


def zone_aware_problem(algorithm: str) -> str | None:
    """Why this algorithm's replicas cannot be placed zone-aware, or None if they can."""
    if algorithm in PARTITIONED:
        return (f"{algorithm}'s claim (riak_core's choose_claim_v2) places partitions "
                "without zones, and its preference list is the next partitions' owners")
    return None


def ranked_reference(algorithm: Ranking, key_hash: int, copies: int,
                     zone_of: npt.NDArray[np.integer] | None = None) -> list[int]:
    """One key's preference list in plain Python: its servers best first, skipping zones
    already taken when zone-aware."""
    order = algorithm.ranked_reference(key_hash, len(algorithm.servers))
    chosen: list[int] = []
    for server in order:
        if zone_of is None or all(zone_of[server] != zone_of[c] for c in chosen):
            chosen.append(server)
        if len(chosen) == copies:
            break
    return chosen


def ranked(algorithm: Ranking, key_hashes: npt.NDArray[np.unsignedinteger], copies: int,
           zone_of: npt.NDArray[np.integer] | None = None) -> npt.NDArray[np.uint16]:
    """Every key's preference list from the score matrix, in chunks of keys."""
    servers = len(algorithm.servers)
    lists = np.empty((len(key_hashes), copies), dtype=np.uint16)
    step = max(1, CHUNK_ELEMENTS // servers)
    for start in range(0, len(key_hashes), step):
        chunk = key_hashes[start:start + step]
        scores = algorithm.scores(chunk)
        # Stable: equal scores keep configuration order, the first server listed first
        # (rendezvous's scores carry their tie-break already, so none are equal).
        order = np.argsort(-scores, axis=1, kind="stable")
        lists[start:start + len(chunk)] = _first_distinct(order, copies, zone_of)
        if isinstance(algorithm, WeightedRendezvousAlgorithm):
            best = np.take_along_axis(scores, order[:, :copies + 1], axis=1)
            close = (best[:, :-1] - best[:, 1:] <= best[:, :1] * CLOSE_GAP).any(axis=1)
            for k in np.flatnonzero(close):
                lists[start + k] = ranked_reference(algorithm, int(chunk[k]), copies, zone_of)
    return lists


def _first_distinct(order: npt.NDArray[np.intp], copies: int,
                    zone_of: npt.NDArray[np.integer] | None) -> npt.NDArray[np.intp]:
    """Per row, the first `copies` servers of the ranking whose zones are all different."""
    if zone_of is None:
        return order[:, :copies]
    zones = np.asarray(zone_of)[order]
    chosen = np.zeros((len(order), copies), dtype=np.intp)
    taken = np.full((len(order), copies), -1, dtype=np.int64)
    filled = np.zeros(len(order), dtype=np.intp)
    for column in range(order.shape[1]):
        open_rows = np.flatnonzero(filled < copies)
        if not len(open_rows):
            break
        zone = zones[open_rows, column]
        fresh = open_rows[~(taken[open_rows] == zone[:, None]).any(axis=1)]
        chosen[fresh, filled[fresh]] = order[fresh, column]
        taken[fresh, filled[fresh]] = zones[fresh, column]
        filled[fresh] += 1
    return chosen


class ReplicaPlacement:
    """The preference lists of one built algorithm, for R copies (zone-aware or not), or
    for a keyspace's data centres (`topology`: NetworkTopologyStrategy, whose factors set
    the copies)."""

    def __init__(self, algorithm: Algorithm, copies: int,
                 zone_of: npt.NDArray[np.integer] | None = None,
                 topology: Topology | None = None) -> None:
        problem = replication_problem(algorithm.name)
        if problem:
            raise HarnessError(f"replication: {algorithm.name} cannot be measured: {problem}")
        self.topology = topology
        self.table: npt.NDArray[np.uint16] | None
        if topology is not None:
            if algorithm.ring is None:
                raise HarnessError(f"replication: NetworkTopologyStrategy walks a ring's "
                                   f"tokens; {algorithm.name} has none")
            self.algorithm, self.copies, self.zone_of = algorithm, topology.copies, None
            self.table = topology.start_table(algorithm.ring)
            return
        places = len(algorithm.servers) if zone_of is None else len(np.unique(zone_of))
        if places < copies:
            what = "zones" if zone_of is not None else "servers"
            raise HarnessError(f"replication: {copies} copies need {copies} distinct {what} "
                               f"(got {places})")
        self.algorithm, self.copies, self.zone_of = algorithm, copies, zone_of
        ring = algorithm.ring
        self.table = start_table(ring, copies, zone_of) if ring is not None else None

    def lists(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        """keys x copies server indexes, the owner first."""
        ring, algorithm = self.algorithm.ring, self.algorithm
        if ring is not None and self.topology is not None:
            return self.topology.lists(ring, key_hashes, self.table)
        if ring is not None:
            return preference_lists(ring, key_hashes, self.copies, self.zone_of, self.table)
        if isinstance(algorithm, RendezvousAlgorithm | WeightedRendezvousAlgorithm):
            return ranked(algorithm, key_hashes, self.copies, self.zone_of)
        if isinstance(algorithm, RiakAlgorithm) and self.zone_of is None:
            return algorithm.preference_lists(key_hashes, self.copies)
        raise HarnessError(f"replication: {algorithm.name} has no replica sets")
