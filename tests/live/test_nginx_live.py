"""Our nginx construction against a real nginx: every request lands where we predict."""

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

from harness.core.ring import Ring, reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions import get_construction
from tests.toolchains import require_program

REQUESTS = 3_000
START_TIMEOUT_S = 10.0
# Loopback ports whose nginx points collide (found by a birthday search over
# "127.0.0.1:<port>"); the first free pair joins the upstream to check which
# server nginx keeps on a shared point.
COLLIDING_PORTS = [(40451, 40457), (40168, 40545), (40577, 40647), (40489, 40875)]
WEIGHTS = [1, 3, 2, 1, 2]  # the colliding pair takes the first and the last weight


@dataclass(frozen=True)
class LiveNginx:
    """A running nginx: the front port, the upstream's servers in config order."""

    front_port: int
    servers: list[Server]
    collision: bool


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def nginx_config(tmp: Path, front_port: int, servers: list[Server]) -> str:
    upstream = "\n".join(f"        server {s.name} weight={int(s.weight)};" for s in servers)
    backends = "\n".join(
        f'    server {{ listen {s.name}; return 200 "{s.name.rsplit(":", 1)[1]}"; }}'
        for s in servers
    )
    temp_paths = "\n".join(
        f"    {kind}_temp_path {tmp / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # master_process off: one process, no worker user to switch to, nothing left behind.
    return f"""daemon off;
master_process off;
pid {tmp / "nginx.pid"};
error_log {tmp / "error.log"} warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
{temp_paths}
    upstream ring {{
        hash $arg_key consistent;
{upstream}
    }}
    server {{
        listen 127.0.0.1:{front_port};
        location / {{ proxy_pass http://ring; }}
    }}
{backends}
}}
"""


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = (log.parent / "output.log").read_text()
            pytest.fail(f"nginx exited with {process.returncode}: {output}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"nginx did not listen on 127.0.0.1:{port} within {START_TIMEOUT_S} s")


@pytest.fixture(scope="module")
def live_nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveNginx]:
    binary = require_program("nginx")
    tmp = tmp_path_factory.mktemp("nginx")
    pair = next((p for p in COLLIDING_PORTS if all(map(port_is_free, p))), None)
    others = [free_port() for _ in range(len(WEIGHTS) - (2 if pair else 0))]
    ports = [pair[0], *others, pair[1]] if pair else others
    servers = [Server(f"127.0.0.1:{port}", w) for port, w in zip(ports, WEIGHTS, strict=True)]
    front_port = free_port()
    config = tmp / "nginx.conf"
    config.write_text(nginx_config(tmp, front_port, servers))
    log = tmp / "error.log"
    with (tmp / "output.log").open("wb") as output:
        process = subprocess.Popen(
            [binary, "-p", str(tmp), "-e", str(log), "-c", str(config)],
            stdout=output, stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(front_port, process, log)
        yield LiveNginx(front_port, servers, collision=pair is not None)
    finally:
        process.terminate()
        process.wait(timeout=10)


def ask_nginx(front_port: int, keys: list[str]) -> list[int]:
    """The backend port nginx routes each key to, over one keep-alive connection."""
    connection = http.client.HTTPConnection("127.0.0.1", front_port, timeout=5)
    try:
        ports = []
        for key in keys:
            connection.request("GET", f"/?key={key}")
            response = connection.getresponse()
            assert response.status == 200
            ports.append(int(response.read()))
        return ports
    finally:
        connection.close()


def predict(ring: Ring, servers: list[Server], keys: list[str]) -> list[int]:
    hashes = get_construction("nginx").key_hashes([k.encode() for k in keys])
    return [int(servers[i].name.rsplit(":", 1)[1]) for i in reference_lookup_many(ring, hashes)]


def test_every_key_goes_where_we_predict(live_nginx: LiveNginx) -> None:
    """3,000 keys sent through nginx reach exactly the backend our ring predicts."""
    ring = get_construction("nginx").build_ring(live_nginx.servers)
    keys = [f"key-{i}" for i in range(REQUESTS)]
    predicted = predict(ring, live_nginx.servers, keys)
    answered = ask_nginx(live_nginx.front_port, keys)
    mismatches = [(k, p, a) for k, p, a in zip(keys, predicted, answered, strict=True) if p != a]
    assert mismatches == []
    assert len(set(answered)) == len(live_nginx.servers)  # every backend was exercised


def test_shared_point_goes_to_the_server_listed_first(live_nginx: LiveNginx) -> None:
    """Keys routed to a point two servers share reach the one listed first, in nginx as in ours."""
    if not live_nginx.collision:
        pytest.skip(f"none of the colliding port pairs {COLLIDING_PORTS} was free")
    ring = get_construction("nginx").build_ring(live_nginx.servers)
    first, last = live_nginx.servers[0], live_nginx.servers[-1]
    shared = np.intersect1d(
        get_construction("nginx").build_ring([first]).positions,
        get_construction("nginx").build_ring([last]).positions,
    )
    assert ring.collisions == len(shared) >= 1
    at = int(np.searchsorted(ring.positions, shared[0]))
    assert ring.owners[at] == 0
    lower = int(ring.positions[at - 1]) if at else -1
    hashes = get_construction("nginx").key_hashes([f"arc-{i}".encode() for i in range(50_000)])
    keys = [f"arc-{i}" for i in np.flatnonzero((hashes > lower) & (hashes <= shared[0]))[:20]]
    assert keys, "no test key falls on the shared point's arc"
    port = int(first.name.rsplit(":", 1)[1])
    assert ask_nginx(live_nginx.front_port, keys) == predict(ring, live_nginx.servers, keys)
    assert predict(ring, live_nginx.servers, keys) == [port] * len(keys)
