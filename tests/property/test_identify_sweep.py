"""`identify`'s count sweep (`search.count_agreements`) reads, at every count of points at
once, the agreement each ring of client traits has with observed owners; it must be the
agreement of that very ring routed by its plain-Python definition (`route_plain`), for
every combination of traits (ring sizes, cut keys, ties, collision winners, digests,
chains, weights). And the key truncations it tries (`search.truncations`) are exactly the
lengths the observations allow, against a brute-force reading of every length."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.apps.identify import search
from harness.apps.identify.observations import Observations
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


def allowed(keys: list[bytes], owners: list[int], n: int) -> bool:
    """No two keys that share their first n bytes were seen on different servers."""
    return all(o == p for k, o in zip(keys, owners, strict=True)
               for q, p in zip(keys, owners, strict=True) if k[:n] == q[:n])


@settings(max_examples=80, deadline=None)
@given(data=st.lists(st.tuples(st.text(alphabet="ab-", min_size=1, max_size=20)
                               .map(str.encode), st.integers(0, 2)),
                     min_size=1, max_size=40, unique_by=lambda pair: pair[0]))
def test_truncations_are_the_lengths_the_data_allows(data: list[tuple[bytes, int]]) -> None:
    keys = [k for k, _ in data]
    owners = [o for _, o in data]
    servers = (Server("a"), Server("b"), Server("c"))
    cuts = search.truncations(Observations(tuple(keys), tuple(owners), servers, "o", "s"))
    longest = max(map(len, keys))
    least = next(n for n in range(longest + 1) if allowed(keys, owners, n))
    assert len(cuts) == len(set(cuts)) <= search.MAX_TRUNCATIONS
    for n in cuts:
        assert least <= n < longest and allowed(keys, owners, n)
    common = [n for n in search.KEY_TRUNCATIONS if least <= n < longest]
    derived = range(least, min(least + search.DERIVED_TRUNCATIONS, longest))
    assert set(cuts) <= set(common) | set(derived)
    kept = search.MAX_TRUNCATIONS - search.DERIVED_TRUNCATIONS
    assert set(common[:kept]) <= set(cuts)
