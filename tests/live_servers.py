"""Live servers for the client tests: redis-server, memcached and nutcracker started on
loopback, each on a free port, and always stopped (killed, then waited for) when the test
ends, passed or failed."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

STARTUP_S = 10.0


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` now (the kernel's choice; a rare race is retried by
    `started`)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def wait_for_port(host: str, port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), 0.2):
            return
        time.sleep(0.02)
    raise RuntimeError(f"{process.args!r} did not listen on {host}:{port}")


class Processes:
    """Processes started for one test; `stop` kills and reaps every one."""

    def __init__(self) -> None:
        self.running: list[subprocess.Popen[bytes]] = []

    def start(self, argv: Sequence[str], host: str, port: int,
              log: Path | None = None) -> subprocess.Popen[bytes]:
        output = log.open("wb") if log is not None else subprocess.DEVNULL
        process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=output,
                                   stderr=subprocess.STDOUT)
        self.running.append(process)
        wait_for_port(host, port, process)
        return process

    def stop(self) -> None:
        for process in self.running:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
        for process in self.running:
            process.wait()


@contextlib.contextmanager
def processes() -> Iterator[Processes]:
    started = Processes()
    try:
        yield started
    finally:
        started.stop()


def redis_node(started: Processes, directory: Path, host: str = "127.0.0.1") -> int:
    """One redis-server in cluster mode on a free port of `host` (its bus on port + 10000,
    which must be free too); returns the port."""
    for _ in range(20):
        port = free_port(host)
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind((host, port + 10000))
            except OSError:
                continue
        node = directory / f"{host}-{port}"
        node.mkdir()
        started.start(["redis-server", "--bind", host, "--port", str(port),
                       "--cluster-enabled", "yes", "--cluster-config-file",
                       str(node / "nodes.conf"), "--dir", str(node), "--save", "",
                       "--appendonly", "no"], host, port, node / "log")
        return port
    raise RuntimeError("no free port pair for a redis cluster node")


def memcached(started: Processes, host: str = "127.0.0.1", megabytes: int = 64) -> int:
    """One memcached on a free port of `host` (UDP off); returns the port."""
    port = free_port(host)
    # memcached refuses to run as root unless told which user to be.
    user = ["-u", "root"] if os.geteuid() == 0 else []
    started.start(["memcached", "-l", host, "-p", str(port), "-U", "0", "-m", str(megabytes),
                   "-t", "1", *user], host, port)
    return port
