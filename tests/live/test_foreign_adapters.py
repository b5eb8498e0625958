"""The Go, JavaScript and Java adapters shipped in peers/, run live: each routes 100,000 keys as
the recipe of ours it names, on fleets of equal weights and, where the library takes
weights, 1:2:4. Built offline from what .ci/install-peers.sh installs (peers/build.sh)."""

from __future__ import annotations

import math
import subprocess
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers.foreign import ForeignPeerSpec, open_foreign_peer
from harness.recipes.peers.foreign.claims import batch_for
from tests.paths import ROOT
from tests.toolchains import require_npm_hashring, require_program, require_tool

KEYS = [f"key-{i}".encode() for i in range(100_000)]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every adapter this machine can build (peers/build.sh skips the others; each test asks
    for its own toolchain)."""
    require_program("cc")
    out = tmp_path_factory.mktemp("peers")
    subprocess.run(["bash", str(ROOT / "peers" / "build.sh"), str(out)], check=True)
    yield out


def _ours(params: dict[str, Any], servers: list[Server]) -> np.ndarray:
    ring = get_algorithm("ring")
    return ring.from_params(servers, ring.parse_params(Fields("test", "r", params))).route(KEYS)


def _routes(spec: ForeignPeerSpec, servers: list[Server]) -> np.ndarray:
    peer = open_foreign_peer(spec, servers)
    try:
        return peer.route_many(KEYS)
    finally:
        peer.close()


GROUPCACHE = {"construction": "points", "hash": "crc32", "point_name": "{j}{server}"}


@pytest.mark.parametrize(("servers", "replicas"), [(3, 160), (100, 160), (100, 50)])
def test_groupcache_routes_like_crc32_points(built: Path, servers: int, replicas: int) -> None:
    require_tool("go")
    """groupcache's consistenthash is our points ring of CRC-32 over "{j}{server}" at its
    replica count; with no equal points at these sizes, every key agrees."""
    fleet = [Server(f"10.0.{i}.1:11211") for i in range(servers)]
    spec = ForeignPeerSpec("groupcache", command=(str(built / "groupcache_peer"),),
                           params=f"replicas={replicas}")
    ours = _ours({**GROUPCACHE, "points_per_weight": replicas}, fleet)
    assert np.array_equal(_routes(spec, fleet), ours)


def test_groupcache_refuses_weights(built: Path) -> None:
    require_tool("go")
    """groupcache has no weights: a weighted fleet is refused at BUILD, in one line."""
    spec = ForeignPeerSpec("groupcache", command=(str(built / "groupcache_peer"),))
    with pytest.raises(HarnessError, match="peer 'groupcache': refused BUILD: groupcache "
                                           "takes no weights"):
        open_foreign_peer(spec, [Server("a", 1), Server("b", 2)])


@pytest.fixture(scope="module")
def hashring_js() -> Path:
    return require_npm_hashring()


@pytest.mark.parametrize(("servers", "weights"), [(3, (1,)), (100, (1,)), (99, (1, 2, 4)),
                                                  (3, (1, 2, 4))])
def test_npm_hashring_routes_like_libketama(hashring_js: Path, servers: int,
                                            weights: tuple[int, ...]) -> None:
    """npm hashring 3.2.0 is libketama's continuum; where its double-precision share
    floors as the exact fraction does (all these fleets), every key agrees."""
    fleet = [Server(f"10.0.{i}.1:11211", weights[i % len(weights)]) for i in range(servers)]
    total = sum(s.weight for s in fleet)
    assert [math.floor(s.weight / total * 40 * servers) for s in fleet] == [
        int(Fraction(s.weight) * 40 * servers // total) for s in fleet]
    spec = ForeignPeerSpec("hashring-js", command=("node", str(ROOT / "peers" / "js" /
                                                               "hashring_peer.js")))
    assert np.array_equal(_routes(spec, fleet), _ours({"construction": "libketama"}, fleet))


@pytest.fixture(scope="module")
def spymemcached(built: Path) -> tuple[str, ...]:
    require_tool("java")
    jar = "/usr/share/java/spymemcached.jar"
    return ("java", "-cp", f"{built / 'java'}:{jar}", "SpymemcachedPeer")


@pytest.mark.parametrize(("servers", "weights", "port"), [
    (3, (1,), 11211), (100, (1,), 11211), (99, (1, 2, 4), 11212), (100, (1, 2, 4), 11211)])
def test_spymemcached_routes_like_libketama(spymemcached: tuple[str, ...], servers: int,
                                            weights: tuple[int, ...], port: int) -> None:
    """spymemcached 2.12.3's KetamaNodeLocator is libketama's continuum, the port kept in
    the point names (so, on port 11211, not libmemcached's ring): every key agrees."""
    fleet = [Server(f"10.0.{i}.1:{port}", weights[i % len(weights)]) for i in range(servers)]
    routed = _routes(ForeignPeerSpec("spymemcached", command=spymemcached), fleet)
    assert np.array_equal(routed, _ours({"construction": "libketama"}, fleet))


@pytest.mark.parametrize("servers", [1, 7, 100, 1000])
def test_guava_consistent_hash_routes_like_jump(built: Path, servers: int) -> None:
    """Guava 31.1's Hashing.consistentHash, given our jump recipe's key hashes (xxh64) by
    LOOKUP, puts every key in the bucket our integer jump does."""
    require_tool("java")
    jar = "/usr/share/java/guava.jar"
    spec = ForeignPeerSpec("guava", command=("java", "-cp", f"{built / 'java'}:{jar}",
                                             "GuavaJumpPeer"),
                           routes_like={"algorithm": "jump"}, input="hashes")
    fleet = [Server(f"s{i}") for i in range(servers)]
    peer = open_foreign_peer(spec, fleet)
    try:
        routed = peer.route_prepared(batch_for(peer, fleet, KEYS))
    finally:
        peer.close()
    jump = get_algorithm("jump").build(fleet)
    assert np.array_equal(routed, jump.route(KEYS))
