"""Our recipes of the fixed-table clients, Kafka's default partitioner (`kafka-murmur2`) and
Redis Cluster's key slots (`redis-slots`): the C batch forms equal the plain-Python
definitions on any bytes, every lookup form equals the reference on any hash, the
published vectors hold, and what they cannot take is refused in one line. The live clients
are in tests/live/test_clients_live.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import client_hashes as plain
from harness.core.errors import HarnessError
from harness.core.native import client_hashes as c_client_hashes
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.kafka_partitioner import KafkaMurmur2Algorithm
from harness.recipes.algorithms.redis_slots import (
    RedisSlotsAlgorithm,
    interleaved_by_host,
    slot_ranges,
)

pytestmark = pytest.mark.c_core

KEY = st.binary(max_size=40) | st.builds(
    lambda a, b, c: a + b"{" + b + b"}" + c, st.binary(max_size=5), st.binary(max_size=5),
    st.binary(max_size=5))


@given(st.lists(KEY, max_size=30))
@settings(max_examples=300, deadline=None)
def test_c_key_hashes_equal_the_plain_definitions(keys: list[bytes]) -> None:
    """murmur2 (Kafka's seed), the Redis slot, twemproxy's fnv1a_64 and murmur: C batch
    equals plain Python on any bytes, tails, braces and bytes >= 0x80 included."""
    assert c_client_hashes.kafka_murmur2_many(keys).tolist() == [
        plain.murmur2_32(k, plain.KAFKA_SEED) for k in keys]
    assert c_client_hashes.redis_keyslot_many(keys).tolist() == [
        plain.redis_keyslot(k) for k in keys]
    assert c_client_hashes.twemproxy_hash_many(keys, "fnv1a_64").tolist() == [
        plain.twemproxy_fnv1a_64(k) for k in keys]
    assert c_client_hashes.twemproxy_hash_many(keys, "murmur").tolist() == [
        plain.twemproxy_murmur(k) for k in keys]


def test_published_vectors() -> None:
    """CRC-16/XMODEM's check value; Redis' documented slots and hash tags; Kafka's
    partitions of two keys as the Java client computes them."""
    assert plain.crc16_xmodem(b"123456789") == 0x31C3
    assert [plain.redis_keyslot(k) for k in (b"key", b"key2", b"key3", b"id:{key}")] == [
        12539, 4998, 935, 12539]
    assert plain.hash_tag(b"foo{}{bar}") == b"foo{}{bar}"  # an empty tag: the whole key
    assert plain.hash_tag(b"foo{{bar}}zap") == b"{bar"
    assert plain.hash_tag(b"foo{bar}{zap}") == b"bar"
    assert plain.kafka_partition(b"wu", 10) == 0
    assert plain.kafka_partition(b"100:48069", 12) == 9


HASHES = st.lists(st.integers(0, 2**32 - 1), max_size=50)


@pytest.mark.parametrize("name", ["kafka-murmur2", "redis-slots"])
@given(servers=st.integers(1, 300), hashes=HASHES)
@settings(max_examples=60, deadline=None)
def test_every_lookup_form_equals_the_reference(name: str, servers: int,
                                                hashes: list[int]) -> None:
    """lookup, lookup_many, the vectorised and the plain reference agree on any 32-bit
    hash, and route is hash_keys then lookup_many."""
    algorithm = get_algorithm(name).build([Server(f"s{i}") for i in range(servers)])
    array = np.array(hashes, dtype=np.uint32)
    expected = algorithm.reference_lookup_many(array)
    assert algorithm.lookup_many(array).tolist() == expected
    assert algorithm.reference_owners(array).tolist() == expected
    assert [algorithm.lookup(h) for h in hashes] == expected
    keys = [f"key-{h}".encode() for h in hashes]
    assert algorithm.route(keys).tolist() == algorithm.lookup_many(
        algorithm.hash_keys(keys)).tolist()


@given(st.integers(1, 4096))
@settings(max_examples=100, deadline=None)
def test_slot_ranges_tile_the_slots(masters: int) -> None:
    """redis-cli's split covers slots 0..16383 once, in contiguous ranges of 16384/N slots
    give or take one, for every count the recipe takes (and overruns past them)."""
    ranges = slot_ranges(masters)
    assert ranges[0][0] == 0 and ranges[-1][1] == 16383
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(ranges))
    sizes = {last - first + 1 for first, last in ranges}
    assert max(sizes) - min(sizes) <= 2 and min(sizes) >= 1
    assert slot_ranges(13901)[-1][1] > 16383


def test_redis_cli_splits_as_its_log_shows() -> None:
    """The ranges redis-cli 7.0 prints for 3 and 10 masters ("Master[0] -> Slots 0 -
    5460", ...), and its interleaving of masters by host."""
    assert slot_ranges(3) == [(0, 5460), (5461, 10922), (10923, 16383)]
    assert slot_ranges(10)[:3] == [(0, 1637), (1638, 3276), (3277, 4914)]
    assert interleaved_by_host(["a:1", "a:2", "a:3", "b:1", "b:2", "c:1"]) == [0, 3, 5, 1, 4, 2]


def test_exact_shares_sum_to_one() -> None:
    """Both give each server its exact share of the hash space: redis its slots / 16384,
    Kafka 2**31 positive hashes shared by remainder."""
    fleet = [Server(f"s{i}") for i in range(7)]
    redis = RedisSlotsAlgorithm.build(fleet).exact_shares()
    kafka = KafkaMurmur2Algorithm.build(fleet).exact_shares()
    assert redis.sum() == pytest.approx(1) and kafka.sum() == pytest.approx(1)
    assert redis.tolist() == [(b - a + 1) / 16384 for a, b in slot_ranges(7)]


@pytest.mark.parametrize(("name", "servers", "message"), [
    ("redis-slots", [Server(f"s{i}") for i in range(4097)],
     "servers must be at most 4,096, past which redis-cli's single-precision split of the "
     "slots overruns (got 4,097 servers)"),
    ("redis-slots", [Server("a"), Server("b", 2)],
     "servers must be all of weight 1, since Redis Cluster has no weights (got weight 2 for 'b')"),
    ("kafka-murmur2", [Server("a", 3)],
     "servers must be all of weight 1, since Kafka's partitioner has no weights (got "
     "weight 3 for 'a')"),
])
def test_refusals_are_one_line(name: str, servers: list[Server], message: str) -> None:
    """What each cannot take is refused before any work, in one line naming it."""
    with pytest.raises(HarnessError) as refused:
        get_algorithm(name).build(servers)
    assert str(refused.value) == f"algorithm {name!r}: {message}"
    with pytest.raises(HarnessError, match=r"takes no|unknown|not a"):
        get_algorithm(name).build([Server("a")], points=3)


@given(servers=st.integers(1, 120), keys=st.lists(KEY, max_size=30))
@settings(max_examples=40, deadline=None)
def test_twemproxy_md5_by_address_is_libmemcached(servers: int, keys: list[bytes]) -> None:
    """At key_hash = md5 and names = address, twemproxy's ring is libmemcached's (the same
    float32 shares, port 11211 left out), key for key, empty keys (hash 0) aside."""
    from harness.recipes.constructions import get_construction

    fleet = [Server(f"10.0.0.{i}:{11211 + i % 2}", 1 + i % 3) for i in range(servers)]
    ours = get_construction("twemproxy", key_hash="md5")
    libmemcached = get_construction("libmemcached")
    assert np.array_equal(ours.build_ring(fleet).positions,
                          libmemcached.build_ring(fleet).positions)
    named = [k for k in keys if k]
    assert ours.key_hashes(named).tolist() == libmemcached.key_hashes(named).tolist()
    assert ours.key_hashes([b""]).tolist() == [0]


def test_twemproxy_names_and_hashes() -> None:
    """names = given keeps ":11211" in the point names (another ring); fnv1a_64 and murmur
    are twemproxy's own 32-bit hashes; the label names what differs from the default."""
    from harness.recipes.constructions import get_construction

    fleet = [Server(f"10.0.0.{i}:11211") for i in range(5)]
    by_address = get_construction("twemproxy").build_ring(fleet)
    given = get_construction("twemproxy", names="given")
    assert not np.array_equal(by_address.positions, given.build_ring(fleet).positions)
    assert np.array_equal(given.build_ring(fleet).positions,
                          get_construction("libketama").build_ring(fleet).positions)
    fnv = get_construction("twemproxy")
    assert fnv.key_hashes([b"a", b"\xff"]).tolist() == [plain.twemproxy_fnv1a_64(b"a"),
                                                         plain.twemproxy_fnv1a_64(b"\xff")]
    assert fnv.label == "twemproxy" and given.label == "twemproxy names=given"
    assert get_construction("twemproxy", key_hash="md5").label == "twemproxy md5"
    with pytest.raises(HarnessError, match="key_hash"):
        get_construction("twemproxy", key_hash="crc16")


def test_a_peers_declared_ns_per_key_is_its_time_share() -> None:
    """A peer that routes through live servers declares its cost (`ns_per_key`): the time
    estimate charges each of its batches that many ns per key, the default 5,000 else."""
    from harness.run.estimate import estimated_seconds
    from harness.run.scenario import parse_scenario

    def seconds(peer: str) -> float:
        document = {"servers": {"count": 10}, "keys": {"count": 100_000},
                    "measure": {"metrics": [], "repeats": 3, "peers": [
                        {"command": ["python3", "peers/python/twemproxy_peer.py"],
                         **({"ns_per_key": float(peer)} if peer else {})}]}}
        return estimated_seconds(parse_scenario(document, "s.toml"))[0]

    batches = 2 + 2 * 4 + 3 + 2
    assert seconds("20000") - seconds("") == pytest.approx(
        batches * 100_000 * 15_000e-9, rel=1e-9)
