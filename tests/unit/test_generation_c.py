"""Point generation and the lean ring in C against their Python and numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.hashing import HASHES
from harness.core.native import generate as c_generate
from harness.core.native import lean as c_lean
from harness.core.ring import CollisionWinner, Ring, sort_points_reference
from harness.core.servers import Server, numbered_servers
from harness.core.stats import arc_shares, arc_shares_reference
from harness.recipes.constructions.generator import (
    generate_ring,
    generate_ring_reference,
    parse_template,
)
from harness.recipes.constructions.libketama import LibketamaConstruction
from harness.recipes.constructions.nginx import NginxConstruction

pytestmark = pytest.mark.c_core

# Names with non-ASCII letters, braces, colons and digits: what a template can meet.
NAMES = st.text(
    alphabet=st.sampled_from("ab09:-_.é字🙂{} "), min_size=0, max_size=12
)
# Weights that round both ways at 0.5 (Python's round goes to even).
WEIGHTS = st.sampled_from([0.5, 1.0, 1.5, 2.0, 2.5, 0.25, 3.0, 0.01])
SERVERS = st.lists(
    st.builds(Server, NAMES, WEIGHTS), min_size=1, max_size=6, unique_by=lambda s: s.name
)
# Templates of fields and literal text (C formats them) and a few Python-only ones.
LITERALS = st.text(alphabet=st.sampled_from("x:-é/ "), max_size=3)
C_TEMPLATES = st.lists(
    st.one_of(st.just("{server}"), st.just("{j}"), st.just("{{"), st.just("}}"), LITERALS),
    min_size=0, max_size=5,
).map("".join)
PYTHON_TEMPLATES = st.sampled_from(["{j:03d}{server}", "{server!r}:{j}", "{server:>6}-{j}"])


def _same_ring(got: Ring, expected: Ring) -> None:
    assert got.positions.dtype == expected.positions.dtype
    np.testing.assert_array_equal(got.positions, expected.positions)
    np.testing.assert_array_equal(got.owners, expected.owners)
    assert got.collisions == expected.collisions
    assert got.servers == expected.servers and got.bits == expected.bits


@settings(max_examples=150, deadline=None)
@given(SERVERS, st.integers(1, 40), st.sampled_from(sorted(HASHES)),
       st.one_of(C_TEMPLATES, PYTHON_TEMPLATES))
def test_generated_ring_equals_the_python_reference(
    servers: list[Server], points: int, hash_name: str, template: str
) -> None:
    """Random servers, weights, hashes and templates: C and Python give the same ring."""
    _same_ring(generate_ring(servers, points, hash_name, template),
               generate_ring_reference(servers, points, hash_name, template))


@pytest.mark.parametrize(
    ("template", "in_c"),
    [("{server}:{j}", True), ("{j}{{{server}}}", True), ("", True), ("{j:04d}", False),
     ("{server!s}", False), ("{0}", False), ("{server.real}", False), ("{", False)],
)
def test_templates_formatted_in_c(template: str, in_c: bool) -> None:
    """Only `{server}`, `{j}` and literal text are formatted in C; the rest falls back."""
    assert (parse_template(template) is not None) is in_c


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_generation_does_not_depend_on_threads(threads: int) -> None:
    """Servers are split over threads; every split writes the same points."""
    servers = [s.name.encode() for s in numbered_servers(5)]
    literals, segments = parse_template("{server}/{j}") or (b"", [])
    one, _ = c_generate.generate_points("blake2b-32", literals, segments, servers,
                                        [3, 0, 50, 1, 9], 1)
    many, _ = c_generate.generate_points("blake2b-32", literals, segments, servers,
                                         [3, 0, 50, 1, 9], threads)
    np.testing.assert_array_equal(one, many)


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_64_bit_sort_does_not_depend_on_threads(threads: int) -> None:
    """The top digit's 256 parts are sorted by several threads; the ring is the same."""
    rng = np.random.default_rng(3)
    positions = rng.integers(0, 2**64, 5000, dtype=np.uint64, endpoint=False)
    positions[::7] = positions[0]  # a long run of equal positions
    owners = rng.integers(0, 300, 5000).astype(np.uint16)
    expected_positions, expected_owners, dropped = sort_points_reference(positions, owners)
    kept = c_lean.sort_dedupe64(positions, owners, False, threads)
    np.testing.assert_array_equal(positions[:kept], expected_positions)
    np.testing.assert_array_equal(owners[:kept], expected_owners)
    assert len(positions) - kept == dropped


POINTS = st.integers(1, 200).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 40), min_size=n, max_size=n),
                        st.lists(st.integers(0, 9), min_size=n, max_size=n))
)


@settings(max_examples=200, deadline=None)
@given(POINTS, st.sampled_from([32, 64]), st.sampled_from(["lowest", "highest"]),
       st.sampled_from([1, 2**16 - 7, 2**31 + 3, 0x9E3779B97F4A7C15]))
def test_lean_sort_equals_lexsort(
    points: tuple[list[int], list[int]], bits: int, winner: CollisionWinner, spread: int
) -> None:
    """Sorting and de-duplication in C equal numpy's lexsort, many duplicates included."""
    raw_positions, raw_owners = points
    dtype = np.uint32 if bits == 32 else np.uint64
    # Few distinct values (many duplicates), multiplied (wrapping) so that they fall in
    # different top digits and 16-bit buckets, or all in one.
    positions = np.asarray(raw_positions, dtype=np.uint64) * np.uint64(spread)
    positions = (positions & np.uint64(2**bits - 1)).astype(dtype)
    owners = np.asarray(raw_owners, dtype=np.uint16)
    ring = Ring.from_points(positions, owners, bits=bits, collision_winner=winner)
    expected_positions, expected_owners, dropped = sort_points_reference(positions, owners, winner)
    np.testing.assert_array_equal(ring.positions, expected_positions)
    np.testing.assert_array_equal(ring.owners, expected_owners)
    assert ring.collisions == dropped


@pytest.mark.parametrize("hash_name", ["blake2b-32", "blake2b-64"])
@pytest.mark.parametrize("servers", [1, 7, 300])
def test_arc_shares_equal_the_numpy_reference_bit_for_bit(hash_name: str, servers: int) -> None:
    """The C arc sums add the same doubles in the same order as the weighted bincount."""
    ring = generate_ring(numbered_servers(servers), 37, hash_name)
    assert np.array_equal(arc_shares(ring, servers + 1), arc_shares_reference(ring, servers + 1))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.builds(Server, NAMES.filter(bool), st.sampled_from([1, 2, 3])),
                min_size=1, max_size=5, unique_by=lambda s: s.name))
def test_constructions_equal_their_python_reference(servers: list[Server]) -> None:
    """nginx's CRC-32 chains and libketama's MD5 digests: C and Python give the same ring."""
    for construction in (NginxConstruction(), LibketamaConstruction()):
        _same_ring(construction.build_ring(servers), construction.build_ring_reference(servers))
