"""A complete process-protocol peer in plain Python (standard library only): libketama's
continuum, routing exactly as ring-harness's `libketama` construction.

    peers = [{ command = ["python3", "peers/python/ketama_peer.py"],
               routes_like = { construction = "libketama" } }]

It is the second example of docs/guide/foreign-peers.md (the first is C): read stdin
frame by frame, answer each on stdout, exit on QUIT or at the end of stdin. Every field
is little-endian; a string is a u32 length and UTF-8 bytes. It speaks protocol version 2:
given the region's descriptor (RING_PEER_SHARED_FD), it takes shared batches too, reading
keys from the region and writing owners into it.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import mmap
import os
import struct
import sys
import time
from fractions import Fraction

LOOKUP, TIME, MEMORY, CHANGE, SHARED = 1, 2, 4, 8, 16
SHARED_FD = os.environ.get("RING_PEER_SHARED_FD", "")


class Request:
    """The fields of one request, taken in order."""

    def __init__(self, body: bytes) -> None:
        self.body, self.at = body, 1  # body[0] is the opcode

    def take(self, size: int) -> bytes:
        chunk = self.body[self.at:self.at + size]
        self.at += size
        return chunk

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def f64(self) -> float:
        return struct.unpack("<d", self.take(8))[0]

    def string(self) -> str:
        return self.take(self.u32()).decode()


class Continuum:
    """libketama: floor(share * 40 * N) MD5 digests of "name-i" per server, four
    little-endian 32-bit points per digest; of equal points the later server's is kept."""

    def __init__(self) -> None:
        self.servers: list[tuple[str, float]] = []
        self.points: list[int] = []
        self.owners: list[int] = []

    def build(self) -> int:
        total = sum(Fraction(weight) for _, weight in self.servers)
        owner_of: dict[int, int] = {}
        for index, (name, weight) in enumerate(self.servers):
            for i in range(int(Fraction(weight) * 40 * len(self.servers) // total)):
                digest = hashlib.md5(f"{name}-{i}".encode()).digest()
                for word in struct.unpack("<4I", digest):
                    owner_of[word] = index
        self.points = sorted(owner_of)
        self.owners = [owner_of[point] for point in self.points]
        return len(self.points)

    def owner(self, key_hash: int) -> int:
        at = bisect.bisect_left(self.points, key_hash)
        return self.owners[at if at < len(self.points) else 0]

    def route(self, keys: list[bytes]) -> list[int]:
        return [self.owner(struct.unpack("<I", hashlib.md5(key).digest()[:4])[0])
                for key in keys]


def keys_of(request: Request) -> list[bytes]:
    n = request.u32()
    offsets = struct.unpack(f"<{n + 1}I", request.take(4 * (n + 1)))
    blob = request.take(offsets[n])
    return [blob[offsets[i]:offsets[i + 1]] for i in range(n)]


class Region:
    """The shared region (protocol 2), mapped at the size SHARE gives; every part of a
    batch is checked to lie in it."""

    def __init__(self) -> None:
        self.map: mmap.mmap | None = None

    def share(self, size: int) -> None:
        if not SHARED_FD:
            raise ValueError("no shared region (RING_PEER_SHARED_FD is not set)")
        if not 0 < size <= os.fstat(int(SHARED_FD)).st_size:
            raise ValueError("SHARE of a size the region does not have")
        self.map = mmap.mmap(int(SHARED_FD), size)

    def part(self, at: int, size: int, align: int) -> mmap.mmap:
        """The mapping, once `size` bytes at `at` are checked to lie in it, aligned."""
        if self.map is None:
            raise ValueError("a shared batch before SHARE")
        if at % align or at + size > len(self.map):
            raise ValueError("a shared batch outside the region")
        return self.map

    def keys(self, request: Request) -> tuple[list[bytes], int]:
        """The keys of a ROUTE_SHARED payload, and where their owners go."""
        n, offsets_at, keys_at = request.u32(), request.u64(), request.u64()
        owners_at = request.u64()
        offsets = struct.unpack_from(f"<{n + 1}Q", self.part(offsets_at, 8 * (n + 1), 8),
                                     offsets_at)
        if any(a > b for a, b in itertools.pairwise(offsets)):
            raise ValueError("shared offsets that go backwards")
        if offsets[n] > len(self.part(keys_at, 0, 1)) - keys_at:
            raise ValueError("shared keys outside the region")
        blob = self.part(keys_at, offsets[n], 1)[keys_at:keys_at + offsets[n]]
        self.part(owners_at, 2 * n, 2)
        return [blob[offsets[i]:offsets[i + 1]] for i in range(n)], owners_at

    def answer(self, owners: list[int], owners_at: int) -> bytes:
        """Owners written into the region; the reply counts them."""
        struct.pack_into(f"<{len(owners)}H", self.part(owners_at, 2 * len(owners), 2),
                         owners_at, *owners)
        return struct.pack("<I", len(owners))


REGION = Region()


def owners_reply(owners: list[int]) -> bytes:
    return struct.pack(f"<I{len(owners)}H", len(owners), *owners)


def answer(ring: Continuum, request: Request) -> bytes:
    """The payload of the reply to one request (its status is 'K')."""
    opcode = request.body[:1]
    if opcode == b"H":
        name, version = b"ketama_peer.py", b"2"
        speaks = min(request.u32(), 2)  # the harness asks with the highest it speaks
        features = LOOKUP | TIME | MEMORY | CHANGE | (SHARED if speaks == 2 and SHARED_FD
                                                      else 0)
        return struct.pack("<III", speaks, features, len(name)) + name \
            + struct.pack("<I", len(version)) + version
    if opcode == b"S":
        REGION.share(request.u64())
        return b""
    if opcode == b"r":
        keys, owners_at = REGION.keys(request)
        return REGION.answer(ring.route(keys), owners_at)
    if opcode == b"l":
        n, hashes_at, owners_at = request.u32(), request.u64(), request.u64()
        hashes = struct.unpack_from(f"<{n}Q", REGION.part(hashes_at, 8 * n, 8), hashes_at)
        REGION.part(owners_at, 2 * n, 2)
        return REGION.answer([ring.owner(h & 0xFFFFFFFF) for h in hashes], owners_at)
    if opcode == b"B":
        ring.servers = [(request.string(), request.f64()) for _ in range(request.u32())]
        return struct.pack("<q", ring.build())
    if opcode == b"R":
        return owners_reply(ring.route(keys_of(request)))
    if opcode == b"L":
        n = request.u32()
        return owners_reply([ring.owner(h & 0xFFFFFFFF)
                             for h in struct.unpack(f"<{n}Q", request.take(8 * n))])
    if opcode in (b"T", b"t"):
        repeats = request.u32()
        keys = keys_of(request) if opcode == b"T" else REGION.keys(request)[0]
        times = []
        for _ in range(repeats):
            start = time.monotonic_ns()
            ring.route(keys)
            times.append((time.monotonic_ns() - start) / max(1, len(keys)))
        return struct.pack(f"<I{repeats}d", repeats, *times)
    if opcode == b"M":
        # Its lists of ints: 8 bytes a slot and 32 an int object, per list.
        return struct.pack("<q", 2 * len(ring.points) * (8 + 32))
    if opcode == b"A":
        ring.servers.append((request.string(), request.f64()))
        return struct.pack("<q", ring.build())
    if opcode == b"D":
        name = request.string()
        ring.servers = [server for server in ring.servers if server[0] != name]
        return struct.pack("<q", ring.build())
    raise ValueError(f"unsupported request {opcode!r}")


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    ring = Continuum()
    while len(header := stdin.read(4)) == 4:
        body = stdin.read(struct.unpack("<I", header)[0])
        if body[:1] == b"Q":
            return 0
        try:
            payload = b"K" + answer(ring, Request(body))
        except (ValueError, struct.error, UnicodeDecodeError) as exc:
            message = str(exc).encode()
            payload = b"E" + struct.pack("<I", len(message)) + message
        stdout.write(struct.pack("<I", len(payload)) + payload)
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
