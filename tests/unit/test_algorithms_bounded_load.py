"""bounded-load: HAProxy's hash-balance-factor rule on a ring, in C and in both references;
no server ever holds more than its cap; bad parameters refused before any work."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.errors import HarnessError, ScenarioError
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.bounded_load import (
    BoundedLoadAlgorithm,
    slots_haproxy,
    slots_telescoped,
)
from harness.report.results import load_result

pytestmark = pytest.mark.c_core

HASHES = ("blake2b-32", "blake2b-64")


def _requests(draw: st.DrawFn, bits: int) -> np.ndarray:
    """A request sequence: distinct hashes, or a few hot hashes repeated (zipf-like)."""
    seed = draw(st.integers(0, 2**32))
    count = draw(st.integers(1, 600))
    rng = np.random.default_rng(seed)
    universe = rng.integers(0, 2**bits, draw(st.integers(1, 300)), dtype=np.uint64,
                            endpoint=False)
    if draw(st.booleans()):
        ranks = rng.zipf(draw(st.sampled_from([1.1, 1.5, 2.5])), count) - 1
        picked = universe[ranks % len(universe)]
    else:
        picked = rng.integers(0, 2**bits, count, dtype=np.uint64, endpoint=False)
    return picked.astype(np.uint32 if bits == 32 else np.uint64)


@st.composite
def cases(draw: st.DrawFn) -> tuple[BoundedLoadAlgorithm, np.ndarray]:
    weights = draw(st.lists(st.integers(1, 5), min_size=1, max_size=12))
    fleet = [Server(f"s{i}", w) for i, w in enumerate(weights)]
    hash_name = draw(st.sampled_from(HASHES))
    algorithm = BoundedLoadAlgorithm.build(
        fleet, balance_factor=draw(st.sampled_from([101, 110, 125, 150, 200, 1000])),
        hash=hash_name, points_per_weight=draw(st.integers(1, 8)))
    return algorithm, _requests(draw, 32 if hash_name.endswith("32") else 64)


@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_every_path_gives_the_same_owner_sequence(
    case: tuple[BoundedLoadAlgorithm, np.ndarray],
) -> None:
    """C batch, the C stream one request at a time, the vectorised and the plain reference
    route the same request sequence to the same servers."""
    algorithm, requests = case
    expected = algorithm.reference_owners(requests).tolist()
    assert algorithm.reference_lookup_many(requests) == expected
    assert algorithm.lookup_many(requests).tolist() == expected
    algorithm.reset()
    assert [algorithm.lookup(int(h)) for h in requests] == expected


@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_no_server_ever_holds_more_than_its_cap(
    case: tuple[BoundedLoadAlgorithm, np.ndarray],
) -> None:
    """Each request goes to a server whose load was below its slots at that moment, and no
    load ends above the paper's cap: ceil(w / W * ceil(requests * factor / 100))."""
    algorithm, requests = case
    # A server can lose every point only to collisions; then the rule cannot place requests.
    assume(len(set(algorithm.ring_points.owners.tolist())) == len(algorithm.servers))
    owners = algorithm.lookup_many(requests).tolist()
    weights, cumulative = algorithm.weights, algorithm.cumulative
    total, factor = sum(weights), algorithm.balance_factor
    loads = [0] * len(weights)
    for served, s in enumerate(owners):
        assert loads[s] < slots_haproxy(served, factor, weights[s], cumulative[s], total)
        loads[s] += 1
    tot = math.ceil(len(requests) * factor / 100)
    for load, weight in zip(loads, weights, strict=True):
        assert load <= max(1, math.ceil(weight * tot / total))


@settings(max_examples=300, deadline=None)
@given(weights=st.lists(st.integers(1, 300), min_size=1, max_size=30),
       served=st.integers(0, 10**9), factor=st.integers(101, 10**6))
def test_slots_are_haproxys_and_add_up_to_the_total(
    weights: list[int], served: int, factor: int,
) -> None:
    """HAProxy's expression equals the telescoped one, and the slots add up to at least
    ceil((served + 1) * factor / 100) (exactly that unless a server is raised to 1)."""
    total = sum(weights)
    cumulative = [sum(weights[:i]) for i in range(len(weights))]
    slots = [slots_haproxy(served, factor, w, c, total) for w, c in zip(weights, cumulative,
                                                                        strict=True)]
    assert slots == [slots_telescoped(served, factor, w, c, total)
                     for w, c in zip(weights, cumulative, strict=True)]
    tot = -(-(served + 1) * factor // 100)
    assert sum(slots) >= tot > served
    if all(s > 1 for s in slots):
        assert sum(slots) == tot


def test_a_full_server_passes_the_request_clockwise() -> None:
    """Two servers of weight 1 at 125%: the same key four times goes a, b, a, b.

    Request 0: 2 slots, 1 each; a is free. Request 1: 3 slots, a 1 and b 2; a is full,
    so on to b. Request 2: 4 slots, 2 each; a holds 1. Request 3: 5 slots, a 2 and b 3;
    a is full again."""
    algorithm = BoundedLoadAlgorithm.build([Server("a"), Server("b")], points_per_weight=3)
    ring = algorithm.ring_points
    at_a = int(ring.positions[ring.owners.tolist().index(0)])
    requests = np.full(4, at_a, dtype=np.uint32)
    assert algorithm.lookup_many(requests).tolist() == [0, 1, 0, 1]
    # The plain ring sends all four to a.
    plain = ALGORITHMS["ring"].build([Server("a"), Server("b")], points_per_weight=3)
    assert plain.lookup_many(requests).tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("hash_name", HASHES)
def test_a_bound_that_never_binds_routes_as_the_ring(hash_name: str) -> None:
    """At 1,000,000% no server fills on 20,000 distinct keys: every owner is the ring's."""
    fleet = numbered_servers(20)
    keys = [f"key-{i}".encode() for i in range(20_000)]
    bounded = BoundedLoadAlgorithm.build(fleet, balance_factor=1_000_000, hash=hash_name)
    ring = ALGORITHMS["ring"].build(fleet, hash=hash_name)
    assert bounded.route(keys).tolist() == ring.route(keys).tolist()


def test_the_bound_caps_zipf_traffic_the_ring_does_not() -> None:
    """Under zipf traffic the ring's hottest server carries several times its share; at
    125% the hottest carries at most ceil(1.25 * requests / N)."""
    fleet = numbered_servers(20)
    rng = np.random.default_rng(7)
    requests = rng.integers(0, 2**32, 500, dtype=np.uint64).astype(np.uint32)[
        (rng.zipf(1.2, 20_000) - 1) % 500]
    bounded = BoundedLoadAlgorithm.build(fleet).lookup_many(requests)
    plain = ALGORITHMS["ring"].build(fleet).lookup_many(requests)
    cap = math.ceil(1.25 * len(requests) / 20)
    assert np.bincount(bounded).max() <= cap < np.bincount(plain).max()


def test_the_stream_and_the_replay_keep_apart() -> None:
    """`lookup` continues the instance's stream; `lookup_many` replays from zero loads and
    leaves the stream alone; `reset` empties the stream."""
    algorithm = BoundedLoadAlgorithm.build(numbered_servers(3), points_per_weight=10)
    requests = np.full(30, 12345, dtype=np.uint32)
    first = algorithm.lookup_many(requests).tolist()
    assert algorithm.lookup_many(requests).tolist() == first
    streamed = [algorithm.lookup(12345) for _ in range(10)]
    assert streamed == first[:10]
    assert int(algorithm.loads().sum()) == 10
    algorithm.lookup_many(requests)
    assert algorithm.lookup(12345) == first[10]
    algorithm.reset()
    assert int(algorithm.loads().sum()) == 0 and algorithm.lookup(12345) == first[0]


def test_the_runners_parity_check_passes_and_catches_a_wrong_path() -> None:
    """check_parity passes for bounded-load even after the stream was used, and fails when
    the C path answers otherwise than the references."""
    algorithm = BoundedLoadAlgorithm.build(numbered_servers(30))
    keys = algorithm.hash_keys([f"key-{i}".encode() for i in range(3000)])
    algorithm.lookup(int(keys[5]))  # the runner resets the stream before its scalar pass
    owners, parity = check_parity(algorithm, keys, algorithm.forms([]))
    assert parity.ok and owners.tolist() == algorithm.reference_lookup_many(keys)

    class Skewed(BoundedLoadAlgorithm):
        def lookup_many(self, key_hashes: np.ndarray) -> np.ndarray:
            got = super().lookup_many(key_hashes)
            got[-1] = (got[-1] + 1) % len(self.servers)
            return got

    skewed = Skewed.build(numbered_servers(30))
    with pytest.raises(HarnessError, match="routes 1 of 3000 keys"):
        check_parity(skewed, keys, skewed.forms([]))


def test_parameters_servers_and_size() -> None:
    """Defaults, the ring's parameters, integer weights only, and what the size counts."""
    algorithm = BoundedLoadAlgorithm.build(numbered_servers(4), points_per_weight=10)
    assert algorithm.params == {"balance_factor": 125, "construction": "points",
                                "hash": "blake2b-32", "hash_key": None,
                                "point_name": "{server}:{j}",
                                "points_per_weight": 10}
    assert (algorithm.entries, algorithm.entry_size, algorithm.key_bits) == (40, 6, 32)
    # The ring's copies (4 + 2 bytes a point), weights, cumulative weights and loads.
    assert algorithm.nbytes == 40 * 6 + 3 * 4 * 8
    assert ALGORITHMS["bounded-load"].build(numbered_servers(4)).exact_shares() is None
    assert BoundedLoadAlgorithm.label_for(algorithm.params) == "k=10, bound 125%"
    with pytest.raises(HarnessError, match=r"integer weights from 1 to 65,535, as HAProxy's "
                       r"weight \(server 'b' has 1.5\)"):
        BoundedLoadAlgorithm.build([Server("a"), Server("b", 1.5)])
    with pytest.raises(ScenarioError, match="algorithm 'bounded-load': balance_factor must be "
                       "an integer from 101 to 1,000,000: bounded-load's percentage"):
        BoundedLoadAlgorithm.build(numbered_servers(2), balance_factor=100)
    with pytest.raises(ScenarioError, match="layout must be left out"):
        BoundedLoadAlgorithm.build(numbered_servers(2), layout="tuples")
    nginx = BoundedLoadAlgorithm.build([Server("a:80", 2), Server("b:80")],
                                       construction="nginx")
    assert nginx.entries == 480 and nginx.weights == [2, 1]


BAD = {
    "factor of 100": ("balance_factor = 100", "algorithm.balance_factor must be an integer "
                      "from 101 to 1,000,000: bounded-load's percentage", "(got 100"),
    "factor below 100": ("balance_factor = 50", "algorithm.balance_factor", "(got 50"),
    "fractional factor": ("balance_factor = 125.5", "algorithm.balance_factor must be an "
                          "integer from 101 to 1,000,000: bounded-load's", "125.5"),
    "factor as text": ('balance_factor = "125"', "algorithm.balance_factor", "bounded-load"),
    "a layout": ('layout = "tuples"', "algorithm.layout must be left out: bounded-load walks",
                 "'tuples'"),
    "a bad ring parameter": ('hash = "sha7"', "algorithm.hash must be one of", "'sha7'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_parameters_exit_2_naming_the_algorithm_and_the_field(
    case: str, write_scenario: Callable[[str], Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Refused when the scenario loads: exit 2, one line naming file and field, no result."""
    line, *fragments = BAD[case]
    path = write_scenario(f'[algorithm]\nname = "bounded-load"\n{line}\n[servers]\ncount = 5\n')
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: ") and len(err.splitlines()) == 1
    for fragment in fragments:
        assert fragment in err
    assert not out.exists()


@pytest.mark.parametrize(("text", "message"), [
    ('[servers]\nlist = [{name = "a", weight = 1.5}, {name = "b"}]',
     "servers must be integer weights from 1 to 65,535, as HAProxy's weight (server 'a' "
     "has 1.5) for bounded-load"),
    ('[servers]\ncount = 5\n[migration]\nto = { points_per_weight = 10 }',
     "migration must be left out for bounded-load: a migration replays each object's one "
     "owner"),
    ('[servers]\ncount = 5\n[process]\n',
     "process must be left out for bounded-load: a process is costed as rings"),
])
def test_what_bounded_load_refuses_in_a_scenario(
    text: str, message: str, write_scenario: Callable[[str], Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Fractional weights, a migration (no object has one owner) and a process (no layouts),
    before any work."""
    path = write_scenario(f'[algorithm]\nname = "bounded-load"\n{text}\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


def test_a_migration_to_bounded_load_is_refused(
    write_scenario: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_scenario('[servers]\ncount = 5\n[migration]\nto = { algorithm = '
                          '"bounded-load" }\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert ("migration.to.algorithm must be an algorithm the migration metric can measure "
            "(got 'bounded-load'") in capsys.readouterr().err


def test_a_scenario_measures_load_balance_movement_and_time(
    write_scenario: Callable[[str], Path], tmp_path: Path,
) -> None:
    """A small zipf run: every request within the cap, movement from two replays."""
    path = write_scenario(
        '[algorithm]\nname = "bounded-load"\nbalance_factor = 125\npoints_per_weight = 40\n'
        '[servers]\ncount = 10\n[keys]\ncount = 4000\ndistribution = "zipf"\nuniverse = 500\n'
        '[measure]\nmetrics = ["balance", "load", "movement", "throughput"]\nrepeats = 1\n'
        'scalar_keys = 200\n[[operations]]\nkind = "remove"\nserver = "server-3"\n'
        '[[operations]]\nkind = "add"\nserver = "server-10"\n')
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 0
    run = load_result(out / "scenario.json").runs[0]
    load = run.figure("load")
    assert load.distribution == "zipf" and load.max_over_mean <= 1.25
    assert run.figure("balance").cv_arcs is None
    assert [m.operation for m in run.figure("movement")] == ["remove", "add"]
    assert run.subjects[0].name == "bounded-load" and run.subjects[0].kind == "algorithm"

