"""Every combination of client traits routes like its plain-Python definition
(`client_traits.route_plain`): the ring the `points` construction builds, looked up the way
every layout looks up ("first point >="), against lists and `bisect`."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.ring import Ring
from harness.core.servers import Server
from harness.core.trait_hashes import DIGEST_HASHES, TRAIT_HASHES
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.client_traits import (
    CHAINS,
    KEY_ENCODINGS,
    SERVER_FORMS,
    TIES,
    WEIGHT_ROUNDINGS,
    WINNERS,
    ClientTraits,
    route_plain,
)

NAMES = st.text(alphabet=st.sampled_from("ab:1é€\0/-"), min_size=1, max_size=8)


@st.composite
def clients(draw: st.DrawFn) -> dict[str, Any]:
    """A valid combination of traits, small enough for plain Python."""
    hash_name = draw(st.sampled_from(sorted(TRAIT_HASHES)))
    bits = TRAIT_HASHES[hash_name].bits
    same_width = sorted(n for n, h in TRAIT_HASHES.items() if h.bits == bits)
    chain = draw(st.sampled_from(CHAINS))
    per_digest = 1
    if hash_name in DIGEST_HASHES and chain == "none":
        per_digest = draw(st.integers(1, DIGEST_HASHES[hash_name].words))
    ring_size = draw(st.sampled_from([0, 2, 3, 1000, 2**31, 2**bits]))
    return {
        "hash": hash_name, "key_hash": draw(st.sampled_from(["same", *same_width])),
        "point_name": draw(st.sampled_from(["{server}:{j}", "{server}-{j}", "{j}{server}"])),
        "points_per_weight": draw(st.integers(1, 12)), "points_per_digest": per_digest,
        "first_point": draw(st.integers(0, 1)), "chain": chain,
        "chain_name": draw(st.sampled_from(["{server}", "x{server}"])),
        "server_form": draw(st.sampled_from(SERVER_FORMS)),
        "weight_rounding": draw(st.sampled_from(WEIGHT_ROUNDINGS)),
        "tie": draw(st.sampled_from(TIES)), "collision_winner": draw(st.sampled_from(WINNERS)),
        "key_encoding": draw(st.sampled_from(KEY_ENCODINGS)),
        "key_max_bytes": draw(st.sampled_from([0, 1, 3])), "ring_size": ring_size,
    }


def first_at_or_after(ring: Ring, hashes: np.ndarray[Any, Any]) -> list[int]:
    return [int(ring.owners[i % ring.entries]) for i in np.searchsorted(ring.positions, hashes)]


@settings(max_examples=150, deadline=None)
@given(params=clients(),
       names=st.lists(NAMES, min_size=1, max_size=5, unique=True),
       weights=st.lists(st.sampled_from([1, 2, 0.5, 1.5, 3.25]), min_size=5, max_size=5),
       keys=st.lists(st.binary(max_size=6) | NAMES.map(str.encode), min_size=1, max_size=30))
def test_every_combination_routes_like_plain_python(
        params: dict[str, Any], names: list[str], weights: list[float],
        keys: list[bytes]) -> None:
    servers = [Server(name, weight) for name, weight in zip(names, weights, strict=False)]
    construction = get_construction("points", **params)
    traits = ClientTraits.from_params(params)
    if construction.check_servers(servers) is not None:
        assert sum(traits.name_counts(servers)) == 0
        return
    ring = construction.build_ring(servers)
    assert ring.bits == construction.bits
    owners = first_at_or_after(ring, construction.key_hashes(keys))
    assert owners == route_plain(traits, servers, keys)


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.binary(max_size=4), min_size=1, max_size=20),
       hash_name=st.sampled_from(["crc32", "fnv1a-32"]))
def test_ties_on_a_tiny_ring(keys: list[bytes], hash_name: str) -> None:
    """A ring of 3 positions: nearly every key lands on a point, so ties decide."""
    servers = [Server("a"), Server("b"), Server("c")]
    for tie in TIES:
        params = {"hash": hash_name, "points_per_weight": 2, "ring_size": 3, "tie": tie}
        construction = get_construction("points", **params)
        ring = construction.build_ring(servers)
        assert first_at_or_after(ring, construction.key_hashes(keys)) == route_plain(
            ClientTraits.from_params(params), servers, keys)
