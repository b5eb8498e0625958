"""One rule for the recipe a change makes (`harness.recipes.changes`), which the scenario's
checks and the migration both use."""

from __future__ import annotations

from harness.recipes.changes import changed_params


def test_another_construction_drops_the_old_ones_own_parameters() -> None:
    """libmemcached's mode describes a libmemcached ring: moving to libketama drops it (it
    was refused as 'migration.to.mode must be left out' once libmemcached took a mode)."""
    assert changed_params("ring", {"construction": "libmemcached", "mode": "spy",
                                   "layout": "cffi-packed"},
                          {"construction": "libketama"}) == (
        "ring", {"construction": "libketama", "layout": "cffi-packed"})


def test_parameters_both_constructions_take_carry_over() -> None:
    """points to allocated keeps the points per unit weight, drops the points' hash."""
    assert changed_params("ring", {"construction": "points", "hash": "fnv1a-fmix32",
                                   "point_name": "{server}:{j}", "points_per_weight": 160},
                          {"construction": "allocated"}) == (
        "ring", {"construction": "allocated", "points_per_weight": 160})


def test_the_same_construction_keeps_everything_under_the_change() -> None:
    assert changed_params("ring", {"construction": "points", "points_per_weight": 160,
                                   "hash": "blake2b-32"}, {"points_per_weight": 16}) == (
        "ring", {"construction": "points", "points_per_weight": 16, "hash": "blake2b-32"})


def test_another_algorithm_takes_only_what_the_change_gives() -> None:
    assert changed_params("jump", {"hash": "xxh64"}, {"algorithm": "maglev",
                                                      "table_size": 4099}) == (
        "maglev", {"table_size": 4099})
