"""The algorithm comparison ([comparison]) and the peers it sets beside our algorithms."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.model import Result
from harness.core.ring import Ring, reference_lookup_many
from harness.core.servers import Server, fleet_servers
from harness.metrics.comparison.options import DEFAULT_LAYOUTS
from harness.metrics.comparison.records import Comparison, FleetFigures
from harness.metrics.comparison.tables import NOT_SUPPORTED, resize_table
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.peers import PEERS
from harness.recipes.peers.hashring_peer import expected_agreement
from harness.report import markdown
from harness.report.results import result_from_json
from harness.report.sections import result_report
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario

EXACT_PEERS = [name for name, cls in PEERS.items() if cls.exact]


def _ours(name: str, servers: list[Server]) -> Callable[[list[str]], list[int]]:
    params = dict(PEERS[name].agrees_with or {})
    algorithm = get_algorithm(params.pop("algorithm")).build(servers, **params)
    return lambda keys: algorithm.route([k.encode() for k in keys]).tolist()


@pytest.mark.parametrize("name", EXACT_PEERS)
@pytest.mark.parametrize("count", [1, 7, 101])
def test_exact_peers_route_every_key_as_our_recipe(name: str, count: int) -> None:
    """Each peer that claims exactness routes 4,000 keys exactly as the recipe it names."""
    servers = fleet_servers(count, [1], "10.0.{i}.1:11211")
    keys = [f"session:{i}" for i in range(4_000)]
    peer = PEERS[name].build(servers)
    assert [peer.lookup_key(k) for k in keys] == _ours(name, servers)(keys)


def test_exact_claims_cover_the_new_peers() -> None:
    """pymemcache and jump-consistent-hash claim exactness; hashring does not, and says why."""
    assert {"pymemcache", "jump-consistent-hash", "uhashring-ketama"} <= set(EXACT_PEERS)
    assert PEERS["pymemcache"].agrees_with == {"algorithm": "rendezvous"}
    assert PEERS["jump-consistent-hash"].agrees_with == {"algorithm": "jump"}
    assert not PEERS["hashring"].exact and "3 of libketama's 4" in PEERS["hashring"].agreement_note
    for cls in PEERS.values():
        if cls.agrees_with is not None:
            assert cls.agrees_with["algorithm"] in ALGORITHMS


def test_jump_peer_times_the_library_call_on_precomputed_hashes() -> None:
    """jump.hash alone on xxHash64 of the key is the peer's whole lookup."""
    peer = PEERS["jump-consistent-hash"].build(fleet_servers(50, [1], "s{i}"))
    for key in ("a", "key-17", "x" * 40):
        assert peer.lookup_hash(peer.hash_key(key)) == peer.lookup_key(key)  # type: ignore[attr-defined]


def _hashring_model(servers: list[Server]) -> tuple[Ring, Callable[[str], int]]:
    """hashring 1.5.1 as its docstring says: 3 little-endian words of MD5("name-j") per
    digest, floor(40 N w / W) digests, last server wins a shared point, key to the first
    point strictly greater than the key's first MD5 word."""
    total = sum(s.weight for s in servers)
    owner_of: dict[int, int] = {}
    for index, server in enumerate(servers):
        for j in range(int(40 * len(servers) * server.weight // total)):
            digest = hashlib.md5(f"{server.name}-{j}".encode()).digest()
            for word in range(3):
                owner_of[int.from_bytes(digest[4 * word:4 * word + 4], "little")] = index
    positions = np.array(sorted(owner_of), dtype=np.uint32)
    ring = Ring(positions, np.array([owner_of[int(p)] for p in positions], dtype=np.uint16),
                32, 0)

    def route(key: str) -> int:
        h = int.from_bytes(hashlib.md5(key.encode()).digest()[:4], "little")
        # Strictly greater: the first point at or after h + 1, wrapping past 2**32 - 1.
        return reference_lookup_many(ring, np.array([(h + 1) % 2**32], dtype=np.uint64))[0]

    return ring, route


@pytest.mark.parametrize("weights", [[1], [1, 2, 5]])
def test_hashring_is_three_md5_words_per_digest_with_strictly_greater_lookup(
        weights: list[float]) -> None:
    """The peer routes 3,000 keys exactly as the model its docstring states."""
    servers = fleet_servers(13, weights, "cache-{i}:11211")
    peer = PEERS["hashring"].build(servers)
    ring, route = _hashring_model(servers)
    assert peer.entries == ring.entries
    keys = [f"k{i}" for i in range(3_000)]
    assert [peer.lookup_key(k) for k in keys] == [route(k) for k in keys]


def test_hashring_agrees_with_libketama_on_about_three_keys_in_four() -> None:
    """Dropping libketama's fourth point per digest keeps about 3/4 + 1/(4N) of owners."""
    servers = fleet_servers(10, [1], "cache-{i}:11211")
    peer = PEERS["hashring"].build(servers)
    keys = [f"k{i}" for i in range(20_000)]
    ours = _ours("hashring", servers)(keys)
    agreement = np.mean([peer.lookup_key(k) == o for k, o in zip(keys, ours, strict=True)])
    assert abs(agreement - expected_agreement(10)) < 0.04
    assert agreement < 0.9  # not the same ring


TINY = """
name = "tiny-comparison"
[servers]
count = 3
[keys]
count = 200
[measure]
metrics = []
layouts = []
[comparison]
servers = [5, 12]
weights = [[1], [1, 2, 5]]
keys = 3_000
zipf_requests = 2_000
zipf_universe = 500
repeats = 1
scalar_keys = 50
batch_keys = 500
parity_keys = 50
peer_keys = 300
peer_timing_keys = 5
{extra}
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Result:
    path = tmp_path_factory.mktemp("comparison") / "tiny.toml"
    path.write_text(TINY.format(extra="memory = false"))
    result = run_scenario(load_scenario(path), show_progress=False)
    # Typed records survive the JSON round trip (result format 2).
    return result_from_json(result.to_json())


def _fleet(result: Result, servers: int, equal: bool) -> FleetFigures:
    comparison = result.runs[0].figure("comparison")
    assert isinstance(comparison, Comparison)
    return next(f for f in comparison.fleets if f.servers == servers
                and f.equal_weights == equal)


def test_every_registered_algorithm_is_compared_by_default(tiny: Result) -> None:
    """Default recipes: every algorithm of the registry (but the client families in plain
    Python, which are measured when named), the ring in its two layouts."""
    fleet = _fleet(tiny, 5, True)
    assert {r.algorithm for r in fleet.algorithms} == {
        name for name, cls in ALGORITHMS.items() if getattr(cls, "compared_by_default", True)}
    assert {"modulo", "rendezvous-score"} <= set(ALGORITHMS)
    ring_layouts = [r.params["layout"] for r in fleet.algorithms if r.algorithm == "ring"]
    assert ring_layouts == list(DEFAULT_LAYOUTS)
    assert [p.name for p in fleet.peers] == list(PEERS)


#: hash mod N and fixed slots shared in ranges: not consistent hashing, compared as baselines
FIXED_TABLES = ("kafka-murmur2", "redis-slots")


def test_equal_fleet_figures(tiny: Result) -> None:
    """Every recipe measured at equal weights: timings, loads, minimal-ish movement."""
    fleet = _fleet(tiny, 12, True)
    for r in fleet.algorithms:
        assert r.unsupported is None, r.label
        assert r.scalar_ns is not None and r.batch_ns is not None and r.build_ms is not None
        assert r.uniform is not None and r.uniform.requests == 3_000
        assert r.zipf is not None and r.zipf.requests == 2_000
        assert r.weight_share_error is not None and r.weight_share_error >= 0
        add = r.moves[0]
        assert add.operation == "add" and add.movement is not None
        assert add.minimal_fraction == pytest.approx(1 / 13)
        if r.algorithm in FIXED_TABLES:
            # The baselines the articles warn about: most keys move on one addition.
            assert add.movement.ring_moved_fraction > 0.4, r.label
        else:
            assert 0 < add.movement.ring_moved_fraction < 0.3
    jump = next(r for r in fleet.algorithms if r.algorithm == "jump")
    assert jump.route_ns is not None  # jump hashes and looks up a key in one call
    maglev = next(r for r in fleet.algorithms if r.algorithm == "maglev")
    assert maglev.slot_spread is not None and maglev.slot_spread <= 1
    assert maglev.shares_from == "exact"
    multi_probe = next(r for r in fleet.algorithms if r.algorithm == "multi-probe")
    assert multi_probe.shares_from == "exact" and multi_probe.exact_peak_to_mean is not None
    assert multi_probe.exact_peak_to_mean >= 1.0
    assert jump.exact_peak_to_mean is None  # jump's shares come from keys
    middle = jump.moves[2]
    assert middle.movement is None and middle.unsupported is not None
    assert "only the last server" in middle.unsupported
    for peer in fleet.peers:
        if peer.name in EXACT_PEERS:
            assert peer.agreement == 1.0 and peer.agreement_keys == 300, peer.name
        assert peer.scalar_ns is not None
    uhashring = next(p for p in fleet.peers if p.name == "uhashring")
    assert uhashring.agrees_with is None and uhashring.agreement is None


def test_init_and_resize_times(tiny: Result) -> None:
    """Every recipe has an init time and a resize time for each change it supports (jump:
    none for a middle removal), and the report shows them in their own table."""
    fleet = _fleet(tiny, 12, True)
    for r in fleet.algorithms:
        assert r.build_ms is not None and r.build_ms.median > 0
        for move in r.moves:
            if move.unsupported is None:
                assert move.resize_ms is not None and move.resize_ms.rounds == 1
                assert 0 < move.resize_ms.min <= move.resize_ms.median
            else:
                assert move.resize_ms is None
    jump = next(r for r in fleet.algorithms if r.algorithm == "jump")
    assert [m.resize_ms is not None for m in jump.moves] == [True, True, False]
    page = markdown.report(result_report(tiny))
    assert re.search(r"\| recipe +\| init ms \(min-max\) +\| add ms \(min-max\) +\|", page)


def test_resize_table_is_left_out_for_results_without_resize_times(tiny: Result) -> None:
    """A result written before resize times were measured renders as it did: no table."""
    fleet = copy.deepcopy(_fleet(tiny, 12, True))
    for r in fleet.algorithms:
        for move in r.moves:
            move.resize_ms = None
    assert resize_table(fleet) is None
    assert resize_table(_fleet(tiny, 12, True)) is not None


def test_weighted_fleet_marks_what_cannot_take_weights(tiny: Result) -> None:
    """At 1:2:5, unweighted algorithms and peers are not supported, with their reason."""
    fleet = _fleet(tiny, 12, False)
    assert fleet.weights == [1.0, 2.0, 5.0]
    refused = {r.algorithm for r in fleet.algorithms if r.unsupported is not None}
    assert {"jump", "rendezvous", "multi-probe"} <= refused
    assert "ring" not in refused and "maglev" not in refused
    jump = next(r for r in fleet.algorithms if r.algorithm == "jump")
    assert jump.unsupported is not None and "weight" in jump.unsupported
    assert next(p for p in fleet.peers if p.name == "pymemcache").unsupported is not None


def test_report_shows_not_supported_and_targets(tiny: Result) -> None:
    """The Markdown says "not supported" (never blank) and carries the targets table."""
    page = markdown.report(result_report(tiny))
    assert "## Algorithms compared: speed targets" in page
    assert "## Algorithms compared (N=12, weights 1:2:5)" in page
    jump_rows = [line for line in page.splitlines() if line.startswith("| jump ")]
    assert jump_rows and all(NOT_SUPPORTED in line for line in jump_rows[-2:])
    assert "jump, remove middle: not supported" in page
    assert "not measured in this run (no such fleet)" in page  # no N=100 or 1,000 here
    assert "1.000000" in page
    assert "from exact shares; " in page  # multi-probe's published figure, beside the keys'


def test_memory_is_measured_by_memray_per_recipe_and_peer(
        write_scenario: Callable[[str, str], Path]) -> None:
    """With memory on, each recipe and peer gets allocator bytes from a fresh process."""
    text = TINY.format(extra='memory = true\nalgorithms = ["jump", { name = "ring", '
                             'layout = "cffi-packed", points_per_weight = 40 }]\n'
                             'peers = ["jump-consistent-hash"]\nservers = [4]\n'
                             'weights = [[1]]').replace("servers = [5, 12]\n", "").replace(
        "weights = [[1], [1, 2, 5]]\n", "")
    result = run_scenario(load_scenario(write_scenario(text, "memory.toml")),
                          show_progress=False)
    fleet = result.runs[0].figure("comparison").fleets[0]
    ring = next(r for r in fleet.algorithms if r.algorithm == "ring")
    assert ring.memory is not None
    # A packed ring of 160 entries: 6 bytes each, plus the objects around the C array.
    assert 160 * 6 <= ring.memory.structure_bytes < 160 * 6 + 8192
    assert fleet.peers[0].memory is not None


BAD = {
    "fleet size zero": ("servers = [0]", ["comparison.servers must be an integer from 1 to "
                                          "65,534 or a non-empty list of them", "[0]"]),
    "fleet size text": ('servers = "ten"', ["comparison.servers must be an integer",
                                           "'ten', a string"]),
    "fleet too large": ("servers = [65535]", ["comparison.servers", "65,534"]),
    "duplicate fleets": ("servers = [10, 10]", ["comparison.servers must be distinct fleet "
                                                "sizes"]),
    "unknown algorithm": ('servers = [10]\nalgorithms = ["jump", "consistent"]',
                          ["comparison.algorithms[1].name must be one of", "'jump'",
                           "'consistent'"]),
    "bad algorithm parameter": ('servers = [10]\nalgorithms = [{ name = "maglev", '
                                'table_size = 100 }]',
                                ["comparison.algorithms[0].table_size"]),
    "ring without layout": ('servers = [10]\nalgorithms = [{ name = "ring", layout = "none" }]',
                            ["comparison.algorithms[0].layout must be a layout"]),
    "zero weight": ("servers = [10]\nweights = [[1], [1, 0]]",
                    ["comparison.weights[1] must be a non-empty list of weight patterns",
                     "[1, 0]"]),
    "weights not lists": ("servers = [10]\nweights = [1, 2, 5]", ["comparison.weights[0]"]),
    "empty weights": ("servers = [10]\nweights = []", ["comparison.weights must be"]),
    "unknown peer": ('servers = [10]\npeers = ["fastring"]',
                     ["comparison.peers must be a list of names from", "'fastring'"]),
    "unknown key": ("servers = [10]\nfleet = 3", ["unknown key 'comparison.fleet'"]),
    "memory not boolean": ('servers = [10]\nmemory = "yes"',
                           ["comparison.memory must be true or false"]),
    "fleet of more keys": ("servers = [10]\nkeys = 1_000\nfleets = [{ servers = 20, "
                           "keys = 2_000 }]",
                           ["comparison.fleets[0].keys must be at most comparison.keys "
                            "(1,000)", "2000"]),
    "fleet of more requests": ("servers = [10]\nzipf_requests = 10\nfleets = [{ servers = "
                               "20, zipf_requests = 11 }]",
                               ["comparison.fleets[0].zipf_requests must be at most"]),
    "fleet twice": ("servers = [10]\nfleets = [{ servers = 10 }]",
                    ["comparison.fleets must be fleets distinct from each other",
                     "10 servers at weights [1.0]"]),
    "fleet without size": ("servers = [10]\nfleets = [{ keys = 5 }]",
                           ["comparison.fleets[0].servers"]),
    "fleet unknown key": ("servers = [10]\nfleets = [{ servers = 20, typo = 1 }]",
                          ["unknown key 'comparison.fleets[0].typo'"]),
}


def test_extra_fleets_are_measured_with_their_own_keys_and_peers(tmp_path: Path) -> None:
    """A [[comparison.fleets]] entry is measured after servers x weights, on the first keys
    and requests of the table's, with only its peers; the estimate follows its keys."""
    path = tmp_path / "fleets.toml"
    path.write_text(TINY.replace("servers = [5, 12]\nweights = [[1], [1, 2, 5]]",
                                 "servers = [5]\nweights = [[1]]").format(extra="""
memory = false
algorithms = ["jump", "rendezvous"]
peers = ["jump-consistent-hash"]
[[comparison.fleets]]
servers = 40
keys = 1_000
zipf_requests = 500
parity_keys = 20
peers = []
"""))
    scenario = load_scenario(path)
    options = scenario.measure.options["comparison"]
    assert [(f.servers, f.keys, f.peers) for f in options.fleets] == [
        (5, 3_000, ("jump-consistent-hash",)), (40, 1_000, ())]
    comparison = run_scenario(scenario, show_progress=False).runs[0].figure("comparison")
    small, large = comparison.fleets
    assert (small.servers, small.keys, len(small.peers)) == (5, 3_000, 1)
    assert (large.servers, large.keys, large.zipf_requests, large.peers) == (40, 1_000, 500, [])
    for r in large.algorithms:
        assert r.uniform is not None and r.uniform.requests == 1_000
        assert r.zipf is not None and r.zipf.requests == 500 and r.parity_keys == 20


@pytest.mark.parametrize("case", list(BAD))
def test_bad_comparison_exits_2_naming_the_field(
    case: str, write_scenario: Callable[[str, str], Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each bad [comparison] table is one line naming the field; exit 2; nothing written."""
    table, fragments = BAD[case]
    path = write_scenario(f"[servers]\ncount = 3\n[comparison]\n{table}\n", "bad.toml")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: ") and len(err.splitlines()) == 1
    for fragment in fragments:
        assert fragment in err, err
    assert not out.exists()


def test_removable_algorithms_lose_a_middle_server_in_place(tiny: Result) -> None:
    """anchor, memento and dx lose the middle server as they fall (`without`): only its
    keys move, about its share, where a rebuild from the shorter list would renumber."""
    fleet = _fleet(tiny, 12, True)
    for name in ("anchor", "memento", "dx"):
        recipe = next(r for r in fleet.algorithms if r.algorithm == name)
        for change in recipe.moves:
            assert change.movement is not None, (name, change.operation)
            assert change.movement.ring_only_changed_server, (name, change.operation)
            assert change.movement.ring_moved_fraction < 0.25, (name, change.operation)
