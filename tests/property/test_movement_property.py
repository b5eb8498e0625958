"""Minimal movement, as a property: adding or removing one server moves keys only to or from it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.hashing import hash_many
from harness.core.ring import reference_owners
from harness.core.servers import Server
from harness.recipes.constructions.generator import generate_ring

pytestmark = pytest.mark.c_core

KEYS = hash_many("fnv1a-fmix32", [f"key-{i}".encode() for i in range(3000)])


@settings(max_examples=60, deadline=None)
@given(
    servers=st.integers(1, 12),
    points=st.integers(1, 40),
    weights=st.lists(st.integers(1, 4), min_size=13, max_size=13),
    hash_name=st.sampled_from(["fnv1a-fmix32", "md5-32", "crc32"]),
)
def test_add_moves_keys_only_to_the_new_server(
    servers: int, points: int, weights: list[int], hash_name: str
) -> None:
    """Every key whose owner changes after an add now belongs to the added server."""
    before_servers = [Server(f"s{i}", weights[i]) for i in range(servers)]
    after_servers = [*before_servers, Server("new", weights[12])]
    before = generate_ring(before_servers, points, hash_name)
    after = generate_ring(after_servers, points, hash_name)
    old = np.asarray(before.servers)[reference_owners(before, KEYS)]
    new = np.asarray(after.servers)[reference_owners(after, KEYS)]
    assert set(new[old != new]) <= {"new"}


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(2, 12), points=st.integers(1, 40), removed=st.integers(0, 11))
def test_remove_moves_keys_only_from_the_removed_server(
    servers: int, points: int, removed: int
) -> None:
    """Every key whose owner changes after a removal belonged to the removed server."""
    removed %= servers
    before_servers = [Server(f"s{i}") for i in range(servers)]
    after_servers = [s for i, s in enumerate(before_servers) if i != removed]
    before = generate_ring(before_servers, points, "fnv1a-fmix32")
    after = generate_ring(after_servers, points, "fnv1a-fmix32")
    old = np.asarray(before.servers)[reference_owners(before, KEYS)]
    new = np.asarray(after.servers)[reference_owners(after, KEYS)]
    assert set(old[old != new]) <= {f"s{removed}"}
