"""rendezvous-weighted: mcrouter's WeightedRendezvousHashFunc, in C and in both references.

Where the expected values come from:
- MurmurHash64A: the `murmurhash` wheel (spaCy's binding) compiles Austin Appleby's
  smhasher MurmurHash2.cpp and exports its MurmurHash64A; we call that symbol.
- Hash128to64: Google's CityHash as the `cityhash` wheel compiles it, whose
  CityHash64WithSeeds(s, seed0, seed1) is Hash128to64 of (CityHash64(s) - seed0, seed1).
- Routing: the expected owners and counts of mcrouter's own unit test,
  mcrouter/lib/test/WeightedRendezvousHashTest.cpp (endpoints "xxx.<i>.yy", keys
  "mykey:<i>"). mcrouter itself is not run here: neither Debian nor PyPI packages it.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from pathlib import Path
from typing import cast

import cityhash
import murmurhash.mrmr
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from harness.cli import main
from harness.core.errors import HarnessError, ScenarioError
from harness.core.native import algorithms as c_algorithms
from harness.core.native import hashes as c_hashes
from harness.core.servers import Server
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.rendezvous_weighted import (
    KEY_HASH_SEED,
    SERVER_HASH_SEED,
    WeightedRendezvousAlgorithm,
    hash128to64,
    murmur64a,
    pick,
    score,
)

pytestmark = pytest.mark.c_core

MASK64 = 2**64 - 1
KMUL = 0x9DDFEA08EB382D69


def _smhasher_murmur64a() -> Callable[[bytes, int, int], int]:
    library = ctypes.CDLL(murmurhash.mrmr.__file__)
    # uint64_t MurmurHash64A(const void *key, int len, uint64_t seed), C++-mangled.
    function = library._Z13MurmurHash64APKvim
    function.restype = ctypes.c_uint64
    function.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64]
    return cast("Callable[[bytes, int, int], int]", function)


SMHASHER_MURMUR64A = _smhasher_murmur64a()


def _mcrouter_fleet(weights: list[float]) -> list[Server]:
    """mcrouter's test endpoints (HashTestUtil.cpp genEndpoints): "xxx.<i>.yy"."""
    return [Server(f"xxx.{i}.yy", w) for i, w in enumerate(weights)]


MCROUTER_KEYS = [f"mykey:{i}".encode() for i in range(10_000)]
#: mcrouter's testMaxKey: the 256 bytes -128 .. 127 as chars
MAX_KEY = bytes((i - 128) & 0xFF for i in range(256))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=80), seed=st.integers(0, MASK64))
def test_murmur64a_equals_smhashers(data: bytes, seed: int) -> None:
    """Our MurmurHash64A, in C (one and many) and in Python, is smhasher's, compiled."""
    expected = SMHASHER_MURMUR64A(data, len(data), seed)
    assert murmur64a(data, seed) == c_hashes.murmur64a(data, seed) == expected
    assert c_hashes.murmur64a_many([data, data[:3]], seed).tolist() == [
        expected, SMHASHER_MURMUR64A(data[:3], len(data[:3]), seed)]


@pytest.mark.parametrize(("data", "seed", "expected"), [
    # Printed by smhasher's MurmurHash64A (the murmurhash wheel's, above): empty input,
    # mcrouter's two seeds, a whole 8-byte block, tails of 7 and 1 bytes >= 0x80 (a
    # signed-char port would differ there), and a 43-byte text.
    (b"", 0, 0x0),
    (b"", KEY_HASH_SEED, 0x5182659A087E0D30),
    (b"xxx.0.yy", SERVER_HASH_SEED, 0x5208D4B8D3932AE6),
    (b"mykey:1", KEY_HASH_SEED, 0x614BE40649E3EA46),
    (b"\xff" * 7, 0, 0x27F9346D84B0966E),
    (b"\x80" * 9, SERVER_HASH_SEED, 0x3714AAF74E2DA2D4),
    (b"The quick brown fox jumps over the lazy dog", 0, 0x5589CA33042A861B),
])
def test_murmur64a_vectors(data: bytes, seed: int, expected: int) -> None:
    """Fixed MurmurHash64A vectors, in C and in Python."""
    assert murmur64a(data, seed) == c_hashes.murmur64a(data, seed) == expected


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=40), seed0=st.integers(0, MASK64), seed1=st.integers(0, MASK64))
def test_hash128to64_equals_cityhashs(data: bytes, seed0: int, seed1: int) -> None:
    """Hash128to64(upper, lower) in C and Python is CityHash's: CityHash64WithSeeds(s, a, b)
    is its HashLen16(CityHash64(s) - a, b), i.e. Hash128to64 with b as the upper half."""
    lower = (cityhash.CityHash64(data) - seed0) & MASK64
    expected = cityhash.CityHash64WithSeeds(data, seed0, seed1)
    assert hash128to64(seed1, lower) == c_hashes.hash128to64(seed1, lower) == expected


def test_routes_as_mcrouters_own_test() -> None:
    """The owners and counts mcrouter's WeightedRendezvousHashTest expects, key for key."""
    three = WeightedRendezvousAlgorithm.build(_mcrouter_fleet([1, 1, 1]))
    assert three.route([b"sample", b"", b"mykey", MAX_KEY]).tolist() == [0, 2, 1, 1]
    many = WeightedRendezvousAlgorithm.build(_mcrouter_fleet([1] * 343))
    assert many.route([MAX_KEY, b"sample", b"", b"mykey"]).tolist() == [142, 115, 279, 302]
    cases: list[tuple[list[float], list[int]]] = [
        ([1, 1, 1], [3409, 3360, 3231]),
        ([1, 0.5, 0.1], [6292, 3118, 590]),
        ([1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5],
         [1381, 1299, 1283, 1359, 1296, 667, 669, 665, 672, 709]),
    ]
    for weights, counts in cases:
        algorithm = WeightedRendezvousAlgorithm.build(_mcrouter_fleet(weights))
        hashes = algorithm.hash_keys(MCROUTER_KEYS)
        owners = algorithm.lookup_many(hashes)
        assert np.bincount(owners, minlength=len(weights)).tolist() == counts
        assert [algorithm.lookup(int(h)) for h in hashes] == owners.tolist()
        assert algorithm.reference_owners(hashes).tolist() == owners.tolist()
        assert algorithm.reference_lookup_many(hashes[:1000]) == owners[:1000].tolist()


def test_a_zero_weight_never_wins_as_in_mcrouters_test() -> None:
    """mcrouter's weights 1, 0, 0.5 (a weight we refuse, so the C nodes and the plain pick
    are called directly): the counts its test expects."""
    weights = [1.0, 0.0, 0.5]
    server_hashes = [murmur64a(f"xxx.{i}.yy".encode(), SERVER_HASH_SEED) for i in range(3)]
    key_hashes = c_hashes.murmur64a_many(MCROUTER_KEYS, KEY_HASH_SEED)
    nodes = c_algorithms.CWeightedRendezvous(server_hashes, weights)
    owners = nodes.lookup_many(key_hashes)
    assert np.bincount(owners, minlength=3).tolist() == [6737, 0, 3263]
    assert [pick(server_hashes, weights, int(h)) for h in key_hashes[:2000]] == owners[
        :2000].tolist()


def test_removal_moves_as_in_mcrouters_test() -> None:
    """Of 499 equal servers, removing the first, last or middle one moves 19, 17 and 21
    of mcrouter's 10,000 keys, as its test expects."""
    fleet = _mcrouter_fleet([1] * 499)
    before = WeightedRendezvousAlgorithm.build(fleet)
    hashes = before.hash_keys(MCROUTER_KEYS)
    names = np.array([s.name for s in fleet])[before.lookup_many(hashes)]
    moved = []
    for gone in (0, 498, 499 // 2):
        rest = fleet[:gone] + fleet[gone + 1:]
        after = WeightedRendezvousAlgorithm.build(rest)
        moved.append(int((np.array([s.name for s in rest])[after.lookup_many(hashes)]
                          != names).sum()))
    assert moved == [19, 17, 21]


def _key_hash_for(server_hash: int, hashed: int) -> int:
    """The key hash whose hash128to64 with `server_hash` is `hashed`: each step of
    Hash128to64 is invertible (an odd multiplier; an xor-shift by 47 >= 32 undoes itself)."""
    inverse = pow(KMUL, -1, 2**64)
    b = (hashed * inverse) & MASK64
    b ^= b >> 47
    a = ((b * inverse) & MASK64) ^ server_hash
    a ^= a >> 47
    return ((a * inverse) & MASK64) ^ server_hash


def test_edges_u_zero_largest_u_and_ties() -> None:
    """u == 0 scores 0 and never wins; the largest u (1 - 2**-53) wins; equal scores go to
    the first node; a key all nodes score 0 goes to node 0. In C and in Python."""
    h0, h1 = murmur64a(b"a", SERVER_HASH_SEED), murmur64a(b"b", SERVER_HASH_SEED)
    zero_for_h0 = _key_hash_for(h0, 5 << 53)  # low 53 bits 0: u == 0
    assert hash128to64(h0, zero_for_h0) == 5 << 53
    assert score(3.0, h0, zero_for_h0) == c_algorithms.wrendezvous_score(3.0, h0, zero_for_h0) == 0
    top_for_h0 = _key_hash_for(h0, 2**53 - 1)  # u = 1 - 2**-53: the highest score there is
    assert score(1.0, h0, top_for_h0) == c_algorithms.wrendezvous_score(1.0, h0, top_for_h0)
    assert score(1.0, h0, top_for_h0) == 1.0 / -math.log(1 - 2**-53)
    for hashes, weights, key, winner in [
        ([h0, h1], [1e6, 1.0], zero_for_h0, 1),   # any positive score beats u == 0
        ([h1, h0], [1.0, 1.0], top_for_h0, 1),
        ([h0, h0, h1], [1.0, 1.0, 1e-300], top_for_h0, 0),  # a tie: the first node
        ([h1, h0, h0], [1e-300, 1.0, 1.0], top_for_h0, 1),
        ([h0, h0], [1.0, 1.0], zero_for_h0, 0),   # nothing above 0: node 0
    ]:
        nodes = c_algorithms.CWeightedRendezvous(hashes, weights)
        assert nodes.lookup(key) == pick(hashes, weights, key) == winner
        assert nodes.lookup_many(np.array([key], dtype=np.uint64)).tolist() == [winner]


@settings(max_examples=300, deadline=None)
@given(weight=st.floats(0, 1e300), server_hash=st.integers(0, MASK64),
       key_hash=st.integers(0, MASK64))
def test_scores_are_bit_identical_in_c_and_python(weight: float, server_hash: int,
                                                  key_hash: int) -> None:
    """C (libm's log) and Python (math.log, the same libm) give the very same double."""
    assert c_algorithms.wrendezvous_score(weight, server_hash, key_hash) == score(
        weight, server_hash, key_hash)


def test_the_order_of_operations_is_mcrouters() -> None:
    """weight * (1.0 / -log(u)), as WeightedRendezvousHashFunc.cpp writes it; weight / -log(u)
    rounds differently for about a quarter of inputs, and could flip a near tie."""
    server_hash = murmur64a(b"server", SERVER_HASH_SEED)
    differ = 0
    for k in range(200):
        key_hash = murmur64a(str(k).encode(), KEY_HASH_SEED)
        u = (hash128to64(server_hash, key_hash) & (2**53 - 1)) / 2**53
        weight = 0.1 + k / 7
        assert score(weight, server_hash, key_hash) == weight * (1.0 / -math.log(u))
        differ += weight * (1.0 / -math.log(u)) != weight / -math.log(u)
    assert differ > 0


WEIGHTS = st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(weights=st.lists(WEIGHTS, min_size=1, max_size=40),
       keys=st.lists(st.binary(max_size=24), min_size=1, max_size=300))
def test_every_path_agrees(weights: list[float], keys: list[bytes]) -> None:
    """Batch, scalar, vectorised and plain references pick the same servers, any weights."""
    algorithm = WeightedRendezvousAlgorithm.build(
        [Server(f"s{i}", w) for i, w in enumerate(weights)])
    hashes = algorithm.hash_keys(keys)
    assert hashes.tolist() == [murmur64a(k, KEY_HASH_SEED) for k in keys]
    owners = algorithm.lookup_many(hashes).tolist()
    assert owners == [algorithm.lookup(int(h)) for h in hashes]
    assert owners == algorithm.reference_owners(hashes).tolist()
    assert owners == algorithm.reference_lookup_many(hashes)


def test_near_ties_of_the_vectorised_reference_go_to_the_plain_one() -> None:
    """Two servers of one name and weight tie on every key: the vectorised reference hands
    each such key to the plain one, which gives the first, as C does."""
    algorithm = WeightedRendezvousAlgorithm.build([Server("x", 2.0), Server("x", 2.0),
                                                   Server("y", 1.0)])
    hashes = np.arange(1, 3000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    owners = algorithm.lookup_many(hashes).tolist()
    assert 1 not in owners and 0 in owners and 2 in owners
    assert algorithm.reference_owners(hashes).tolist() == owners
    assert algorithm.reference_lookup_many(hashes) == owners


def _chi_square_bound(df: int) -> float:
    # The statistic a correct implementation with ideal hashing exceeds with probability
    # 1e-6 (the keys are fixed, so the outcome is too: this bounds a false alarm).
    return float(stats.chi2.ppf(1 - 1e-6, df))


def _shares(weights: list[float], keys: int) -> tuple[np.ndarray, np.ndarray]:
    algorithm = WeightedRendezvousAlgorithm.build(
        [Server(f"server-{i}", w) for i, w in enumerate(weights)])
    owners = algorithm.route([f"key-{i}".encode() for i in range(keys)])
    counts = np.bincount(owners, minlength=len(weights)).astype(np.float64)
    return counts, np.asarray(weights) / sum(weights)


def test_shares_follow_the_weights_1_2_5() -> None:
    """Over 200,000 keys, weights 1:2:5 give shares 1/8, 2/8, 5/8: each within a z-test
    bound (Bonferroni over the 3 servers, 1e-6 overall) and Pearson's chi-square within
    its 1e-6 bound; the same counts against equal shares fail by far (the test can fail)."""
    keys = 200_000
    counts, expected = _shares([1, 2, 5], keys)
    z = (counts - keys * expected) / np.sqrt(keys * expected * (1 - expected))
    assert np.abs(z).max() < stats.norm.ppf(1 - 1e-6 / (2 * 3))
    chi_square = float((((counts - keys * expected) ** 2) / (keys * expected)).sum())
    assert chi_square < _chi_square_bound(2)
    even = np.full(3, keys / 3)
    assert float((((counts - even) ** 2) / even).sum()) > 1000 * _chi_square_bound(2)


def test_shares_follow_varied_weights_over_100_servers() -> None:
    """100 servers of weights from 0.1 to 10 (seeded draw): chi-square within its 1e-6 bound."""
    weights = np.random.default_rng(7).uniform(0.1, 10, 100).tolist()
    keys = 200_000
    counts, expected = _shares(weights, keys)
    chi_square = float((((counts - keys * expected) ** 2) / (keys * expected)).sum())
    assert chi_square < _chi_square_bound(99)


def _owner_names(servers: list[Server], keys: list[bytes]) -> np.ndarray:
    algorithm = WeightedRendezvousAlgorithm.build(servers)
    return np.array([s.name for s in servers])[algorithm.route(keys)]


@settings(max_examples=25, deadline=None)
@given(weights=st.lists(st.floats(0.1, 10), min_size=2, max_size=25), which=st.data(),
       factor=st.floats(0.05, 20).filter(lambda f: f != 1))
def test_a_weight_change_moves_keys_only_to_or_from_that_server(
    weights: list[float], which: st.DataObject, factor: float,
) -> None:
    """Raising one server's weight moves keys only to it; lowering it, only from it;
    removing a server moves only its keys; adding one moves keys only to it."""
    keys = [f"key-{i}".encode() for i in range(2000)]
    fleet = [Server(f"s{i}", w) for i, w in enumerate(weights)]
    j = which.draw(st.integers(0, len(fleet) - 1))
    before = _owner_names(fleet, keys)
    changed = [*fleet[:j], Server(fleet[j].name, fleet[j].weight * factor), *fleet[j + 1:]]
    after = _owner_names(changed, keys)
    moved = before != after
    assert set((after if factor > 1 else before)[moved]) <= {fleet[j].name}
    removed = _owner_names(fleet[:j] + fleet[j + 1:], keys)
    assert set(before[before != removed]) <= {fleet[j].name}
    added = _owner_names([*fleet, Server("new", weights[0])], keys)
    assert set(added[added != before]) <= {"new"}


def test_a_weight_change_moves_the_share_it_should() -> None:
    """Ten servers of weight 1, one raised to 2: its share goes from 1/10 to 2/11, so
    2/11 - 1/10 of the keys move (within 5 binomial standard deviations), all to it."""
    keys = [f"key-{i}".encode() for i in range(200_000)]
    fleet = [Server(f"server-{i}") for i in range(10)]
    before = _owner_names(fleet, keys)
    after = _owner_names([*fleet[:3], Server("server-3", 2.0), *fleet[4:]], keys)
    moved = int((before != after).sum())
    p = 2 / 11 - 1 / 10
    assert abs(moved - len(keys) * p) < 5 * math.sqrt(len(keys) * p * (1 - p))
    assert set(after[before != after]) == {"server-3"}


def test_runner_parity_and_structure() -> None:
    """The runner's parity check passes; 16 bytes per server; no parameters."""
    fleet = [Server(f"server-{i}", 1 + i % 4) for i in range(20)]
    algorithm = ALGORITHMS["rendezvous-weighted"].build(fleet)
    assert isinstance(algorithm, WeightedRendezvousAlgorithm)
    hashes = algorithm.hash_keys([f"key-{i}".encode() for i in range(5000)])
    owners, parity = check_parity(algorithm, hashes, algorithm.forms(["numpy-aligned"]))
    assert parity.ok and owners.tolist() == algorithm.lookup_many(hashes).tolist()
    assert (algorithm.entries, algorithm.entry_size, algorithm.nbytes) == (20, 16, 320)
    assert algorithm.key_bits == 64
    assert ALGORITHMS["rendezvous-weighted"].build(fleet).exact_shares() is None
    assert algorithm.server_hashes[0] == murmur64a(b"server-0", SERVER_HASH_SEED)
    with pytest.raises(ScenarioError, match="algorithm 'rendezvous-weighted': unknown key"):
        WeightedRendezvousAlgorithm.build(fleet, seed=1)


@pytest.mark.parametrize("weight", [0.0, -1.0, math.inf, math.nan])
def test_build_refuses_weights_that_are_not_positive_finite(weight: float) -> None:
    """From Python, a weight that is not a positive finite number is refused, named."""
    with pytest.raises(HarnessError, match=r"servers must be of positive finite weight.*'b'"):
        WeightedRendezvousAlgorithm.build([Server("a"), Server("b", weight)])


BAD_WEIGHTS = {
    "zero in a list": ("", '[servers]\nlist = [{name = "a"}, {name = "b", weight = 0}]',
                       "servers.list[1].weight must be a number from 1e-06 to 1e+12", "got 0"),
    "negative for a count": ("", "[servers]\ncount = 3\nweight = -2",
                             "servers.weight must be a number from 1e-06 to 1e+12", "got -2"),
    "nan": ("", '[servers]\nlist = [{name = "a", weight = nan}]',
            "servers.list[0].weight must be a number from 1e-06 to 1e+12", "nan"),
    "infinite added server": ("", '[servers]\ncount = 3\n[[operations]]\nkind = "add"\n'
                              'server = "x"\nweight = inf',
                              "operations[0].weight must be a number from 1e-06 to 1e+12", "inf"),
    "unknown parameter": ("seed = 3\n", "[servers]\ncount = 3",
                          "unknown key 'algorithm.seed'", "valid keys here"),
}


@pytest.mark.parametrize("case", list(BAD_WEIGHTS))
def test_scenario_refuses_bad_weights_before_any_work(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A rendezvous-weighted scenario with a weight that is not a positive finite number
    (or an unknown parameter) exits 2 with one line naming file and field; no output."""
    algorithm_extra, rest, field, got = BAD_WEIGHTS[case]
    path = tmp_path / "scenario.toml"
    path.write_text(f'[algorithm]\nname = "rendezvous-weighted"\n{algorithm_extra}{rest}',
                    encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: ") and len(err.splitlines()) == 1
    assert field in err and got in err
    assert not out.exists()


def test_a_scenario_runs_end_to_end(tmp_path: Path) -> None:
    """A small weighted scenario runs: parity checked, removal and addition move keys
    only to or from the changed server."""
    import json

    path = tmp_path / "w.toml"
    path.write_text('name = "w"\n[algorithm]\nname = "rendezvous-weighted"\n[servers]\n'
                    'list = [{name = "a", weight = 1}, {name = "b", weight = 2}, '
                    '{name = "c", weight = 5}]\n[keys]\ncount = 3000\n[measure]\nrepeats = 1\n'
                    'scalar_keys = 200\nmetrics = ["balance", "movement"]\n'
                    '[[operations]]\nkind = "remove"\nserver = "b"\n'
                    '[[operations]]\nkind = "add"\nserver = "d"\nweight = 3\n', encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    (run,) = json.loads((tmp_path / "out" / "w.json").read_text())["runs"]
    assert run["parity"]["ok"] and run["algorithm"] == "rendezvous-weighted"
    assert [m["ring_only_changed_server"] for m in run["figures"]["movement"]] == [True, True]
