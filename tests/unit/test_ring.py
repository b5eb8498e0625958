"""The ring convention, the collision rule and the worked example of Semicolony's simulator."""

import numpy as np
import pytest

from harness.core.errors import HarnessError
from harness.core.ring import Ring, reference_lookup, reference_lookup_many
from harness.core.servers import Server, numbered_servers
from harness.recipes.constructions.generator import generate_ring

pytestmark = pytest.mark.c_core


def test_semicolony_worked_example() -> None:
    """Semicolony: A=10, B=45, C=80; keys 5/30/50/70/90 go to A,B,C,C,A; D at 60 moves only 50."""
    a, b, c, d = range(4)
    keys = [5, 30, 50, 70, 90]
    before = Ring.from_points([10, 45, 80], [a, b, c])
    after = Ring.from_points([10, 45, 80, 60], [a, b, c, d])
    assert reference_lookup_many(before, keys) == [a, b, c, c, a]
    assert reference_lookup_many(after, keys) == [a, b, d, c, a]
    moved = [k for k, x, y in zip(keys, reference_lookup_many(before, keys),
                                  reference_lookup_many(after, keys), strict=True) if x != y]
    assert moved == [50]
    # mod N moves four of the five keys (the simulator's table).
    assert sum(k % 3 != k % 4 for k in keys) == 4


def test_reference_lookup_wraps_and_hits_exactly() -> None:
    """A key equal to a position belongs to that point; a key past the last wraps to the first."""
    positions, owners = [10, 20], [7, 8]
    assert reference_lookup(positions, owners, 10) == 7
    assert reference_lookup(positions, owners, 11) == 8
    assert reference_lookup(positions, owners, 21) == 7
    assert reference_lookup(positions, owners, 0) == 7


def test_collisions_keep_lowest_server_index() -> None:
    """Equal positions keep the point of the lowest server index, whatever the input order."""
    ring = Ring.from_points([50, 50, 20, 50], [3, 1, 2, 2])
    assert ring.positions.tolist() == [20, 50]
    assert ring.owners.tolist() == [2, 1]
    assert ring.collisions == 2


def test_collisions_can_keep_highest_server_index() -> None:
    """collision_winner="highest" keeps the point of the highest server index of equal positions."""
    ring = Ring.from_points([50, 50, 20, 50], [3, 1, 2, 2], collision_winner="highest")
    assert ring.positions.tolist() == [20, 50]
    assert ring.owners.tolist() == [2, 3]
    assert ring.collisions == 2


def test_64_bit_positions_from_python_ints_stay_exact() -> None:
    """Python ints above 2**63 keep every bit (numpy alone would round them through float64)."""
    top = 2**64 - 1
    ring = Ring.from_points([top, top - 1, 2**63 + 1, 5], [0, 1, 2, 3], bits=64)
    assert ring.positions.tolist() == [5, 2**63 + 1, top - 1, top]
    assert ring.owners.tolist() == [3, 2, 1, 0]
    assert ring.collisions == 0


def test_empty_ring_is_an_error() -> None:
    """A ring with no points cannot answer lookups and is refused."""
    with pytest.raises(HarnessError, match="at least one point"):
        Ring.from_points(np.array([], dtype=np.uint32), np.array([], dtype=np.uint16))


def test_positions_out_of_range_are_refused() -> None:
    """A 32-bit ring refuses positions of 2**32 and above."""
    with pytest.raises(HarnessError, match=r"0..2\*\*32-1"):
        Ring.from_points([2**32], [0])


def test_weighted_point_counts_match_from_scratch() -> None:
    """Weights 1, 2, 10 at 160 points per unit weight make 2,080 points ("from Scratch" post)."""
    servers = [Server("A", 1), Server("B", 2), Server("C", 10)]
    ring = generate_ring(servers, 160)
    assert ring.entries + ring.collisions == 2080
    counts = np.bincount(ring.owners, minlength=3)
    assert counts.tolist() == [160, 320, 1600]


def test_generation_counts_collisions_in_narrow_hashes() -> None:
    """Points that land on taken positions are dropped and counted; 64-bit positions are uint64."""
    # A naming scheme without {j} gives every point of a server the same name.
    ring = generate_ring(numbered_servers(5), 4, "crc32", point_name="{server}")
    assert ring.entries == 5 and ring.collisions == 15
    assert sorted(ring.owners.tolist()) == [0, 1, 2, 3, 4]
    big = generate_ring(numbered_servers(50), 2000, "md5-32")
    assert big.entries + big.collisions == 100_000
    assert np.all(np.diff(big.positions.astype(np.int64)) > 0)
    wide = generate_ring(numbered_servers(3), 10, "blake2b-64")
    assert wide.positions.dtype == np.uint64 and wide.bits == 64


def test_too_many_servers_for_uint16_owners() -> None:
    """More than 65,535 servers cannot be told apart by uint16 owners."""
    with pytest.raises(HarnessError, match="65535"):
        generate_ring(numbered_servers(65_536), 1)
