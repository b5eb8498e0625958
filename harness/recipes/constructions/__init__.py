"""The construction registry: one module per ring recipe, one typed map.

`get_construction(name, **params)` gives a construction: `build_ring(servers)`
builds the ring, `key_hashes(keys)` hashes keys the way that recipe does.
`points` is the generic recipe (naming scheme x hash x points per weight);
`nginx` and `libketama` reproduce production systems and take no parameters;
`libmemcached` is libketama's continuum as libmemcached computes it, `twemproxy` that
continuum with twemproxy's point names and key hashes; `haproxy`
reproduces HAProxy's, taking its key hash and server-id scheme;
`allocated` chooses token positions so that arc shares track weights;
`envoy_ring_hash` reproduces Envoy's ring hash load balancer (64-bit points);
`pingora` Cloudflare Pingora's ketama, v2 (ties by socket address) or v1 (nginx's).
`cassandra` is Cassandra's Murmur3Partitioner ring with random `num_tokens` per node.
"""

from __future__ import annotations

from typing import Any

from harness.core.errors import UnknownNameError
from harness.recipes.constructions.allocated import AllocatedConstruction
from harness.recipes.constructions.base import Construction
from harness.recipes.constructions.cassandra import CassandraConstruction
from harness.recipes.constructions.envoy_ring_hash import EnvoyRingHashConstruction
from harness.recipes.constructions.haproxy import HaproxyConstruction
from harness.recipes.constructions.libketama import LibketamaConstruction
from harness.recipes.constructions.libmemcached import LibmemcachedConstruction
from harness.recipes.constructions.nginx import NginxConstruction
from harness.recipes.constructions.pingora import PingoraConstruction
from harness.recipes.constructions.points import PointsConstruction
from harness.recipes.constructions.twemproxy import TwemproxyConstruction

CONSTRUCTIONS: dict[str, type[Construction]] = {
    cls.name: cls
    for cls in (PointsConstruction, NginxConstruction, LibketamaConstruction, AllocatedConstruction,
                HaproxyConstruction, LibmemcachedConstruction, TwemproxyConstruction,
                EnvoyRingHashConstruction, PingoraConstruction, CassandraConstruction)
}


def get_construction(name: str, **params: Any) -> Construction:
    """The construction called `name` with these parameters, or an error listing valid names."""
    try:
        cls = CONSTRUCTIONS[name]
    except KeyError:
        raise UnknownNameError("construction", name, list(CONSTRUCTIONS)) from None
    return cls(**params)


__all__ = ["CONSTRUCTIONS", "Construction", "get_construction"]
