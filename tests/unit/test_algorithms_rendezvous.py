"""rendezvous: the same picks as pymemcache 4's RendezvousHash, in C and in both references."""

from __future__ import annotations

import numpy as np
import pytest
from clandestined import RendezvousHash as ClandestinedRendezvousHash
from hypothesis import given, settings
from hypothesis import strategies as st
from pymemcache.client.murmur3 import murmur3_32 as pymemcache_murmur3
from pymemcache.client.rendezvous import RendezvousHash

from harness.core.errors import HarnessError, ScenarioError
from harness.core.native import algorithms as c_algorithms
from harness.core.native import hashes as c_hashes
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.rendezvous import (
    KEYS,
    RendezvousAlgorithm,
    murmur3_32,
    murmur3_32_rows,
)

pytestmark = pytest.mark.c_core

ASCII_KEYS = [f"key-{i}".encode() for i in range(4000)] + [
    b"", b"k", b"ab", b"abc", b"abcd", b"/img/cat.png?size=large&v=42", b"x" * 257]


def _pymemcache_owners(servers: list[Server], keys: list[bytes]) -> list[int]:
    names = [s.name for s in servers]
    hashing = RendezvousHash(list(names))
    return [names.index(hashing.get_node(key.decode())) for key in keys]


@pytest.mark.parametrize("fleet", [
    numbered_servers(1), numbered_servers(10), numbered_servers(100),
    [Server(f"10.0.{i // 250}.{i % 250}:11211") for i in range(30)],
])
def test_route_equals_pymemcache_get_node(fleet: list[Server]) -> None:
    """route([k]) is RendezvousHash(names).get_node(k) for thousands of ASCII keys."""
    expected = _pymemcache_owners(fleet, ASCII_KEYS)
    algorithm = ALGORITHMS["rendezvous"].build(fleet)
    assert algorithm.route(ASCII_KEYS).tolist() == expected
    assert algorithm.route([ASCII_KEYS[5]]).tolist() == expected[5:6]
    hashes = algorithm.hash_keys(ASCII_KEYS)
    assert [algorithm.lookup(int(h)) for h in hashes] == expected
    assert algorithm.reference_owners(hashes).tolist() == expected
    assert algorithm.reference_lookup_many(hashes[:500]) == expected[:500]


@settings(max_examples=200, deadline=None)
@given(prefix=st.binary(max_size=12), key=st.binary(max_size=40))
def test_scores_are_standard_murmur3_of_prefix_and_key(prefix: bytes, key: bytes) -> None:
    """The C score (prefix blocks hashed once) equals MurmurHash3_x86_32 of prefix + key,
    in C, in plain Python and vectorised, for every prefix and key length."""
    nodes = c_algorithms.CRendezvousNodes([prefix], [0])
    expected = murmur3_32(prefix + key)
    assert nodes.score(0, key) == expected == c_hashes.murmur3_32(prefix + key)
    rows = np.frombuffer(prefix + key, dtype=np.uint8).reshape(1, -1)
    assert murmur3_32_rows(rows).tolist() == [expected]


@settings(max_examples=150, deadline=None)
@given(prefixes=st.lists(st.binary(max_size=11), min_size=1, max_size=9),
       keys=st.lists(st.binary(max_size=300), min_size=1, max_size=6))
def test_picks_are_the_highest_standard_murmur3_score(
    prefixes: list[bytes], keys: list[bytes],
) -> None:
    """The C picks (each key's blocks mixed once for all nodes) are the highest MurmurHash3
    of prefix + key, a tie to the greater rank, for prefixes ending at every block offset
    and keys of every length (the longest scored without the shortcut)."""
    ranks = list(range(len(prefixes)))[::-1]
    nodes = c_algorithms.CRendezvousNodes(prefixes, ranks)
    data = b"".join(keys)
    offsets = np.cumsum([0, *map(len, keys)]).astype(np.uint64)
    expected = []
    for key in keys:
        scores = [(murmur3_32(prefix + key), rank) for prefix, rank in zip(prefixes, ranks,
                                                                           strict=True)]
        expected.append(scores.index(max(scores)))
    assert [nodes.pick(k) for k in keys] == expected
    indexes = np.arange(len(keys), dtype=np.uint64)
    assert nodes.pick_many(data, offsets, indexes).tolist() == expected


@settings(max_examples=100, deadline=None)
@given(text=st.text(st.characters(max_codepoint=127), max_size=30))
def test_murmur3_equals_pymemcaches_on_ascii(text: str) -> None:
    """Our MurmurHash3 is pymemcache's on ASCII text (pymemcache hashes characters)."""
    assert murmur3_32(text.encode()) == pymemcache_murmur3(text)


def test_route_equals_clandestined_find_node() -> None:
    """clandestined (the same scheme, in C) picks the same servers."""
    fleet = numbered_servers(50)
    names = [s.name for s in fleet]
    clandestined = ClandestinedRendezvousHash(list(names))
    expected = [names.index(clandestined.find_node(k.decode())) for k in ASCII_KEYS]
    assert RendezvousAlgorithm.build(fleet).route(ASCII_KEYS).tolist() == expected


def test_a_tie_goes_to_the_greater_name() -> None:
    """Equal scores go to the node of greater rank (name order), whatever its position."""
    same = [b"x-", b"x-", b"x-"]
    assert c_algorithms.CRendezvousNodes(same, [0, 2, 1]).pick(b"key") == 1
    assert c_algorithms.CRendezvousNodes(same, [2, 0, 1]).pick(b"key") == 0


@settings(max_examples=25, deadline=None)
@given(servers=st.integers(1, 30), gone=st.data(), keys=st.lists(st.binary(max_size=16),
                                                                  min_size=1, max_size=200))
def test_paths_agree_and_removal_moves_only_the_removed_servers_keys(
    servers: int, gone: st.DataObject, keys: list[bytes],
) -> None:
    """Batch, scalar and references agree on any bytes keys; removing any server moves
    only its keys."""
    fleet = numbered_servers(servers + 1)
    before = RendezvousAlgorithm.build(fleet)
    hashes = before.hash_keys(keys)
    owners = before.lookup_many(hashes)
    assert owners.tolist() == before.reference_owners(hashes).tolist()
    assert owners.tolist() == before.reference_lookup_many(hashes)
    assert owners.tolist() == [before.lookup(int(h)) for h in hashes]
    removed = gone.draw(st.integers(0, servers))
    rest = [s for i, s in enumerate(fleet) if i != removed]
    after = RendezvousAlgorithm.build(rest)
    names_before = np.array([s.name for s in fleet])[owners]
    names_after = np.array([s.name for s in rest])[after.lookup_many(hashes)]
    assert set(names_before[names_before != names_after]) <= {fleet[removed].name}


def test_key_indexes_are_stable() -> None:
    """A key keeps its index in the key table; an index past the table is refused."""
    first = KEYS.indexes([b"stable-key", b"other-key"])
    assert KEYS.indexes([b"other-key", b"stable-key"]).tolist() == first[::-1].tolist()
    algorithm = RendezvousAlgorithm.build(numbered_servers(3))
    with pytest.raises(HarnessError, match="is not in the key table"):
        algorithm.lookup_many(np.array([len(KEYS) + 5], dtype=np.uint64))


def test_parity_check_of_the_runner_passes() -> None:
    """The runner's parity check (batch, scalar, both references) passes for rendezvous."""
    algorithm = RendezvousAlgorithm.build(numbered_servers(20))
    hashes = algorithm.hash_keys(ASCII_KEYS)
    owners, _ = check_parity(algorithm, hashes, algorithm.forms(["numpy-aligned"]))
    assert owners.tolist() == _pymemcache_owners(numbered_servers(20), ASCII_KEYS)


def test_structure_and_parameters() -> None:
    """One 16-byte record per server; no parameters accepted."""
    algorithm = RendezvousAlgorithm.build(numbered_servers(8))
    assert (algorithm.entries, algorithm.entry_size, algorithm.nbytes) == (8, 16, 128)
    assert algorithm.forms([]) == {"rendezvous": algorithm}
    assert ALGORITHMS["rendezvous"].build(numbered_servers(8)).exact_shares() is None
    with pytest.raises(ScenarioError, match="algorithm 'rendezvous': unknown key 'seed'"):
        RendezvousAlgorithm.build(numbered_servers(2), seed=1)
    with pytest.raises(HarnessError, match="all of weight 1, since rendezvous has no weights"):
        RendezvousAlgorithm.build([Server("a"), Server("b", 3)])
