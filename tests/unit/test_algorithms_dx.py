"""dx: C and the plain-Python algorithm agree under any removals; one bit a slot."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.native.dx import MAX_PROBES_PER_SLOT
from harness.core.servers import Server, numbered_servers
from harness.core.splitmix import splitmix64_at
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.dx import DxAlgorithm

pytestmark = pytest.mark.c_core

EDGES = np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1], dtype=np.uint64)


def _hashes(count: int, seed: int) -> np.ndarray:
    drawn = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64,
                                                 endpoint=False)
    return np.concatenate([EDGES, drawn])


def _names(algorithm: DxAlgorithm, hashes: np.ndarray) -> np.ndarray:
    return np.array([s.name for s in algorithm.servers])[algorithm.lookup_many(hashes)]


def test_a_key_takes_the_first_working_slot_of_its_sequence() -> None:
    """Worked by hand from the sequence: the first probe on a working slot is the answer."""
    dx = DxAlgorithm.build(numbered_servers(3), capacity=8).without(1)  # slots 0 and 2 work
    for key in (0, 12345, 2**64 - 1):
        probes = [splitmix64_at(key, i) % 8 for i in range(64)]
        first = next(p for p in probes if p in (0, 2))
        assert dx.lookup(key) == {0: 0, 2: 1}[first]


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(1, 60), extra=st.integers(0, 90), data=st.data())
def test_c_equals_the_reference_under_any_removals(
    servers: int, extra: int, data: st.DataObject,
) -> None:
    """The C batch, the C scalar, the vectorised and the plain reference agree after any
    sequence of removals."""
    dx = DxAlgorithm.build(numbered_servers(servers), capacity=servers + extra)
    hashes = _hashes(300, servers * 100 + extra)
    for _ in range(data.draw(st.integers(0, servers - 1)) + 1):
        expected = dx.reference_owners(hashes)
        assert dx.lookup_many(hashes).tolist() == expected.tolist()
        assert [dx.lookup(int(h)) for h in hashes[:40]] == expected[:40].tolist()
        assert dx.reference_lookup_many(hashes[:40]) == expected[:40].tolist()
        if len(dx.servers) == 1:
            break
        dx = dx.without(data.draw(st.integers(0, len(dx.servers) - 1)))


def test_keys_past_the_probe_bound_scan_to_a_working_slot() -> None:
    """With one slot of 1,000 working, about e**-4 of keys exhaust their 4,000 probes and
    scan on; every form still agrees, and every key lands on the working slot."""
    assert MAX_PROBES_PER_SLOT == 4
    dx = DxAlgorithm.build(numbered_servers(2), capacity=1000).without(0)
    hashes = _hashes(600, 4)
    assert dx.lookup_many(hashes).tolist() == [0] * len(hashes)
    assert dx.reference_owners(hashes).tolist() == [0] * len(hashes)
    assert dx.reference_lookup_many(hashes[:100]) == [0] * 100


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(2, 80), extra=st.integers(0, 100), data=st.data())
def test_a_removal_moves_only_the_removed_servers_keys(
    servers: int, extra: int, data: st.DataObject,
) -> None:
    """Monotone under removals: every key that changes server was on the one removed."""
    dx = DxAlgorithm.build(numbered_servers(servers), capacity=servers + extra)
    hashes = _hashes(2000, servers)
    for _ in range(data.draw(st.integers(1, servers - 1))):
        index = data.draw(st.integers(0, len(dx.servers) - 1))
        fallen = dx.without(index)
        before, after = _names(dx, hashes), _names(fallen, hashes)
        assert set(before[before != after]) <= {dx.servers[index].name}
        dx = fallen


@pytest.mark.parametrize("servers", [1, 7, 100])
def test_an_added_server_takes_keys_only_for_itself(servers: int) -> None:
    """A rebuild with one more server (the next free slot set) moves keys only onto it."""
    fleet = numbered_servers(servers + 1)
    before = DxAlgorithm.build(fleet[:-1], capacity=2 * servers + 5)
    after = DxAlgorithm.build(fleet, capacity=2 * servers + 5)
    hashes = _hashes(5000, servers)
    moved = _names(before, hashes) != _names(after, hashes)
    assert set(_names(after, hashes)[moved]) <= {fleet[-1].name} and moved.any()


@pytest.mark.parametrize("removed", [0, 500])
def test_balance_at_a_thousand_servers_is_key_noise(removed: int) -> None:
    """Uniform keys over N = 1,000 (and after removing every other server): the CV of the
    key counts is within 1.5 times that of multinomial noise."""
    dx = DxAlgorithm.build(numbered_servers(1000))
    for i in range(removed):
        dx = dx.without(i)
    hashes = _hashes(400_000, 6)
    counts = np.bincount(dx.lookup_many(hashes), minlength=len(dx.servers))
    noise = np.sqrt((len(dx.servers) - 1) / len(hashes))
    assert counts.std() / counts.mean() < 1.5 * noise


def test_memory_is_a_bit_a_slot_and_2_bytes_a_server_after_a_removal() -> None:
    """capacity / 8 bytes of bits; the first removal adds the bucket-to-server map."""
    dx = DxAlgorithm.build(numbered_servers(100), capacity=1_000_000)
    assert dx.nbytes == 125_000
    fallen = dx.without(5)
    assert fallen.nbytes == 125_000 + 200
    assert fallen.bits().sum() == 99 and not fallen.bits()[5]


def test_parity_check_and_refusals() -> None:
    """The run's parity check holds after removals; bad capacities and weights are refused."""
    assert ALGORITHMS["dx"] is DxAlgorithm
    fallen = DxAlgorithm.build(numbered_servers(40)).without(5).without(30).without(0)
    hashes = _hashes(3000, 2)
    owners, _ = check_parity(fallen, hashes, fallen.forms(["dx"]))
    assert owners.tolist() == fallen.lookup_many(hashes).tolist()
    with pytest.raises(HarnessError, match="no more than dx's capacity of 3 slots"):
        DxAlgorithm.build(numbered_servers(4), capacity=3)
    with pytest.raises(ScenarioError, match="capacity must be an integer from 0"):
        DxAlgorithm.build(numbered_servers(4), capacity=-1)
    with pytest.raises(HarnessError, match="all of weight 1"):
        DxAlgorithm.build([Server("a"), Server("b", 2)])
    with pytest.raises(HarnessError, match="only a working slot while another one works"):
        DxAlgorithm.build(numbered_servers(1)).without(0)


@settings(max_examples=15, deadline=None)
@given(servers=st.integers(1, 65_535), data=st.data())
def test_any_fleet_size_the_harness_takes_routes_as_the_reference(
    servers: int, data: st.DataObject,
) -> None:
    """From 1 to 65,535 servers (the default capacity), with a few removals: C routes as
    the vectorised reference."""
    dx = DxAlgorithm.build(numbered_servers(servers))
    for _ in range(min(servers - 1, data.draw(st.integers(0, 3)))):
        dx = dx.without(data.draw(st.integers(0, len(dx.servers) - 1)))
    hashes = _hashes(500, servers)
    assert dx.lookup_many(hashes).tolist() == dx.reference_owners(hashes).tolist()
