"""twemproxy (nutcracker 0.5.0) as a process-protocol peer (standard library only): a live
nutcracker in front of one live memcached per server, all on loopback; each key's owner is
the memcached it lands on. ring-harness's `twemproxy` construction routes the same.

    peers = [{ command = ["python3", "peers/python/twemproxy_peer.py"], name = "twemproxy",
               params = "hash=fnv1a_64",
               routes_like = { construction = "twemproxy", key_hash = "fnv1a_64",
                               names = "given" } }]

BUILD starts a memcached per server (on a free port of 127.0.0.1) and a nutcracker whose
pool lists them as "127.0.0.1:<port>:<weight> <server name>", `distribution: ketama` and
the `hash` the parameter string names ("hash=fnv1a_64", the default, "hash=md5" or
"hash=murmur"): the scenario's server names are twemproxy's server names, so its points
are MD5 of "<server name>-<i>" (`names = "given"`). ROUTE empties every memcached
(`flush_all`), sets every key through the proxy (pipelined `set`), then asks each
memcached which keys it holds (`lru_crawler metadump all`: one request per server). ADD and REMOVE
start or stop a memcached and restart nutcracker with the new pool. Keys must be valid
memcached keys (1 to 250 bytes, no spaces or control characters): others are refused.
Everything it starts is in its process group and dies with it (PR_SET_PDEATHSIG).

Programs: "nutcracker" and "memcached" on PATH (Debian nutcracker and memcached).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable

from peer_protocol import CHANGE, serve

HASHES = ("fnv1a_64", "md5", "murmur")
#: keys per pipelined batch
BATCH = 5_000
STARTUP_S = 10.0


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG (1): a child is killed when this peer dies, however it dies.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(argv: list[str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    deadline = time.monotonic() + STARTUP_S
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return process
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            raise ValueError(f"{argv[0]} did not listen on 127.0.0.1:{port}")
        time.sleep(0.02)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()


def _read_until(connection: socket.socket, who: str,
                done: Callable[[bytes], bool]) -> bytes:
    """What `connection` sends until `done` holds of all of it (`who` names the server in
    the error if it closes the connection first)."""
    data = b""
    while not done(data):
        chunk = connection.recv(1 << 20)
        if not chunk:
            raise ValueError(f"{who} closed the connection")
        data += chunk
    return data


def _has_lines(count: int, data: bytes) -> bool:
    return data.count(b"\r\n") >= count


def exchange(port: int, requests: list[bytes]) -> bytes:
    """Requests in batches, each batch's replies (one line per request) read before the
    next."""
    replies = []
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        for at in range(0, len(requests), BATCH):
            batch = requests[at:at + BATCH]
            connection.sendall(b"".join(batch))
            replies.append(_read_until(connection, f"127.0.0.1:{port}",
                                       functools.partial(_has_lines, len(batch))))
    return b"".join(replies)


def held_keys(port: int) -> list[bytes]:
    """Every key a memcached holds, from one `lru_crawler metadump all` (lines
    "key=<url-encoded key> exp=...", then END): one request per server, whatever the
    number of keys."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(b"lru_crawler metadump all\r\n")
        data = _read_until(connection, f"memcached on port {port}",
                           lambda data: data.endswith(b"END\r\n"))
    if data.startswith(b"ERROR") or data.startswith(b"BUSY"):
        raise ValueError(f"memcached on port {port} answered {data[:200]!r}")
    return [urllib.parse.unquote_to_bytes(line.split(b" ", 1)[0][4:].decode())
            for line in data[:-len(b"END\r\n")].split(b"\n") if line.startswith(b"key=")]


def held_among(port: int, keys: list[bytes]) -> list[bytes]:
    """Those of `keys` a memcached holds: `mg <key> k q` answers a hit with its key and a
    miss not at all; `mn` ends the batch with "MN"."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(b"".join(b"mg %s k q\r\n" % key for key in keys) + b"mn\r\n")
        data = _read_until(connection, f"memcached on port {port}",
                           lambda data: data.endswith(b"MN\r\n"))
    return [line.split(b" k", 1)[1].split(b" ", 1)[0] for line in data.split(b"\r\n")
            if line.startswith(b"HD ")]


class Fleet:
    """A memcached per server and a nutcracker in front of them."""

    def __init__(self) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="twemproxy-peer-")
        self.hash = HASHES[0]
        self.servers: list[tuple[str, float]] = []
        self.backends: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
        self.proxy: tuple[int, subprocess.Popen[bytes]] | None = None

    def build(self) -> int:
        for name, weight in self.servers:
            if weight < 1 or weight != int(weight):
                raise ValueError(f"server {name!r}: twemproxy takes integer weights from 1 "
                                 f"(got {weight:g})")
            if not name or any(c in name for c in " \t\r\n#"):
                raise ValueError(f"server {name!r}: a twemproxy server name has no spaces")
        names = {name for name, _ in self.servers}
        for gone in set(self.backends) - names:
            stop(self.backends.pop(gone)[1])
        user = ["-u", "root"] if os.geteuid() == 0 else []
        for name, _ in self.servers:
            if name not in self.backends:
                port = free_port()
                self.backends[name] = (port, start(
                    # A flat LRU (no maintainer thread moving items between segments
                    # while the crawler walks them: metadump missed a key so, under load).
                    ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "64",
                     "-t", "1", "-o", "no_lru_maintainer", *user], port))
        if self.proxy is not None:
            stop(self.proxy[1])
            self.proxy = None
        listen = free_port()
        config = os.path.join(self.directory.name, "nutcracker.yml")
        with open(config, "w", encoding="utf-8") as out:
            out.write(f"pool:\n  listen: 127.0.0.1:{listen}\n  hash: {self.hash}\n"
                      "  distribution: ketama\n  timeout: 60000\n  auto_eject_hosts: false\n"
                      "  servers:\n")
            for name, weight in self.servers:
                out.write(f"   - 127.0.0.1:{self.backends[name][0]}:{int(weight)} {name}\n")
        self.proxy = (listen, start(
            ["nutcracker", "-c", config, "-s", str(free_port()), "-a", "127.0.0.1",
             "-o", os.path.join(self.directory.name, "nutcracker.log")], listen))
        return -1

    def route(self, keys: list[bytes]) -> list[int]:
        assert self.proxy is not None
        for key in keys:
            if not 0 < len(key) <= 250 or any(b <= 32 or b == 127 for b in key):
                raise ValueError(f"key {key[:60]!r} is not a memcached key (1 to 250 bytes, "
                                 "no spaces or control characters)")
        for port, _ in self.backends.values():
            if exchange(port, [b"flush_all\r\n"]) != b"OK\r\n":
                raise ValueError(f"memcached on port {port} did not flush")
        stored = exchange(self.proxy[0], [b"set %s 0 0 1\r\nx\r\n" % key for key in keys])
        if stored != b"STORED\r\n" * len(keys):
            raise ValueError(f"nutcracker answered {stored[:200]!r}")
        owner: dict[bytes, int] = {}
        for index, (name, _) in enumerate(self.servers):
            for key in held_keys(self.backends[name][0]):
                if key in owner:
                    raise ValueError(f"key {key[:60]!r} is on two memcached")
                owner[key] = index
        missing = [key for key in set(keys) if key not in owner]
        for index, (name, _) in enumerate(self.servers):
            if missing:  # what the crawl did not see, asked of each server (mg: hits only)
                for key in held_among(self.backends[name][0], missing):
                    owner.setdefault(key, index)
        if len(owner) != len(set(keys)):
            raise ValueError(f"{len(set(keys)) - len(owner)} keys set through nutcracker "
                             "were found on no memcached")
        return [owner[key] for key in keys]

    def configure(self, params: str) -> None:
        self.hash = params.removeprefix("hash=") if params else HASHES[0]
        if self.hash not in HASHES or (params and not params.startswith("hash=")):
            raise ValueError(f"params must be hash=fnv1a_64, hash=md5 or hash=murmur "
                             f"(got {params!r})")

    def memory(self) -> int:
        return -1  # not asked: MEMORY is not among its features

    def close(self) -> None:
        if self.proxy is not None:
            stop(self.proxy[1])
        for _, process in self.backends.values():
            stop(process)
        self.directory.cleanup()


if __name__ == "__main__":
    # ADD and REMOVE: the pool changes and nutcracker is restarted.
    sys.exit(serve(Fleet(), b"twemproxy_peer.py", CHANGE))
