"""twemproxy (nutcracker 0.5.0, `distribution: ketama`) in front of live memcached 1.6
instances on loopback: 100,000 keys are set through the proxy, then each backend is asked
which of them it holds (pipelined meta gets), and every key's backend is the owner our
`twemproxy` construction gives, for fleets of 10 "host:port" servers of equal weight and
100 of weights 1:2:4, with the md5, fnv1a_64 and murmur key hashes and both point-name
rules; and the same through the process peer peers/python/twemproxy_peer.py, which starts
its own. Installed by .ci/install-peers.sh (Debian nutcracker, memcached); skipped locally
where missing, failed in CI."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers.foreign import ForeignPeerSpec, open_foreign_peer
from harness.recipes.peers.foreign.process_peer import ProcessPeer
from tests.live_servers import Processes, free_port, memcached, processes
from tests.paths import ROOT
from tests.toolchains import require_program

KEYS = [f"key-{i}".encode() for i in range(100_000)]
#: keys per pipelined batch: the replies of one batch fit the sockets' buffers many times
BATCH = 5_000


def _exchange(port: int, requests: list[bytes], end: bytes, replies_per_batch: bool) -> bytes:
    """Send the requests in batches, reading each batch's replies before the next: one line
    per request, or (quiet requests) up to the reply to a closing `mn`, `end`."""
    received = []
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        for start in range(0, len(requests), BATCH):
            batch = requests[start:start + BATCH]
            connection.sendall(b"".join(batch) + (b"" if replies_per_batch else b"mn\r\n"))
            data = b""
            while (data.count(b"\r\n") < len(batch)) if replies_per_batch else (
                    not data.endswith(end)):
                chunk = connection.recv(1 << 20)
                assert chunk, "connection closed"
                data += chunk
            received.append(data)
    return b"".join(received)


def _set_through(proxy: int) -> None:
    replies = _exchange(proxy, [b"set %s 0 0 1\r\nx\r\n" % key for key in KEYS], b"", True)
    assert replies == b"STORED\r\n" * len(KEYS)


def _held(backend: int) -> set[bytes]:
    """The keys a memcached holds: `mg <key> k q` answers only hits, with the key; `mn`
    ends each batch."""
    replies = _exchange(backend, [b"mg %s k q\r\n" % key for key in KEYS], b"MN\r\n", False)
    return {line.split(b" k", 1)[1] for line in replies.split(b"\r\n")
            if line.startswith(b"HD")}


def _proxy(started: Processes, tmp_path: Path, backends: list[int], servers: list[Server],
           hash_name: str, names: str) -> int:
    lines = []
    for port, server in zip(backends, servers, strict=True):
        line = f"127.0.0.1:{port}:{int(server.weight)}"
        lines.append(f"   - {line} {server.name}" if names == "given" else f"   - {line}")
    listen = free_port()
    config = tmp_path / "nutcracker.yml"
    config.write_text("pool:\n"
                      f"  listen: 127.0.0.1:{listen}\n"
                      f"  hash: {hash_name}\n"
                      "  distribution: ketama\n"
                      "  timeout: 10000\n"
                      "  auto_eject_hosts: false\n"
                      "  servers:\n" + "\n".join(lines) + "\n")
    started.start(["nutcracker", "-c", str(config), "-s", str(free_port()), "-a", "127.0.0.1",
                   "-o", str(tmp_path / "nutcracker.log")], "127.0.0.1", listen)
    return listen


def _ours(servers: list[Server], hash_name: str, names: str) -> np.ndarray:
    ring = get_algorithm("ring")
    params = ring.parse_params(Fields("test", "r", {"construction": "twemproxy",
                                                    "key_hash": hash_name, "names": names}))
    return ring.from_params(servers, params).route(KEYS)


@pytest.mark.parametrize(("count", "weights", "hash_name", "names"), [
    (10, (1,), "md5", "address"),
    (10, (1,), "fnv1a_64", "given"),
    (10, (1,), "murmur", "address"),
    (100, (1, 2, 4), "md5", "given"),
    (100, (1, 2, 4), "fnv1a_64", "given"),
])
def test_nutcracker_routes_like_our_twemproxy(tmp_path: Path, count: int,
                                              weights: tuple[int, ...], hash_name: str,
                                              names: str) -> None:
    """Every one of 100,000 keys set through a live nutcracker lands on the memcached our
    twemproxy construction names (agreement 1.000000); the processes are always stopped."""
    require_program("nutcracker")
    require_program("memcached")
    with processes() as started:
        backends = [memcached(started, megabytes=16) for _ in range(count)]
        if names == "given":
            servers = [Server(f"10.0.{i // 250}.{i % 250 + 1}:11211", weights[i % len(weights)])
                       for i in range(count)]
        else:
            servers = [Server(f"127.0.0.1:{port}", weights[i % len(weights)])
                       for i, port in enumerate(backends)]
        _set_through(_proxy(started, tmp_path, backends, servers, hash_name, names))
        owner = {}
        for index, port in enumerate(backends):
            for key in _held(port):
                assert key not in owner, key
                owner[key] = index
    assert len(owner) == len(KEYS)
    live = np.array([owner[key] for key in KEYS], dtype=np.uint16)
    assert np.array_equal(live, _ours(servers, hash_name, names))


TWEMPROXY_PEER = ("python3", str(ROOT / "peers" / "python" /
                                 "twemproxy_peer.py"))


@pytest.mark.parametrize(("count", "weights", "hash_name"), [
    (10, (1,), "fnv1a_64"), (100, (1, 2, 4), "md5"), (100, (1, 2, 4), "murmur")])
def test_twemproxy_peer_routes_like_our_twemproxy(count: int, weights: tuple[int, ...],
                                                  hash_name: str) -> None:
    """The process peer (nutcracker and a memcached per server, started by the peer) routes
    every key as our twemproxy construction with names = given, then again after one server
    is added and one removed; it leaves no memcached or nutcracker behind."""
    require_program("nutcracker")
    require_program("memcached")
    servers = [Server(f"10.0.{i // 250}.{i % 250 + 1}:11211", weights[i % len(weights)])
               for i in range(count)]
    peer = open_foreign_peer(ForeignPeerSpec("twemproxy", command=TWEMPROXY_PEER,
                                             params=f"hash={hash_name}"), servers)
    assert isinstance(peer, ProcessPeer)
    try:
        assert np.array_equal(peer.route_many(KEYS), _ours(servers, hash_name, "given"))
        added = Server("10.9.9.9:11211", weights[-1])
        peer.add(added.name, added.weight)
        assert np.array_equal(peer.route_many(KEYS),
                              _ours([*servers, added], hash_name, "given"))
        peer.remove(servers[3].name)
        rest = [s for s in (*servers, added) if s.name != servers[3].name]
        assert np.array_equal(peer.route_many(KEYS), _ours(rest, hash_name, "given"))
    finally:
        peer.close()
    assert subprocess.run(["pgrep", "-f", "twemproxy-peer-"], capture_output=True,
                          check=False).stdout == b""


def test_twemproxy_peer_refusals_are_one_line() -> None:
    """A bad hash, a fractional weight and a key memcached cannot hold are refused in one
    line naming the peer."""
    require_program("nutcracker")
    require_program("memcached")
    spec = ForeignPeerSpec("twemproxy", command=TWEMPROXY_PEER, params="hash=crc16")
    with pytest.raises(HarnessError, match="peer 'twemproxy': refused BUILD: params must be "
                                           "hash=fnv1a_64, hash=md5 or hash=murmur"):
        open_foreign_peer(spec, [Server("a:1")])
    spec = ForeignPeerSpec("twemproxy", command=TWEMPROXY_PEER)
    with pytest.raises(HarnessError, match="integer weights from 1"):
        open_foreign_peer(spec, [Server("a:1", 1.5)])
    peer = open_foreign_peer(spec, [Server("a:1"), Server("b:1")])
    try:
        with pytest.raises(HarnessError, match="is not a memcached key"):
            peer.route_many([b"has space"])
    finally:
        peer.close()
