"""The algorithm registry: one module per consistent-hashing algorithm, one typed map.

`ALGORITHMS[name].build(servers, **params)` builds that algorithm for the
servers (see `harness.recipes.algorithms.base` for the whole contract). The ring is
one of them; `jump`, `maglev`, `rendezvous`, `rendezvous-weighted` and `multi-probe`
route exactly like the libraries their modules name, and `bounded-load` applies
HAProxy's hash-balance-factor rule to a ring. `binomial`, `fliphash` and `powerch` are
stateless range hashes like jump (`harness.recipes.algorithms.range_hash`), bit for bit
the reference code their modules name. `anchor`, `memento` and `dx` remove any server in
place (`without`), as their papers define; `jumpback` routes as hash4j's JumpBackHash.
`kafka-murmur2` (Kafka's default partitioner, murmur2 mod N) and `redis-slots` (Redis
Cluster's 16,384 key slots, shared as redis-cli does) are the fixed-table baselines real
clients route with, each checked live against the client. `range` is range partitioning
(ordered key ranges, as Bigtable, HBase, Spanner and CockroachDB place data), the
alternative when range scans matter.
`riak` is riak_core's fixed ring of partitions, claimed by the servers as they join
(`choose_claim_v2`).
Installed packages add theirs through the entry-point group `ring_harness.algorithms`
(`harness.recipes.plugins`), checked against the `Algorithm` protocol when they load.
"""

from __future__ import annotations

from harness.core.errors import UnknownNameError
from harness.recipes.algorithms.anchor import AnchorAlgorithm
from harness.recipes.algorithms.base import DEFAULTS, Algorithm
from harness.recipes.algorithms.binomial import BinomialAlgorithm
from harness.recipes.algorithms.bounded_load import BoundedLoadAlgorithm
from harness.recipes.algorithms.dx import DxAlgorithm
from harness.recipes.algorithms.fliphash import FlipHashAlgorithm
from harness.recipes.algorithms.jump import JumpAlgorithm
from harness.recipes.algorithms.jumpback import JumpBackAlgorithm
from harness.recipes.algorithms.kafka_partitioner import KafkaMurmur2Algorithm
from harness.recipes.algorithms.maglev import MaglevAlgorithm
from harness.recipes.algorithms.memento import MementoAlgorithm
from harness.recipes.algorithms.modulo import ModuloAlgorithm
from harness.recipes.algorithms.multi_probe import MultiProbeAlgorithm
from harness.recipes.algorithms.powerch import PowerCHAlgorithm
from harness.recipes.algorithms.range_partition import RangePartition
from harness.recipes.algorithms.redis_slots import RedisSlotsAlgorithm
from harness.recipes.algorithms.rendezvous import RendezvousAlgorithm
from harness.recipes.algorithms.rendezvous_score import RendezvousScoreAlgorithm
from harness.recipes.algorithms.rendezvous_weighted import WeightedRendezvousAlgorithm
from harness.recipes.algorithms.riak import RiakAlgorithm
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.plugins import Contract, Registry, protocol_members

BUILT_IN: tuple[type[Algorithm], ...] = (
    RingAlgorithm, JumpAlgorithm, MaglevAlgorithm, RendezvousAlgorithm, MultiProbeAlgorithm,
    BoundedLoadAlgorithm, WeightedRendezvousAlgorithm, BinomialAlgorithm, FlipHashAlgorithm,
    PowerCHAlgorithm, AnchorAlgorithm, MementoAlgorithm, JumpBackAlgorithm, DxAlgorithm,
    KafkaMurmur2Algorithm, RedisSlotsAlgorithm, RiakAlgorithm, RangePartition,
    # client families: hash mod N with any key hash, rendezvous with any score
    ModuloAlgorithm, RendezvousScoreAlgorithm)

#: what a plugin's algorithm must have
CONTRACT = Contract("Algorithm (harness/recipes/algorithms/base.py)",
                    protocol_members(Algorithm), DEFAULTS,
                    "harness.recipes.algorithms.base.Routing")

ALGORITHMS: dict[str, type[Algorithm]] = Registry(
    "ring_harness.algorithms", {cls.name: cls for cls in BUILT_IN}, CONTRACT)


def get_algorithm(name: str) -> type[Algorithm]:
    """The algorithm class called `name`, or an error that lists the valid names."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise UnknownNameError("algorithm", name, list(ALGORITHMS)) from None


__all__ = ["ALGORITHMS", "Algorithm", "get_algorithm"]
