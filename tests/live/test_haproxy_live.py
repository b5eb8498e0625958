"""Our haproxy construction against a real HAProxy: every request lands where we predict.

One HAProxy process serves everything: a front that passes each request to the
backend named in its X-Ring header, three `hash-type consistent` backends
balancing on the X-Key header, and an echo frontend that all their servers
point at. Each backend names the server it chose in an X-Server response
header, so no other server process is needed.
"""

from __future__ import annotations

import http.client
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from harness.core.ring import reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.haproxy import HaproxyConstruction, sdbm_many
from tests.toolchains import require_program

REQUESTS = 3_000
START_TIMEOUT_S = 10.0
MASK32 = 0xFFFFFFFF
SDBM_MULTIPLIER = 65599  # sdbm's step: h * 65599 + byte


@dataclass(frozen=True)
class Backend:
    """A backend of the configuration and the construction that should predict it."""

    name: str
    servers: list[Server]
    params: dict[str, str]
    hash_type: str
    explicit_ids: bool

    @property
    def construction(self) -> HaproxyConstruction:
        construction = get_construction("haproxy", **self.params)
        assert isinstance(construction, HaproxyConstruction)
        return construction


BACKENDS = [
    # `hash-type consistent` alone: sdbm, then full_hash; ids 1, 2, ... in order.
    Backend("equal", [Server(f"equal{i}", 1) for i in range(5)], {}, "consistent", False),
    Backend("mixed", [Server(f"mixed{i}", w) for i, w in enumerate([1, 2, 5, 10])], {},
            "consistent", False),
    # sdbm without full_hash, ids written in the configuration, the weight bounds 0 and 256.
    Backend("named", [Server("srv12", 256), Server("srv3", 0), Server("srv7", 3),
                      Server("srv40", 1)],
            {"key_hash": "sdbm", "server_ids": "name"}, "consistent sdbm", True),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def haproxy_config(front_port: int, echo_port: int) -> str:
    backends = []
    for backend in BACKENDS:
        servers = "\n".join(
            f"    server {s.name} 127.0.0.1:{echo_port} weight {int(s.weight)}"
            + (f" id {s.name.removeprefix('srv')}" if backend.explicit_ids else "")
            for s in backend.servers
        )
        backends.append(f"""backend {backend.name}
    balance hdr(X-Key)
    hash-type {backend.hash_type}
    http-response set-header X-Server %[srv_name]
{servers}
""")
    return f"""global
    maxconn 64
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend front
    bind 127.0.0.1:{front_port}
    use_backend %[req.hdr(X-Ring)]
frontend echo
    bind 127.0.0.1:{echo_port}
    http-request return status 200 content-type text/plain string ok
""" + "\n".join(backends)


def wait_for_port(port: int, process: subprocess.Popen[bytes], output: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"haproxy exited with {process.returncode}: {output.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"haproxy did not listen on 127.0.0.1:{port} within {START_TIMEOUT_S} s")


@pytest.fixture(scope="module")
def front_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    binary = require_program("haproxy")
    tmp = tmp_path_factory.mktemp("haproxy")
    port, echo = free_port(), free_port()
    config = tmp / "haproxy.cfg"
    config.write_text(haproxy_config(port, echo))
    output = tmp / "output.log"
    with output.open("wb") as log:
        # -db: stay in the foreground, one process, nothing left behind once it is stopped.
        process = subprocess.Popen([binary, "-db", "-f", str(config)],
                                   stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, output)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def ask_haproxy(port: int, backend: str, keys: list[bytes]) -> list[str]:
    """The server HAProxy picks for each key, over one keep-alive connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        chosen = []
        for key in keys:
            connection.putrequest("GET", "/", skip_accept_encoding=True)
            connection.putheader("X-Ring", backend)
            connection.putheader("X-Key", key)
            connection.endheaders()
            response = connection.getresponse()
            response.read()
            assert response.status == 200, (key, response.status)
            chosen.append(str(response.getheader("X-Server")))
        return chosen
    finally:
        connection.close()


def predict(backend: Backend, keys: list[bytes]) -> list[str]:
    construction = backend.construction
    ring = construction.build_ring(backend.servers)
    owners = reference_lookup_many(ring, construction.key_hashes(keys))
    return [backend.servers[i].name for i in owners]


@pytest.mark.parametrize("backend", BACKENDS, ids=[b.name for b in BACKENDS])
def test_every_key_goes_where_we_predict(front_port: int, backend: Backend) -> None:
    """3,000 keys sent through HAProxy reach exactly the server our ring predicts."""
    # Scattered hex keys: plain sdbm (the "named" backend) maps "key-0".."key-2999" into
    # one narrow band of the ring, where they would all meet one server.
    keys = [f"{i * 2654435761 % 2**32:08x}".encode() for i in range(REQUESTS)]
    answered = ask_haproxy(front_port, backend.name, keys)
    predicted = predict(backend, keys)
    mismatches = [(k, p, a) for k, p, a in zip(keys, predicted, answered, strict=True) if p != a]
    assert mismatches == []
    # every server of positive weight was exercised, the one of weight 0 never
    assert set(answered) == {s.name for s in backend.servers if s.weight}


def test_key_bytes_count_as_unsigned(front_port: int) -> None:
    """UTF-8 keys (bytes above 127) go where sdbm over unsigned bytes sends them."""
    keys = [f"clé-{i}-ü".encode() for i in range(300)]
    backend = BACKENDS[1]
    assert ask_haproxy(front_port, backend.name, keys) == predict(backend, keys)


def sdbm_preimage(target: int) -> bytes:
    """A printable key whose (plain) sdbm is `target`: a numbered prefix found by search,
    then three letters or digits solved for. sdbm appends a byte as h * 65599 + byte, so
    the suffix adds 65599**2 c1 + 65599 c2 + c3 to 65599**3 times the prefix's hash."""
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                             dtype=np.uint8).astype(np.uint64)
    c1, c2, c3 = np.meshgrid(alphabet, alphabet, alphabet, indexing="ij")
    suffix = (c1 * (SDBM_MULTIPLIER**2) + c2 * SDBM_MULTIPLIER + c3).ravel() % 2**32
    order = np.argsort(suffix)
    sorted_suffix = suffix[order]
    scale = np.uint64(pow(SDBM_MULTIPLIER, 3, 2**32))
    batch = 100_000
    for start in range(0, 10_000_000, batch):
        prefixes = [f"tie-{n}-".encode() for n in range(start, start + batch)]
        needed = (np.uint64(target) + np.uint64(2**32)
                  - (sdbm_many(prefixes).astype(np.uint64) * scale) % 2**32) % 2**32
        at = np.minimum(np.searchsorted(sorted_suffix, needed), len(sorted_suffix) - 1)
        hits = np.flatnonzero(sorted_suffix[at] == needed)
        if len(hits):
            i = int(hits[0])
            letters = np.unravel_index(int(order[at[i]]), c1.shape)
            key = prefixes[i] + bytes(int(alphabet[j]) for j in letters)
            assert int(sdbm_many([key])[0]) == target
            return key
    raise AssertionError(f"no printable key found for sdbm {target}")


def test_a_hash_between_two_servers_goes_to_the_nearer_point(front_port: int) -> None:
    """On keys hashing exactly onto boundaries, HAProxy picks the nearer point, the one
    before on a tie: the last hash of each arc and the first of the next, at even and odd
    gaps, and the points themselves. A first-point-at-or-after rule would fail these."""
    backend = BACKENDS[2]  # sdbm without full_hash: a key can be built for any hash
    points, owners = backend.construction.points(backend.servers)
    wide = points.astype(np.int64)
    gaps = np.diff(wide)
    handover = np.flatnonzero(owners[:-1] != owners[1:])  # point i and i + 1: two servers
    cases: list[tuple[int, int]] = []  # (key hash, expected owner index)
    for parity in (0, 1):  # an even gap has an exact tie in its middle, an odd one has none
        for i in handover[gaps[handover] % 2 == parity][:4].tolist():
            middle = int(wide[i] + gaps[i] // 2)
            cases += [(middle, int(owners[i])), (middle + 1, int(owners[i + 1])),
                      (int(wide[i]), int(owners[i])), (int(wide[i + 1]), int(owners[i + 1]))]
    assert len(cases) == 32
    keys = [sdbm_preimage(h) for h, _ in cases]
    expected = [backend.servers[owner].name for _, owner in cases]
    assert predict(backend, keys) == expected
    assert ask_haproxy(front_port, backend.name, keys) == expected
