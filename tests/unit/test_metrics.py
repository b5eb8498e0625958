"""Metric formulas against hand-computed small cases and the articles' published figures."""

import math

import numpy as np
import pytest

from harness.core.ring import Ring
from harness.core.stats import arc_shares, cv, expected_collisions, floor_cv, theory_cv
from harness.metrics.balance import measure_balance
from harness.metrics.movement import measure_movement


def test_cv_is_population_std_over_mean() -> None:
    """cv([1, 3]) = 1/2: population std 1 over mean 2."""
    assert cv([1, 3]) == pytest.approx(0.5)


def test_theory_cv_matches_from_scratch_values() -> None:
    """N=100: k=1 gives 98.5% (sqrt(99/101)), k=1000 gives 3.15%, k=100,000 0.315%."""
    assert theory_cv([1] * 100) == pytest.approx(math.sqrt(99 / 101))
    assert theory_cv([1000] * 100) == pytest.approx(0.0315, abs=5e-5)
    assert theory_cv([100_000] * 100) == pytest.approx(0.00315, abs=5e-6)
    assert theory_cv([10_000] * 100) == pytest.approx(0.00995, abs=5e-6)


def test_floor_adds_poisson_noise_in_quadrature() -> None:
    """"Consistent Hashing from Scratch": N=100, k=1000, 200,000 keys: the floor is 3.86%."""
    assert floor_cv([1000] * 100, 200_000) == pytest.approx(0.0386, abs=5e-5)
    expected = math.sqrt(theory_cv([1000] * 100) ** 2 + 100 / 200_000)
    assert floor_cv([1000] * 100, 200_000) == pytest.approx(expected)


def test_arc_shares_by_hand_with_wrap() -> None:
    """Points at 10 (A), 45 (B), 80 (C): A owns the wrap arc (80, 2**32) + [0, 10]."""
    ring = Ring.from_points([10, 45, 80], [0, 1, 2])
    space = 2**32
    shares = arc_shares(ring, 3)
    assert shares.tolist() == pytest.approx([(10 + space - 80) / space, 35 / space, 35 / space])
    assert shares.sum() == pytest.approx(1.0)


def test_arc_shares_in_64_bits_sum_to_one() -> None:
    """64-bit arcs are exact too: two points at 0 and 2**63 split the space in halves."""
    ring = Ring.from_points(np.array([0, 2**63], dtype=np.uint64), [0, 1], bits=64)
    assert arc_shares(ring, 2).tolist() == [0.5, 0.5]


def test_weighted_balance_divides_by_weight() -> None:
    """A server of weight 2 holding twice the keys and arcs of one of weight 1 is balanced."""
    space = 2**32
    ring = Ring.from_points([space // 3, space - 1], [0, 1])  # shares 1/3 and 2/3
    owners = np.array([0] * 100 + [1] * 200, dtype=np.uint16)
    balance = measure_balance(ring, owners, weights=[1, 2], points_per_server=[1, 2])
    assert balance.cv_keys == pytest.approx(0.0)
    assert balance.cv_arcs == pytest.approx(0.0, abs=1e-9)
    assert (balance.min_keys, balance.max_keys, balance.max_over_mean) == (100, 200, 1.0)


def test_expected_collisions_birthday() -> None:
    """8M points in 32 bits: about 7,450 expected (docs/design.md); none to speak of in 64 bits."""
    assert expected_collisions(8_000_000, 32) == pytest.approx(7446, abs=1)
    assert expected_collisions(8_000_000, 64) < 1e-5
    # Small case by hand: 2 points in 2 slots collide with probability 1/2.
    assert expected_collisions(2, 1) == pytest.approx(0.5)


def test_movement_semicolony_example() -> None:
    """The simulator's example: adding D at 60 moves one key of five (to D), four with mod N."""
    keys = np.array([5, 30, 50, 70, 90], dtype=np.uint32)
    before = np.array([0, 1, 2, 2, 0], dtype=np.uint16)  # A B C C A
    after = np.array([0, 1, 3, 2, 0], dtype=np.uint16)  # A B D C A
    move = measure_movement("add", "D", keys, before, after, ("A", "B", "C"),
                            ("A", "B", "C", "D"), changed_server_share=0.15)
    assert (move.ring_moved, move.mod_n_moved) == (1, 4)
    assert move.ring_only_changed_server


def test_movement_flags_keys_moving_between_other_servers() -> None:
    """A key that moves between two unchanged servers breaks the ring's promise and is flagged."""
    keys = np.array([1, 2], dtype=np.uint32)
    move = measure_movement("remove", "C", keys, np.array([0, 2], dtype=np.uint16),
                            np.array([1, 0], dtype=np.uint16),  # A C before, B A after
                            ("A", "B", "C"), ("A", "B"), changed_server_share=0.3)
    assert not move.ring_only_changed_server


def test_movement_compares_owners_by_name_not_by_index() -> None:
    """Removing B renumbers C from 2 to 1: a key that stays on C has not moved."""
    keys = np.array([7, 8], dtype=np.uint32)
    move = measure_movement("remove", "B", keys, np.array([2, 1], dtype=np.uint16),
                            np.array([1, 0], dtype=np.uint16),  # C B before, C A after
                            ("A", "B", "C"), ("A", "C"), changed_server_share=0.3)
    assert move.ring_moved == 1 and move.ring_only_changed_server
