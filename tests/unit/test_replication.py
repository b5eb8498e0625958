"""The replication metric: copy load, zones, one failure's re-creation work, one join."""

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.core.errors import ScenarioError
from harness.metrics.replication.changes import keys_sharing_a_zone, new_copies, recreation
from harness.metrics.replication.metric import Replication, ReplicationMetric, ReplicationOptions
from harness.report import markdown
from harness.report.compare import comparison_report
from harness.report.results import load_result
from harness.run.estimate import estimate, estimated_seconds
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario
from tests.paths import ROOT

Write = Callable[[str], Path]


def _replication(write_scenario: Write, points: int, table: str,
                 servers: str = 'count = 20\nzones = ["a", "b", "c", "d"]') -> Replication:
    scenario = load_scenario(write_scenario(
        f"[servers]\n{servers}\n[generator]\npoints_per_weight = {points}\n"
        "[keys]\ncount = 100\n[measure]\nlayouts = []\nmetrics = []\n"
        f"[replication]\nobjects = 20000\n{table}"))
    (run,) = run_scenario(scenario, show_progress=False).runs
    record = run.figure("replication")
    assert isinstance(record, Replication)
    return record


def test_one_point_per_server_re_replicates_from_its_two_neighbours(
        write_scenario: Write) -> None:
    """k = 1, R = 3: every lost copy is sent by one of the failed server's two ring
    neighbours; at k = 160 the same work comes from most of the fleet."""
    sparse = _replication(write_scenario, 1, 'copies = 3\nfail = "server-3"')
    dense = _replication(write_scenario, 160, 'copies = 3\nfail = "server-3"')
    assert 1 <= sparse.failure.sources <= 2 and sparse.failure.destinations <= 3
    assert dense.failure.sources >= 15 and dense.failure.busiest_source_share < 0.2
    for record in (sparse, dense):
        f = record.failure
        # On the ring a list changes exactly when it held the failed server, and each such
        # key needs one new copy.
        assert f.keys_losing_a_copy == f.keys_changed == f.copies_to_recreate
        assert f.bytes_to_recreate == f.copies_to_recreate * record.object_bytes
        assert sum(f.per_source) == f.copies_to_recreate


def test_dense_ring_loses_copies_in_proportion_to_copies(write_scenario: Write) -> None:
    """N = 20 at 160 points, R = 3: about R/N = 15% of keys lose a copy; a joining server
    takes about R/(N+1) of all copies, every one of them moving to it."""
    record = _replication(write_scenario, 160, 'copies = 3\nfail = "server-0"')
    assert record.failure.keys_losing_a_copy_fraction == pytest.approx(3 / 20, abs=0.03)
    assert record.join.copies_moved_fraction == pytest.approx(3 / 21 / 3, abs=0.01)
    assert record.join.only_to_it and record.join.keys_changed == record.join.copies_moved


def test_zone_aware_puts_no_two_copies_in_one_zone(write_scenario: Write) -> None:
    """Four zones, three copies: the plain walk often doubles up a zone, the zone-aware walk
    never, and both are reported (the balance cost is their difference)."""
    record = _replication(write_scenario, 160, "copies = 3\nzone_aware = true")
    plain, aware = record.placements
    assert not plain.zone_aware and aware.zone_aware
    # Three distinct servers of 20 in 4 zones of 5 fall in three zones with probability
    # 15/19 * 10/18: the other 56% share one.
    assert plain.keys_sharing_a_zone / record.objects == pytest.approx(
        1 - 15 / 19 * 10 / 18, abs=0.05)
    assert aware.keys_sharing_a_zone == 0
    assert plain.primary_cv == aware.primary_cv  # the first copy is the owner either way


def test_servers_listed_with_zones(write_scenario: Write) -> None:
    """Zones given per listed server; a server given none is a zone of its own."""
    servers = "\n".join(f'[[servers.list]]\nname = "s{i}"\nzone = "{"ab"[i % 2]}"'
                        for i in range(6)) + '\n[[servers.list]]\nname = "lone"'
    scenario = load_scenario(write_scenario(
        f"{servers}\n[generator]\npoints_per_weight = 50\n[keys]\ncount = 10\n"
        "[measure]\nlayouts = []\nmetrics = []\n[replication]\nobjects = 3000\n"
        "zone_aware = true"))
    assert scenario.ring_zones() == ["a", "b", "a", "b", "a", "b", "lone"]
    (run,) = run_scenario(scenario, show_progress=False).runs
    record = run.figure("replication")
    assert isinstance(record, Replication) and record.zones == 3
    assert record.placements[-1].keys_sharing_a_zone == 0


def test_recreation_by_hand() -> None:
    """Two keys lose server 2: one copy re-created each, sent by the copy after the lost one
    (or before it, when it was last)."""
    before = np.array([[2, 3, 4], [0, 1, 2], [5, 6, 7]])
    after = np.array([[3, 4, 5], [0, 1, 3], [5, 6, 7]])
    assert new_copies(before, after).tolist() == [[False, False, True], [False, False, True],
                                                  [False, False, False]]
    work = recreation(before, after, 2)
    assert (work.keys_losing_a_copy, work.copies, work.sources, work.destinations) == (2, 2,
                                                                                       2, 2)
    assert work.per_source == (1, 1) and work.busiest_source_share == 0.5
    assert keys_sharing_a_zone(before, np.array([0, 0, 1, 1, 2, 2, 0, 1])) == 2


@pytest.mark.parametrize(("body", "message"), [
    ('[algorithm]\nname = "jump"\n[replication]\n',
     "replication must be left out for jump: jump consistent hash"),
    ("[replication]\ncopies = 9\n",
     r"replication.copies must be at most the servers on the ring once 'server-0' fails "
     r"\(7\)"),
    ("[replication]\ncopies = 3\nzone_aware = true\n",
     r"replication.copies must be at most the zones on the ring once 'server-0' fails \(2\)"),
    ('[replication]\nfail = "nobody"\n', "replication.fail must name a server on the ring"),
    ('[replication]\njoin = "server-1"\n', "replication.join must be a new server name"),
    ("[replication]\nzone_aware = 1\n", "replication.zone_aware must be true or false"),
    ("[replication]\ncopies = 0\n", "replication.copies must be an integer from 1 to 64"),
])
def test_refusals(write_scenario: Write, body: str, message: str) -> None:
    """Each problem is one line naming the field, before any work."""
    with pytest.raises(ScenarioError, match=message):
        load_scenario(write_scenario(
            f'[servers]\ncount = 8\nzones = ["a", "b"]\n{body}'))


def test_a_joining_server_the_construction_cannot_take_is_refused(
        write_scenario: Write) -> None:
    """HAProxy reading ids from names: a joining server named without an id is refused at
    load, not when the run rebuilds the ring."""
    listed = ", ".join(f'{{ name = "srv{i}" }}' for i in range(1, 5))
    text = (f'[servers]\nlist = [{listed}]\n[generator]\nconstruction = "haproxy"\n'
            'server_ids = "name"\n[replication]\ncopies = 2\n')
    with pytest.raises(ScenarioError, match=r"replication.join must leave servers that are "
                                            r"names ending in an id"):
        load_scenario(write_scenario(text))
    assert load_scenario(write_scenario(text + 'join = "srv9"\n'))


def test_zones_must_be_distinct(write_scenario: Write) -> None:
    """A zone list naming one zone twice is refused with the list shown."""
    with pytest.raises(ScenarioError, match=r"servers.zones must be a list of distinct "
                                            r"non-empty zone names"):
        load_scenario(write_scenario('[servers]\ncount = 8\nzones = ["a", "a"]\n'))


def test_copies_moved_between_survivors_are_sent_by_the_first_copy() -> None:
    """A key that lost nothing but whose list changed gets its new copy from its first copy,
    so that every new copy has one source; with one copy, a lost key has none (its data is
    gone)."""
    before = np.array([[1, 2], [3, 4], [0, 5]])
    after = np.array([[1, 6], [3, 4], [5, 7]])
    work = recreation(before, after, 0)
    assert (work.keys_losing_a_copy, work.keys_changed, work.copies) == (1, 2, 2)
    assert work.per_source == (1, 1) and work.sources == 2
    single = recreation(np.array([[0], [1]]), np.array([[2], [3]]), 0)
    assert single.copies == 2 and single.per_source == (1,)


def test_the_estimate_counts_the_rebuilt_ring_and_tables(write_scenario: Write) -> None:
    """[replication] adds its objects and, while it measures, the ring rebuilt for a change
    and two per-point tables of R copies: more copies raise its share."""
    def added(table: str) -> int:
        return estimate(load_scenario(write_scenario(
            "[servers]\ncount = 10\n[generator]\npoints_per_weight = 100000\n"
            f"[keys]\ncount = 10\n[measure]\nlayouts = []\nmetrics = []\n{table}"))).added_bytes
    options = ReplicationOptions(copies=3, objects=1000)
    own = ReplicationMetric().estimated_bytes(options, [])
    three, six = (added(f"[replication]\ncopies = {r}\nobjects = 1000\n") for r in (3, 6))
    # Its objects at least (the ring's generation, 16 bytes a point, can outweigh what the
    # metric holds beside the ring); then 2 x 2 bytes a point per extra copy.
    assert three - added("") >= own
    assert six - three >= 2 * 2 * 3 * 10 * 100_000


def test_compare_shows_the_replication_and_hot_keys_figures() -> None:
    """compare lines up the committed ring and rendezvous replication results on their
    failure and join figures, and the hot-keys result with itself on each policy."""
    root = ROOT / "results"
    ring = load_result(root / "replication.json")
    rendezvous = load_result(root / "replication-rendezvous.json")
    # Sweep points match by label: give the rendezvous run the ring's k=160 label.
    rendezvous.runs[0].label = "k=160"
    table = markdown.report(comparison_report(ring, rendezvous, "ring", "rendezvous"))
    for figure in ("keys losing a copy", "re-replication sources", "busiest source's share",
                   "copies moved by a join"):
        assert f"| replication: {figure} " in table
    hot = load_result(root / "hot-keys.json")
    table = markdown.report(comparison_report(hot, hot, "a", "b"))
    assert table.count("| hot keys: ") == 4


TOPOLOGY_SERVERS = 'count = 12\nzones = ["east/r1", "east/r2", "east/r3", "west/r1"]'


def test_network_topology_places_each_data_centres_factor_over_its_racks(
        write_scenario: Write) -> None:
    """east 3, west 2 on Cassandra's ring: every key has 3 copies in east's three racks and
    2 in west's one rack (a rack repeat), as the plain walk of harness.core.network_topology
    gives them; losing an east node re-creates its copies only on its rack's other nodes
    (east's three racks each hold one copy); a replacement in its rack takes copies only."""
    record = _replication(write_scenario, 16, 'datacenters = { east = 3, west = 2 }\n'
                          'fail = "server-0"', TOPOLOGY_SERVERS)
    (placement,) = record.placements
    assert placement.strategy == "network-topology" and record.copies == 5
    assert record.datacenters == {"east": 3, "west": 2}
    # Two west copies in west's one rack: every key shares a zone.
    assert placement.keys_sharing_a_zone == record.objects
    assert record.failure.destinations == 2  # server-0's rack-mates: server-4 and server-8
    assert record.failure.keys_losing_a_copy == record.failure.copies_to_recreate
    assert record.join.only_to_it


@pytest.mark.parametrize(("body", "message"), [
    ("datacenters = { east = 3, west = 2 }\ncopies = 5\n",
     r"replication.copies must be left out with replication.datacenters"),
    ("datacenters = { east = 3 }\nzone_aware = true\n",
     r"replication.zone_aware must be false with replication.datacenters"),
    ("datacenters = { south = 1 }\n",
     r"replication.datacenters must name data centres of the servers' zones .*'east', "
     r"'west'.* \(got 'south'\)"),
    ("datacenters = { east = 0 }\n", r"replication.datacenters must be a table of data "
                                     r"centre names to replication factors"),
    ("datacenters = { east = true }\n", r"replication.datacenters must be a table"),
    ('datacenters = { "a/b" = 1 }\n', r"replication.datacenters must be a table"),
    ("datacenters = 3\n", r"replication.datacenters must be a table"),
    ("datacenters = { west = 3 }\nfail = \"server-3\"\n",
     r"replication.fail must leave data centre 'west' at least its factor of 3 nodes"),
])
def test_network_topology_refusals(write_scenario: Write, body: str, message: str) -> None:
    """One line naming the field, before any work."""
    with pytest.raises(ScenarioError, match=message):
        load_scenario(write_scenario(
            f'[servers]\n{TOPOLOGY_SERVERS}\n[generator]\nconstruction = "cassandra"\n'
            f"[replication]\n{body}"))


def test_network_topology_needs_a_ring(write_scenario: Write) -> None:
    """Rendezvous ranks servers; NetworkTopologyStrategy walks tokens: refused."""
    with pytest.raises(ScenarioError, match=r"replication\.datacenters must be left out for "
                                            r"rendezvous"):
        load_scenario(write_scenario(
            f'[servers]\n{TOPOLOGY_SERVERS}\n[algorithm]\nname = "rendezvous"\n'
            "[replication]\ndatacenters = { east = 1 }\n"))


def test_network_topology_is_priced(write_scenario: Write) -> None:
    """The walk tabled in plain Python is in the estimate's seconds."""
    def seconds(table: str) -> float:
        return estimated_seconds(load_scenario(write_scenario(
            f"[servers]\n{TOPOLOGY_SERVERS}\n[generator]\npoints_per_weight = 10000\n"
            f"[keys]\ncount = 10\n[measure]\nlayouts = []\nmetrics = []\n{table}")))[0]
    plain = seconds("[replication]\ncopies = 3\nobjects = 1000\n")
    topology = seconds("[replication]\ndatacenters = { east = 3 }\nobjects = 1000\n")
    assert topology - plain >= 3 * 3 * 120_000 * 1e-6


def test_riak_preference_lists_are_the_next_partitions_owners(write_scenario: Write) -> None:
    """Riak: copies on the owners of the key's partition and the next two, a failure
    measured as a leave (riak_core's simple transfer, then claim), a join as claim."""
    scenario = load_scenario(write_scenario(
        '[servers]\ncount = 8\n[algorithm]\nname = "riak"\n[keys]\ncount = 100\n'
        "[measure]\nmetrics = []\n[replication]\ncopies = 3\nobjects = 5000\n"
        'fail = "server-3"'))
    (run,) = run_scenario(scenario, show_progress=False).runs
    record = run.figure("replication")
    assert isinstance(record, Replication)
    (placement,) = record.placements  # no zone-aware walk for Riak
    assert not placement.zone_aware and record.copies == 3
    # 64 partitions over 8 nodes keeping target_n_val 4: every list is 3 distinct nodes.
    assert record.failure.keys_losing_a_copy_fraction == pytest.approx(3 / 8, abs=0.05)
    assert record.join.only_to_it


def test_riak_refuses_zone_aware(write_scenario: Write) -> None:
    """Riak's claim has no zones: zone_aware is refused at load, naming why."""
    with pytest.raises(ScenarioError, match=r"replication\.zone_aware must be false for riak"):
        load_scenario(write_scenario(
            '[servers]\ncount = 8\nzones = ["a", "b"]\n[algorithm]\nname = "riak"\n'
            "[replication]\ncopies = 2\nzone_aware = true\n"))
