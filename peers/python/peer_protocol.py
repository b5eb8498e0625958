"""The process protocol's serving side, shared by the Python peers that wrap a real client
(kafka_peer.py, redis_slots_peer.py, twemproxy_peer.py): frames read from stdin and
answered on stdout, the request fields taken in order, and the requests every such peer
answers alike. Standard library only; peers/python/ketama_peer.py stays a complete example
on its own (docs/guide/foreign-peers.md).

A served peer has `servers` (a list of (name, weight), set by BUILD, ADD and REMOVE) and
`configure(params)` (BUILD's parameter string), `build()` (points, or -1), `route(keys)`
(owners), `memory()` (bytes, or -1) and `close()`; a ValueError or OSError it raises is
answered as an error reply in one line.
"""

from __future__ import annotations

import struct
import sys
import time
from typing import Protocol

TIME, MEMORY, CHANGE = 2, 4, 8


class Served(Protocol):
    servers: list[tuple[str, float]]

    def configure(self, params: str) -> None: ...
    def build(self) -> int: ...
    def route(self, keys: list[bytes]) -> list[int]: ...
    def memory(self) -> int: ...
    def close(self) -> None: ...


class Request:
    """The fields of one request, taken in order."""

    def __init__(self, body: bytes) -> None:
        self.body, self.at = body, 1  # body[0] is the opcode

    def take(self, size: int) -> bytes:
        chunk = self.body[self.at:self.at + size]
        self.at += size
        return chunk

    def u32(self) -> int:
        return int(struct.unpack("<I", self.take(4))[0])

    def f64(self) -> float:
        return float(struct.unpack("<d", self.take(8))[0])

    def string(self) -> str:
        return self.take(self.u32()).decode()


def keys_of(request: Request) -> list[bytes]:
    n = request.u32()
    offsets = struct.unpack(f"<{n + 1}I", request.take(4 * (n + 1)))
    blob = request.take(offsets[n])
    return [blob[offsets[i]:offsets[i + 1]] for i in range(n)]


def answer(peer: Served, request: Request, name: bytes, features: int) -> bytes:
    """The payload of the reply to one request (its status is 'K')."""
    opcode = request.body[:1]
    if opcode == b"H":
        version = b"1"
        return struct.pack("<III", request.u32(), features, len(name)) + name + struct.pack(
            "<I", len(version)) + version
    if opcode == b"B":
        peer.servers = [(request.string(), request.f64()) for _ in range(request.u32())]
        peer.configure(request.string())
        return struct.pack("<q", peer.build())
    if opcode == b"R":
        owners = peer.route(keys_of(request))
        return struct.pack(f"<I{len(owners)}H", len(owners), *owners)
    if opcode == b"T" and features & TIME:
        repeats = request.u32()
        keys = keys_of(request)
        times = []
        for _ in range(repeats):
            start = time.monotonic_ns()
            peer.route(keys)
            times.append((time.monotonic_ns() - start) / max(1, len(keys)))
        return struct.pack(f"<I{repeats}d", repeats, *times)
    if opcode == b"M" and features & MEMORY:
        return struct.pack("<q", peer.memory())
    if opcode == b"A" and features & CHANGE:
        peer.servers.append((request.string(), request.f64()))
        return struct.pack("<q", peer.build())
    if opcode == b"D" and features & CHANGE:
        gone = request.string()
        peer.servers = [server for server in peer.servers if server[0] != gone]
        return struct.pack("<q", peer.build())
    raise ValueError(f"unsupported request {opcode!r}")


def serve(peer: Served, name: bytes, features: int) -> int:
    """Answer requests until QUIT or the end of stdin, then close the peer."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    try:
        while len(header := stdin.read(4)) == 4:
            body = stdin.read(struct.unpack("<I", header)[0])
            if body[:1] == b"Q":
                return 0
            try:
                payload = b"K" + answer(peer, Request(body), name, features)
            except (ValueError, OSError, struct.error, UnicodeDecodeError) as exc:
                message = str(exc).encode()
                payload = b"E" + struct.pack("<I", len(message)) + message
            stdout.write(struct.pack("<I", len(payload)) + payload)
            stdout.flush()
        return 0
    finally:
        peer.close()
