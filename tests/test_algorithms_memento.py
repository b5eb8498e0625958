"""memento: jump with nothing removed, the plain-Python algorithm after any removals."""

from __future__ import annotations

import jump
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.memento import MementoAlgorithm

EDGES = np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1], dtype=np.uint64)


def _hashes(count: int, seed: int) -> np.ndarray:
    drawn = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64,
                                                 endpoint=False)
    return np.concatenate([EDGES, drawn])


def _names(algorithm: MementoAlgorithm, hashes: np.ndarray) -> np.ndarray:
    return np.array([s.name for s in algorithm.servers])[algorithm.lookup_many(hashes)]


@pytest.mark.parametrize("servers", [1, 2, 10, 1000, 65_535])
def test_with_nothing_removed_it_is_jump_and_holds_nothing(servers: int) -> None:
    """No removal: every lookup equals PyPI jump-consistent-hash's jump.hash(h, N), and the
    structure holds 0 bytes, as jump."""
    memento = ALGORITHMS["memento"].build(numbered_servers(servers))
    hashes = _hashes(5000, servers)
    expected = [jump.hash(int(h), servers) for h in hashes]
    assert memento.lookup_many(hashes).tolist() == expected
    assert [memento.lookup(int(h)) for h in hashes[:500]] == expected[:500]
    assert memento.reference_owners(hashes).tolist() == expected
    assert memento.nbytes == 0


def test_removing_from_the_end_shrinks_jump() -> None:
    """The last server removed with an empty memento is jump over one bucket fewer."""
    memento = MementoAlgorithm.build(numbered_servers(50)).without(49).without(48)
    hashes = _hashes(3000, 1)
    assert memento.size == 48 and memento.nbytes == 0
    assert memento.lookup_many(hashes).tolist() == [jump.hash(int(h), 48) for h in hashes]


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(1, 80), data=st.data())
def test_c_equals_the_reference_under_any_removals(servers: int, data: st.DataObject) -> None:
    """The C batch, the C scalar, the vectorised and the plain reference agree after any
    sequence of removals (from the end, the middle, or both)."""
    memento = MementoAlgorithm.build(numbered_servers(servers))
    hashes = _hashes(400, servers)
    for _ in range(data.draw(st.integers(0, servers - 1)) + 1):
        expected = memento.reference_owners(hashes)
        assert memento.lookup_many(hashes).tolist() == expected.tolist()
        assert [memento.lookup(int(h)) for h in hashes[:60]] == expected[:60].tolist()
        assert memento.reference_lookup_many(hashes[:60]) == expected[:60].tolist()
        if len(memento.servers) == 1:
            break
        last = len(memento.servers) - 1
        memento = memento.without(data.draw(st.one_of(st.just(last), st.integers(0, last))))


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(2, 100), data=st.data())
def test_a_removal_moves_only_the_removed_servers_keys(servers: int, data: st.DataObject) -> None:
    """Monotone under removals: every key that changes server was on the one removed."""
    memento = MementoAlgorithm.build(numbered_servers(servers))
    hashes = _hashes(2000, servers)
    for _ in range(data.draw(st.integers(1, servers - 1))):
        index = data.draw(st.integers(0, len(memento.servers) - 1))
        fallen = memento.without(index)
        before, after = _names(memento, hashes), _names(fallen, hashes)
        moved = before != after
        assert set(before[moved]) <= {memento.servers[index].name}
        memento = fallen


@pytest.mark.parametrize("removed", [0, 500])
def test_balance_at_a_thousand_servers_is_key_noise(removed: int) -> None:
    """Uniform keys over N = 1,000 (and after removing every other server): the CV of the
    key counts is within 1.5 times that of multinomial noise."""
    memento = MementoAlgorithm.build(numbered_servers(1000))
    for i in range(removed):
        memento = memento.without(i)
    hashes = _hashes(400_000, 9)
    counts = np.bincount(memento.lookup_many(hashes), minlength=len(memento.servers))
    noise = np.sqrt((len(memento.servers) - 1) / len(hashes))
    assert counts.std() / counts.mean() < 1.5 * noise


@pytest.mark.parametrize("removed", [8, 100, 500, 900])
def test_a_removal_costs_at_most_32_bytes_beyond_the_server_map(removed: int) -> None:
    """Each remembered removal is an 8-byte entry in a table at most half full (16 to 32
    bytes); the bucket-to-server map adds 2 bytes per server."""
    memento = MementoAlgorithm.build(numbered_servers(1000))
    for _ in range(removed):
        memento = memento.without(0)
    table = memento.nbytes - 2 * 1000
    assert 16 * removed <= table <= 32 * removed


def test_parity_check_and_refusals() -> None:
    """The run's parity check holds after removals; weights and a last server are refused."""
    fallen = MementoAlgorithm.build(numbered_servers(40)).without(5).without(38).without(0)
    hashes = _hashes(3000, 2)
    owners, _ = check_parity(fallen, hashes, fallen.forms(["memento"]))
    assert owners.tolist() == fallen.lookup_many(hashes).tolist()
    with pytest.raises(HarnessError, match="all of weight 1"):
        MementoAlgorithm.build([Server("a"), Server("b", 2)])
    assert MementoAlgorithm.removal_problem(numbered_servers(1), "server-0") is not None
    with pytest.raises(HarnessError, match="only a working bucket while another one works"):
        MementoAlgorithm.build(numbered_servers(1)).without(0)
