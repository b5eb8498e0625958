"""A ring filtered from its fleet's points is the ring built afresh for those servers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.fleet_points import FleetPoints
from harness.core.native import lean as c_lean
from harness.core.ring import CollisionWinner, Ring
from harness.core.servers import Server, servers_with
from harness.metrics.migration.metric import Migration
from harness.metrics.process import ProcessCost
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.parts import parts_builder
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.constructions.generator import points_for
from harness.recipes.constructions.points import PointsConstruction
from harness.report import markdown
from harness.report.sections import result_report
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario


def _words(positions: list[int], owners: list[int]) -> np.ndarray:
    words = np.asarray(positions, dtype=np.uint64) << np.uint64(16)
    words |= np.asarray(owners, dtype=np.uint64)
    return words


def _same(a: Ring, b: Ring) -> None:
    assert np.array_equal(a.positions, b.positions)
    assert np.array_equal(a.owners, b.owners)
    assert (a.collisions, a.servers) == (b.collisions, b.servers)


@st.composite
def _fleet_points(draw: st.DrawFn) -> tuple[list[int], list[int], int, list[int]]:
    """Points of up to 8 servers in a space of 40 positions (collisions everywhere), and a
    rising, non-empty choice of servers."""
    servers = draw(st.integers(1, 8))
    counts = draw(st.lists(st.integers(1, 12), min_size=servers, max_size=servers))
    owners = [s for s, c in enumerate(counts) for _ in range(c)]
    positions = draw(st.lists(st.integers(0, 39), min_size=len(owners), max_size=len(owners)))
    members = sorted(draw(st.sets(st.integers(0, servers - 1), min_size=1)))
    return positions, owners, servers, members


@settings(max_examples=300, deadline=None)
@given(_fleet_points(), st.sampled_from(["lowest", "highest"]))
def test_a_filtered_ring_equals_the_ring_of_its_servers_points(
        drawn: tuple[list[int], list[int], int, list[int]], winner: CollisionWinner) -> None:
    """Collisions included, lowest or highest owner kept: the sub-ring is `Ring.from_points`
    of its servers' points, renumbered in order."""
    positions, owners, servers, members = drawn
    names = tuple(f"s{i}" for i in range(servers))
    counts = [owners.count(s) for s in range(servers)]
    points = FleetPoints.from_words(_words(positions, owners), names, counts, winner)
    renumber = {old: new for new, old in enumerate(members)}
    mine = [(p, renumber[o]) for p, o in zip(positions, owners, strict=True) if o in renumber]
    fresh = Ring.from_points([p for p, _ in mine], [o for _, o in mine], bits=32,
                             servers=tuple(names[m] for m in members),
                             collision_winner=winner)
    _same(points.ring_of(members), fresh)


SERVERS = [Server(f"edge-{i}", w) for i, w in enumerate([1, 5, 25, 1, 2, 0.5, 3, 7])]


@settings(max_examples=40, deadline=None)
@given(st.sets(st.integers(0, len(SERVERS) - 1), min_size=1),
       st.sampled_from([("crc32", "{server}:{j}"), ("fnv1a-fmix32", "{server}-{j}"),
                        ("blake2b-32", "{j}{server}"), ("md5-32", "{server}:{j:04d}")]))
def test_a_construction_part_equals_its_ring_built_afresh(
        chosen: set[int], recipe: tuple[str, str]) -> None:
    """The points construction's fleet points give every part the ring `build_ring` gives
    it, in C-formatted and Python-formatted names alike."""
    hash_name, point_name = recipe
    construction = PointsConstruction(hash=hash_name, point_name=point_name,
                                      points_per_weight=20)
    points = construction.fleet_points(SERVERS)
    assert points is not None
    members = sorted(chosen)
    _same(points.ring_of(members), construction.build_ring([SERVERS[i] for i in members]))


def test_a_keyed_hash_part_equals_its_ring_built_afresh() -> None:
    """SipHash's points are hashed by Python under the key, and filter alike."""
    construction = PointsConstruction(hash="siphash24-32", hash_key="00" * 16,
                                      points_per_weight=30)
    points = construction.fleet_points(SERVERS)
    assert points is not None
    _same(points.ring_of([1, 4, 6]), construction.build_ring([SERVERS[i] for i in (1, 4, 6)]))


def test_64_bit_points_have_no_fleet_points_and_parts_are_built_afresh() -> None:
    """blake2b-64 leaves no room for an owner in a word: no fleet points, and the parts
    builder builds each part from scratch, equal to `build`."""
    assert PointsConstruction(hash="blake2b-64").fleet_points(SERVERS) is None
    build = parts_builder("ring", SERVERS, {"hash": "blake2b-64", "points_per_weight": 10,
                                            "layout": "numpy-packed-64"})
    part = [SERVERS[0], SERVERS[3]]
    fresh = RingAlgorithm.build(part, hash="blake2b-64", points_per_weight=10,
                                layout="numpy-packed-64")
    built = build(part)
    assert built.ring is not None
    _same(built.ring, fresh.ring)


def test_parts_of_other_algorithms_are_their_builds() -> None:
    """An algorithm without a ring (jump) is built afresh for each part."""
    unit = [Server(f"n{i}", 1) for i in range(6)]
    build = parts_builder("jump", unit, {})
    keys = [f"k{i}".encode() for i in range(200)]
    part = unit[1:4]
    assert np.array_equal(build(part).route(keys), get_algorithm("jump").build(part).route(keys))


def test_parts_share_one_fleet_points_through_the_cache() -> None:
    """Two builders of one recipe (whatever their layouts) hash the fleet's points once."""
    cache: dict[str, FleetPoints | None] = {}
    params = {"points_per_weight": 10}
    first = parts_builder("ring", SERVERS, {**params, "layout": "none"}, cache=cache)
    second = parts_builder("ring", SERVERS, {**params, "layout": "numpy-aligned"}, cache=cache)
    assert len(cache) == 1
    a, b = first(SERVERS[2:5]), second(SERVERS[2:5])
    assert a.ring is not None and b.ring is not None
    _same(a.ring, b.ring)
    assert (a.form, b.form) == ("none", "numpy-aligned")


def test_refusals() -> None:
    """Members must be rising fleet indexes, a part must be the fleet's own servers, and
    the C pass never writes past the room it is given."""
    points = FleetPoints.from_words(_words([5, 9, 9], [0, 1, 2]), ("a", "b", "c"), [1, 1, 1])
    for members in ([], [1, 0], [0, 0], [3], [-1]):
        with pytest.raises(HarnessError):
            points.ring_of(members)
    with pytest.raises(HarnessError, match="3 words for 3 servers of 4 points"):
        FleetPoints.from_words(_words([1, 2, 3], [0, 1, 2]), ("a", "b", "c"), [1, 1, 2])
    build = parts_builder("ring", SERVERS, {"points_per_weight": 5})
    with pytest.raises(HarnessError, match="some of its servers"):
        build([Server("stranger", 1)])
    with pytest.raises(HarnessError, match="some of its servers"):
        build([Server(SERVERS[0].name, 99)])
    sub_index = np.full(2**16, 0xFFFF, dtype=np.uint16)
    sub_index[:3] = [0, 1, 2]
    with pytest.raises(HarnessError, match="more than 1 points"):
        c_lean.sub_split_packed(_words([1, 2, 3], [0, 1, 2]), sub_index, False, 1)


PROCESS = """
[servers]
count = 24
seed = 3
weights = {{ values = [1, 5, 25], shares = [0.5, 0.3, 0.2] }}
capabilities = {{ pci = 0.6, eu = 0.6, video = 0.6 }}
[generator]
points_per_weight = {points}
[keys]
count = 2_000
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
[process]
layouts = ["numpy-aligned", "numpy-packed", "bucketed"]
[migration]
to = {{ points_per_weight = 2 }}
cache_objects = 50
universe = 5_000
requests_per_stage = 2_000
warmup_requests = 5_000
"""


def test_a_small_copy_of_the_6gb_process_matches_rings_built_afresh(
        write_scenario: Callable[[str], Path]) -> None:
    """The 6 GB scenario's path at a small size: every ring of the process, filtered from the
    fleet's points, has the entries, bytes and balance of the same ring built afresh, and
    every ring's migration moves what the two fresh rings disagree on."""
    scenario = load_scenario(write_scenario(PROCESS.format(points=20)))
    (run,) = run_scenario(scenario, show_progress=False).runs
    cost, migration = run.figure("process"), run.figure("migration")
    assert isinstance(cost, ProcessCost) and isinstance(migration, Migration)
    assert cost.timing is not None and cost.timing.checked_rings == 2
    assert cost.timing.points == sum(points_for(s.weight, 20) for s in scenario.ring_servers())
    servers, capabilities = scenario.ring_servers(), scenario.ring_capabilities()
    names = [f"object-{i}".encode() for i in range(5_000)]
    assert migration.rings is not None
    for ring_cost, moved in zip(cost.rings, migration.rings, strict=True):
        fleet = servers_with(servers, capabilities, ring_cost.requires)
        fresh = RingAlgorithm.build(fleet, points_per_weight=20, layout="numpy-aligned")
        assert fresh.ring is not None
        assert ring_cost.entries == fresh.ring.entries
        assert ring_cost.bytes["numpy-aligned"] == fresh.nbytes + 2 * len(fleet)
        shares = fresh.exact_shares() / np.array([s.weight for s in fleet])
        assert ring_cost.cv_arcs == pytest.approx(float(shares.std() / shares.mean()))
        after = RingAlgorithm.build(fleet, points_per_weight=2, layout="numpy-aligned")
        differ = fresh.route(names) != after.route(names)
        assert moved.moved_fraction == float(differ.mean())


def test_a_sweep_point_at_the_new_recipe_has_no_migration(
        write_scenario: Callable[[str], Path]) -> None:
    """Sweeping 20 and 2 points with a migration to 2: the second point has nothing to
    migrate and records no migration; the page opens with both processes in each layout."""
    text = PROCESS.format(points="[20, 2]")
    result = run_scenario(load_scenario(write_scenario(text)), show_progress=False)
    first, second = result.runs
    assert first.figure("migration") is not None
    assert second.figure("migration") is None
    before, after = first.figure("process"), second.figure("process")
    assert isinstance(before, ProcessCost) and isinstance(after, ProcessCost)
    page = markdown.report(result_report(result))
    assert page.count("## Migration") == 1
    summary = page[page.index("## The process in each layout, and after the cut"):]
    row = next(line for line in summary.splitlines() if line.startswith("| numpy-packed"))
    change = after.total_bytes["numpy-packed"] / before.total_bytes["numpy-packed"] - 1
    assert f"{100 * change:.2f}%" in row
    assert summary.index("The process in each") < summary.index("## Process (k=20)")
