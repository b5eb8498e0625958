"""Real clients that route by a fixed table, run live: Redis Cluster (redis-server and
redis-cli 7.0) and Kafka's default partitioner (kafka-python 3.0). Each routes 100,000 keys
of 10 "host:port" servers (and of 100) exactly like its recipe of ours; neither takes
weights, so the 1:2:4 fleet is refused. Installed by .ci/install-peers.sh (Debian
redis-server) and the `test` extra (kafka-python); skipped locally where missing, failed
in CI."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.redis_slots import RedisSlotsAlgorithm
from harness.recipes.peers.foreign import ForeignPeerSpec, open_foreign_peer
from tests.live_servers import Processes, processes, redis_node
from tests.paths import ROOT
from tests.toolchains import missing, require_program

#: 100,000 keys, some with hash tags (Redis hashes only the tag), one empty
KEYS = [f"key-{i}".encode() for i in range(99_990)] + [
    b"", b"{user1000}.following", b"{user1000}.followers", b"foo{}{bar}", b"foo{{bar}}zap",
    b"foo{bar}{zap}", b"{", b"}{", b"id:{key}", b"\xff\x80{\xfe}"]
TEN = [Server(f"10.0.{i}.1:6379") for i in range(10)]
HUNDRED = [Server(f"10.0.{i // 250}.{i % 250 + 1}:6379") for i in range(100)]
WEIGHTED = [Server(f"10.0.0.{i + 1}:6379", (1, 2, 4)[i % 3]) for i in range(100)]


def _peer_routes(spec: ForeignPeerSpec, servers: list[Server]) -> np.ndarray:
    peer = open_foreign_peer(spec, servers)
    try:
        return peer.route_many(KEYS)
    finally:
        peer.close()


# ---- Redis Cluster ----

@pytest.fixture(scope="module")
def redis() -> None:
    require_program("redis-server")
    require_program("redis-cli")


def _keyslots(port: int, keys: list[bytes]) -> list[int]:
    """CLUSTER KEYSLOT of each key from a live node, pipelined."""
    request = b"".join(b"*3\r\n$7\r\nCLUSTER\r\n$7\r\nKEYSLOT\r\n$%d\r\n%s\r\n" % (len(k), k)
                       for k in keys)
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(request)
        data = b""
        while data.count(b"\r\n") < len(keys):
            chunk = connection.recv(1 << 20)
            assert chunk, "redis-server closed the connection"
            data += chunk
    lines = data.split(b"\r\n")[:len(keys)]
    assert all(line.startswith(b":") for line in lines)
    return [int(line[1:]) for line in lines]


def test_cluster_keyslot_is_our_slot_of_every_key(redis: None, tmp_path: Path) -> None:
    """redis-server 7.0's CLUSTER KEYSLOT gives every one of the 100,000 keys (hash tags,
    empty tags, nested braces and non-ASCII bytes among them) the slot our C and
    plain-Python forms compute."""
    from harness.core.client_hashes import redis_keyslot

    ours = get_algorithm("redis-slots").build(TEN).hash_keys(KEYS)
    with processes() as started:
        port = redis_node(started, tmp_path)
        live = _keyslots(port, KEYS)
    assert live == ours.tolist()
    assert [redis_keyslot(k) for k in KEYS[-10:]] == live[-10:]
    assert live[-9:-7] == [live[-9]] * 2  # the two {user1000} keys share a slot


def _created_cluster(started: Processes, directory: Path,
                     hosts: list[str]) -> tuple[list[str], list[tuple[int, int, str]]]:
    """Nodes on `hosts` (one each), made a cluster by redis-cli --cluster create in that
    order; returns their "host:port" names and CLUSTER SLOTS as (first, last, name)."""
    names = [f"{host}:{redis_node(started, directory, host)}" for host in hosts]
    subprocess.run(["redis-cli", "--cluster", "create", *names, "--cluster-replicas", "0",
                    "--cluster-yes"], check=True, capture_output=True, timeout=60)
    ranges = []
    for name in names:
        host, port = name.rsplit(":", 1)
        reply = subprocess.run(["redis-cli", "-h", host, "-p", port, "cluster", "nodes"],
                               check=True, capture_output=True, text=True, timeout=30).stdout
        # Each node's own line: "<id> <ip:port@bus> myself,master - 0 0 <epoch> connected
        # <first>-<last>".
        mine = next(line.split() for line in reply.splitlines() if "myself" in line)
        for held in mine[8:]:
            first, _, last = held.partition("-")
            ranges.append((int(first), int(last or first), name))
    return names, sorted(ranges)


@pytest.mark.parametrize("nodes", [3, 10])
def test_redis_cli_shares_the_slots_as_our_recipe(redis: None, tmp_path: Path,
                                                  nodes: int) -> None:
    """`redis-cli --cluster create` of live nodes (3, its least, and 10) gives each master
    the contiguous slot range our redis-slots gives its server. (Nodes on one host: the
    interleaving of hosts is checked against redis-cli's rule in
    tests/unit/test_client_recipes.py.)"""
    with processes() as started:
        names, live = _created_cluster(started, tmp_path, ["127.0.0.1"] * nodes)
    recipe = RedisSlotsAlgorithm.build([Server(n) for n in names])
    assert live == sorted((first, last, names[owner])
                          for first, last, owner in recipe.slot_ranges())


REDIS_PEER = ("python3", str(ROOT / "peers" / "python" / "redis_slots_peer.py"))


@pytest.mark.parametrize("servers", [TEN, HUNDRED], ids=["10", "100"])
def test_redis_peer_routes_like_redis_slots(redis: None, servers: list[Server]) -> None:
    """The process peer (a live redis-server's CLUSTER KEYSLOT, slots shared as redis-cli
    does) routes every key as our redis-slots algorithm; no redis-server is left behind."""
    spec = ForeignPeerSpec("redis-cluster", command=REDIS_PEER)
    routed = _peer_routes(spec, servers)
    assert np.array_equal(routed, get_algorithm("redis-slots").build(servers).route(KEYS))
    assert subprocess.run(["pgrep", "-f", "redis-slots-peer-"], capture_output=True,
                          check=False).stdout == b""


def test_redis_peers_run_side_by_side(redis: None) -> None:
    """Two redis peers open at once each route every key: every cluster-mode redis-server
    took the bus port 10000 when it had no client port, so the second one aborted and its
    peer's first ROUTE failed with a broken pipe (seen in a clients run beside the tests)."""
    first = open_foreign_peer(ForeignPeerSpec("redis-a", command=REDIS_PEER), TEN)
    try:
        second = open_foreign_peer(ForeignPeerSpec("redis-b", command=REDIS_PEER), TEN)
        try:
            assert np.array_equal(first.route_many(KEYS[:5_000]),
                                  second.route_many(KEYS[:5_000]))
        finally:
            second.close()
    finally:
        first.close()


def test_redis_peer_and_recipe_refuse_weights(redis: None) -> None:
    """Redis has no weights: the 1:2:4 fleet is refused by the peer at BUILD and by the
    recipe, each in one line."""
    with pytest.raises(HarnessError, match="peer 'redis-cluster': refused BUILD: Redis "
                                           "Cluster has no weights"):
        open_foreign_peer(ForeignPeerSpec("redis-cluster", command=REDIS_PEER), WEIGHTED)
    with pytest.raises(HarnessError, match="all of weight 1, since Redis Cluster has no "
                                           "weights"):
        get_algorithm("redis-slots").build(WEIGHTED)


# ---- Kafka ----

@pytest.fixture(scope="module")
def kafka_python() -> None:
    try:
        import kafka  # noqa: F401
    except ImportError:
        missing("kafka-python", "the Python package kafka is not importable: install it "
                "with `pip install 'kafka-python>=3.0'` (the test extra)")


def test_kafka_python_murmur2_is_our_key_hash(kafka_python: None) -> None:
    """kafka-python 3.0's own murmur2 gives every key the hash our C and plain-Python forms
    give, and its published vectors' partitions."""
    from kafka.partitioner.default import murmur2

    from harness.core.client_hashes import kafka_partition

    ours = get_algorithm("kafka-murmur2").build(TEN).hash_keys(KEYS)
    assert ours.tolist() == [murmur2(key) for key in KEYS]
    assert kafka_partition(b"wu", 10) == 0
    assert kafka_partition(b"100:48069", 12) == 9


KAFKA_PEER = (sys.executable, str(ROOT / "peers" / "python" / "kafka_peer.py"))


@pytest.mark.parametrize("servers", [TEN, HUNDRED], ids=["10", "100"])
def test_kafka_peer_routes_like_kafka_murmur2(kafka_python: None,
                                              servers: list[Server]) -> None:
    """kafka-python's DefaultPartitioner, behind the process protocol, puts every key in
    the partition our kafka-murmur2 algorithm does."""
    spec = ForeignPeerSpec("kafka-python", command=KAFKA_PEER)
    routed = _peer_routes(spec, servers)
    assert np.array_equal(routed, get_algorithm("kafka-murmur2").build(servers).route(KEYS))


def test_kafka_peer_and_recipe_refuse_weights(kafka_python: None) -> None:
    """Partitions have no weights: the 1:2:4 fleet is refused by both, in one line."""
    with pytest.raises(HarnessError, match="refused BUILD: Kafka's partitions have no weights"):
        open_foreign_peer(ForeignPeerSpec("kafka-python", command=KAFKA_PEER), WEIGHTED)
    with pytest.raises(HarnessError, match="all of weight 1, since Kafka's partitioner"):
        get_algorithm("kafka-murmur2").build(WEIGHTED)
