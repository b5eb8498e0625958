"""The algorithm contract on the ring: build, route, lookups, parameters checked like scenarios."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError, UnknownNameError
from harness.core.hashing import hash_many
from harness.core.ring import reference_owners
from harness.core.servers import Server, numbered_servers
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.generator import generate_ring
from harness.recipes.layouts import LAYOUTS

SERVERS = numbered_servers(20)
KEYS = [f"key-{i}".encode() for i in range(3000)]


def test_ring_routes_like_the_stage_one_runner() -> None:
    """ALGORITHMS["ring"] in cffi-packed gives the owners the ring and its key hash give."""
    ring = ALGORITHMS["ring"].build(SERVERS, points_per_weight=160, hash="blake2b-32",
                                    layout="cffi-packed")
    expected = reference_owners(generate_ring(SERVERS, 160), hash_many("blake2b-32", KEYS))
    assert ring.route(KEYS).dtype == np.uint16
    assert ring.route(KEYS).tolist() == expected.tolist()
    one = reference_owners(generate_ring(SERVERS, 160), hash_many("blake2b-32", [b"k1"]))
    assert ring.route([b"k1"]).tolist() == one.tolist()
    assert ring.nbytes == 6 * ring.entries and ring.form == "cffi-packed"


@pytest.mark.parametrize("layout", [name for name, cls in LAYOUTS.items() if cls.hash_bits == 32])
def test_every_form_answers_alike(layout: str) -> None:
    """The same ring in every 32-bit layout: route, lookup and lookup_many agree."""
    reference = RingAlgorithm.build(SERVERS, points_per_weight=40)
    form = reference.forms([layout])[layout]
    hashes = reference.hash_keys(KEYS)
    assert form.lookup_many(hashes).tolist() == reference.reference_owners(hashes).tolist()
    assert [form.lookup(int(h)) for h in hashes[:200]] == reference.reference_lookup_many(
        hashes[:200])
    assert getattr(form, "ring", None) is reference.ring  # forms share the points


def test_constructions_through_the_ring() -> None:
    """nginx and libketama are ring parameters; they take none of the generic ones."""
    nginx = ALGORITHMS["ring"].build([Server("10.0.0.1:80"), Server("10.0.0.2:80", 2)],
                                     construction="nginx")
    assert nginx.entries == 480 and nginx.key_bits == 32 and nginx.params["layout"] == (
        "numpy-aligned")
    keys = get_construction("nginx").key_hashes(KEYS[:10])
    assert nginx.hash_keys(KEYS[:10]).tolist() == keys.tolist()
    with pytest.raises(ScenarioError, match="hash must be left out: construction 'nginx'"):
        ALGORITHMS["ring"].build(SERVERS, construction="nginx", hash="md5-32")


def test_parameters_are_checked_with_scenario_messages() -> None:
    """Bad parameters name the algorithm and field, expected and received, as scenarios do."""
    cases: list[tuple[dict[str, Any], str]] = [
             ({"points_per_weight": 0}, "points_per_weight must be an integer from 1"),
             ({"hash": "sha1"}, "hash must be one of"),
             ({"layout": "cffi-packed", "hash": "blake2b-64"},
              "layout must be a layout that stores 64-bit hashes"),
             ({"point_name": "{server}"}, "point_name must be a name template"),
             ({"points": 3}, "unknown key 'points'")]
    for params, message in cases:
        with pytest.raises(ScenarioError, match=rf"algorithm 'ring': .*{message}"):
            ALGORITHMS["ring"].build(SERVERS, **params)
    with pytest.raises(HarnessError, match="at least one server"):
        ALGORITHMS["ring"].build([], points_per_weight=1)
    with pytest.raises(UnknownNameError, match="valid algorithm names: ring"):
        get_algorithm("nope")


def test_64_bit_ring_defaults_to_a_64_bit_layout() -> None:
    """With a 64-bit hash, the default layout is the 64-bit one."""
    wide = RingAlgorithm.build(SERVERS, hash="blake2b-64", points_per_weight=5)
    assert wide.params["layout"] == "numpy-aligned-64" and wide.key_bits == 64
    assert wide.hash_keys(KEYS[:3]).dtype == np.uint64


@settings(max_examples=30, deadline=None)
@given(servers=st.integers(1, 12), points=st.integers(1, 30), removed=st.data())
def test_exact_shares_sum_to_one_and_removal_moves_only_its_keys(
    servers: int, points: int, removed: st.DataObject,
) -> None:
    """Exact shares cover the ring; removing one server moves keys only away from it."""
    fleet = numbered_servers(servers + 1)
    before = RingAlgorithm.build(fleet, points_per_weight=points)
    assert before.exact_shares().sum() == pytest.approx(1.0)
    gone = removed.draw(st.integers(0, servers))
    after = RingAlgorithm.build([s for i, s in enumerate(fleet) if i != gone],
                                points_per_weight=points)
    hashes = before.hash_keys(KEYS[:500])
    names_before = np.array([s.name for s in fleet])[before.route(KEYS[:500])]
    names_after = np.array([s.name for s in after.servers])[after.lookup_many(hashes)]
    moved = names_before != names_after
    assert set(names_before[moved]) <= {fleet[gone].name}
