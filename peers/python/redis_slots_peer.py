"""Redis Cluster's key slots as a process-protocol peer (standard library only): a live
redis-server 7.0 in cluster mode computes every key's slot, and the slots are shared among
the servers as `redis-cli --cluster create` shares them; ring-harness's `redis-slots`
algorithm routes the same.

    peers = [{ command = ["python3", "peers/python/redis_slots_peer.py"],
               name = "redis-cluster", routes_like = { algorithm = "redis-slots" } }]

The peer starts its own redis-server (cluster mode, on a Unix socket in a temporary
directory, no TCP port, nothing saved) and asks it `CLUSTER KEYSLOT` for every key of a
ROUTE, pipelined: the requests go out in batches and the answers are read back, so 100,000
keys take one round trip per batch. The slot of a key is redis-server's own answer. Which
server holds a slot is the split redis-cli 7.0 makes when it creates a cluster of the BUILD
servers as masters, no replicas (src/redis-cli.c, clusterManagerCommandCreate): masters
interleaved by host, then contiguous ranges ending at lround(cursor + 16384/N - 1), in
single precision; tests/live/test_clients_live.py checks that split against a live
`redis-cli --cluster create`. redis-server is killed when the peer quits, is killed (it is
in the peer's process group), or dies (PR_SET_PDEATHSIG).

BUILD's parameter string may name the server program: "redis-server=/path/to/redis-server"
(default: redis-server on PATH).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

from peer_protocol import CHANGE, MEMORY, TIME, serve

SLOTS = 16384
#: redis-cli's float32 split tiles the slots exactly up to this many masters
MAX_MASTERS = 4096
#: keys per pipelined batch: about 400 KB of requests, well inside redis' query buffer
BATCH = 10_000
STARTUP_S = 10.0
#: redis-servers started before giving up, each on another bus port
STARTUP_ATTEMPTS = 5


def free_port() -> int:
    """A TCP port on loopback that nobody holds now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def float32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def host_of(name: str) -> str:
    return name.rpartition(":")[0] if ":" in name else name


def slot_owners(names: list[str]) -> list[int]:
    """The server index of each of the 16,384 slots, as redis-cli 7.0 creates a cluster."""
    by_host: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        by_host.setdefault(host_of(name), []).append(index)
    masters: list[int] = []
    while len(masters) < len(names):
        for queue in by_host.values():
            if queue:
                masters.append(queue.pop(0))
    per_master = float32(SLOTS / float32(len(masters)))
    cursor, first, owners = 0.0, 0, [0] * SLOTS
    for i, server in enumerate(masters):
        last = int(float32(float32(cursor + per_master) - 1.0) + 0.5)  # lround, x >= 0
        if last > SLOTS or i == len(masters) - 1:
            last = SLOTS - 1
        last = max(last, first)
        owners[first:last + 1] = [server] * (last + 1 - first)
        first = last + 1
        cursor = float32(cursor + per_master)
    return owners


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG (1): redis-server is killed when this peer dies, however it dies.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


class Redis:
    """One redis-server in cluster mode on a Unix socket, and a connection to it."""

    def __init__(self, program: str) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="redis-slots-peer-")
        path = os.path.join(self.directory.name, "redis.sock")
        # Cluster mode also listens on a TCP bus port, by default the client port + 10000:
        # with no client port, 10000 for every instance, so a second peer running at once
        # failed to start (its first request: broken pipe). Each takes a free port of its
        # own on loopback, and tries another if it is taken before redis binds it.
        for attempt in range(STARTUP_ATTEMPTS):
            if os.path.exists(path):  # a failed attempt's
                os.unlink(path)
            self.process = subprocess.Popen(
                [program, "--port", "0", "--unixsocket", path, "--cluster-enabled", "yes",
                 "--bind", "127.0.0.1", "--cluster-port", str(free_port()),
                 "--cluster-config-file", os.path.join(self.directory.name, "nodes.conf"),
                 "--dir", self.directory.name, "--save", "", "--appendonly", "no"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
            self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            if self._connected(path):
                break
            self.connection.close()
            self.process.wait()
            if attempt == STARTUP_ATTEMPTS - 1:
                self.directory.cleanup()
                raise ValueError(f"{program} did not start in cluster mode")
        self.buffer = b""

    def _connected(self, path: str) -> bool:
        """Connected to the socket of a server that is still up once its bus port is bound."""
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                self.connection.connect(path)
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    if self.process.poll() is None:
                        self.process.kill()
                    return False
                time.sleep(0.02)
        # A PING answered: the bus port was bound (redis aborts before serving otherwise).
        try:
            self.connection.sendall(b"*1\r\n$4\r\nPING\r\n")
            return self.connection.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def keyslots(self, keys: list[bytes]) -> list[int]:
        """CLUSTER KEYSLOT of every key, pipelined in batches."""
        slots: list[int] = []
        for start in range(0, len(keys), BATCH):
            batch = keys[start:start + BATCH]
            self.connection.sendall(b"".join(
                b"*3\r\n$7\r\nCLUSTER\r\n$7\r\nKEYSLOT\r\n$%d\r\n%s\r\n" % (len(key), key)
                for key in batch))
            slots.extend(self._integers(len(batch)))
        return slots

    def _integers(self, count: int) -> list[int]:
        lines: list[bytes] = []
        while len(lines) < count:
            chunk = self.connection.recv(1 << 20)
            if not chunk:
                raise ValueError("redis-server closed the connection")
            *complete, self.buffer = (self.buffer + chunk).split(b"\r\n")
            lines.extend(complete)
        if len(lines) != count or any(line[:1] != b":" for line in lines):
            bad = next((line for line in lines if line[:1] != b":"), b"extra replies")
            raise ValueError(f"redis-server answered {bad[:200]!r}")
        return [int(line[1:]) for line in lines]

    def close(self) -> None:
        self.connection.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.directory.cleanup()


class Peer:
    def __init__(self) -> None:
        self.redis: Redis | None = None
        self.program = "redis-server"
        self.servers: list[tuple[str, float]] = []
        self.owners: list[int] = []

    def configure(self, params: str) -> None:
        program = "redis-server"
        if params:
            if not params.startswith("redis-server="):
                raise ValueError(f"params must be redis-server=PATH or empty (got {params!r})")
            program = params.removeprefix("redis-server=")
        if shutil.which(program) is None:
            raise ValueError(f"{program!r} is not an executable on PATH (Debian redis-server)")
        self.program = program

    def build(self) -> int:
        for name, weight in self.servers:
            if weight != 1:
                raise ValueError(f"Redis Cluster has no weights (server {name!r} has {weight:g})")
        if not 1 <= len(self.servers) <= MAX_MASTERS:
            raise ValueError(f"1 to {MAX_MASTERS} servers, where redis-cli's split of the "
                             f"slots holds (got {len(self.servers)})")
        self.owners = slot_owners([name for name, _ in self.servers])
        if self.redis is None:  # started once, at the first BUILD that holds
            self.redis = Redis(self.program)
        return SLOTS

    def route(self, keys: list[bytes]) -> list[int]:
        assert self.redis is not None
        owners = self.owners
        return [owners[slot] for slot in self.redis.keyslots(keys)]

    def memory(self) -> int:
        # Its list of 16,384 slot owners: an 8-byte slot each (the small ints are shared).
        return 8 * SLOTS

    def close(self) -> None:
        if self.redis is not None:
            self.redis.close()


if __name__ == "__main__":
    sys.exit(serve(Peer(), b"redis_slots_peer.py", TIME | MEMORY | CHANGE))
