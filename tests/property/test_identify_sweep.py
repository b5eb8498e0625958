"""`identify`'s count sweep (`search.count_agreements`) reads, at every count of points at
once, the agreement each ring of client traits has with observed owners; it must be the
agreement of that very ring routed by its plain-Python definition (`route_plain`), for
every combination of traits (ring sizes, cut keys, ties, collision winners, digests,
chains, weights)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.apps.identify.search import _KeyHashes, count_agreements
from harness.core.servers import Server
from harness.recipes.constructions.client_traits import ClientTraits, route_plain
from tests.property.test_client_traits_property import clients

#: points per weight swept: small, so plain Python routes every count
MOST = 9


@settings(max_examples=60, deadline=None)
@given(params=clients(), weights=st.lists(st.sampled_from([1.0, 1.0, 2.0, 0.5, 3.0]),
                                          min_size=1, max_size=4),
       seed=st.integers(0, 2**16))
def test_every_count_agrees_with_its_plain_ring(params: dict[str, Any], weights: list[float],
                                                seed: int) -> None:
    rng = random.Random(seed)
    servers = [Server(f"s{i}:{rng.randrange(1, 12000)}", w) for i, w in enumerate(weights)]
    traits = ClientTraits.from_params(params)
    keys = [f"k{rng.randrange(10**6)}".encode() for _ in range(40)]
    if sum(traits.name_counts(servers)) == 0:
        return  # no ring at all (every share floored to 0): nothing to route
    observed = np.array(route_plain(traits, servers, keys), dtype=np.int64)
    hashes = _KeyHashes(keys).first(len(keys), traits.key_hash_name, traits.key_encoding,
                                    traits.key_max_bytes, traits.ring_size)
    vectors, agreement, _ = count_agreements(traits, servers, hashes, observed, MOST)
    assert len(vectors) == len(agreement) > 0
    for (counts, rule), measured in zip(vectors, agreement, strict=True):
        ring = ClientTraits.from_params({**params, **rule})
        assert tuple(ring.name_counts(servers)) == counts
        routed = np.array(route_plain(ring, servers, keys))
        assert measured == float(np.mean(routed == observed)), (counts, rule)
    if traits.points_per_weight <= MOST and (
            traits.chain == "none" or traits.weight_rounding == "half-even"):
        drawn = tuple(traits.name_counts(servers))
        assert agreement[[c for c, _ in vectors].index(drawn)] == 1.0
