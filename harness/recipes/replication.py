"""Which algorithms give a key R distinct servers, and those servers (its preference list).

The ring, in every construction (points, nginx, libketama, HAProxy, allocated tokens),
walks clockwise as Dynamo does (`harness.core.replicas`): allocated tokens are
Cassandra's own, and Cassandra places its replicas by that walk. The other
algorithms are refused, each with its reason (`replication_problem`), before any
work: their papers define one owner per key, and a replica set made up here would
be a new algorithm, not theirs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.replicas import preference_lists, start_table
from harness.recipes.algorithms.base import Algorithm

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
    "rendezvous": ("the top R scores are rendezvous's natural replica set, not measured yet "
                   "here: use the ring"),
    "rendezvous-weighted": ("the top R scores are its natural replica set, not measured yet "
                            "here: use the ring"),
}


def replication_problem(algorithm: str) -> str | None:
    """Why this algorithm's replica sets cannot be measured, or None for the ring."""
    if algorithm == "ring":
        return None
    return REFUSED.get(algorithm, f"{algorithm} defines no replica set")


class ReplicaPlacement:
    """The preference lists of one built ring, for R copies (zone-aware or not)."""

    def __init__(self, algorithm: Algorithm, copies: int,
                 zone_of: npt.NDArray[np.integer] | None = None) -> None:
        problem = replication_problem(algorithm.name)
        ring = algorithm.ring
        if problem or ring is None:
            raise HarnessError(f"replication: {algorithm.name} cannot be measured: {problem}")
        self.ring, self.copies, self.zone_of = ring, copies, zone_of
        self.table = start_table(ring, copies, zone_of)

    @property
    def table_bytes(self) -> int:
        return int(self.table.nbytes)

    def lists(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        """keys x copies server indexes, the owner first."""
        return preference_lists(self.ring, key_hashes, self.copies, self.zone_of, self.table)
