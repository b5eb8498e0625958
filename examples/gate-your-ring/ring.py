"""The example's ring again, in plain Python, behind ring-harness's process protocol
(version 1: frames on stdin and stdout). Same recipe as ring.c: round(points * weight)
points per server named "<server>:<j>", placed at fnv1a-fmix32, lowest server index kept
on a shared position, a key owned by the first point at or after its hash.

Usage in a scenario: { command = ["python3", "ring.py"], routes_like = { construction =
"points", hash = "fnv1a-fmix32", points_per_weight = 100 } }. Build parameters:
"points=N" (default 100). It answers HELLO, BUILD, ROUTE, MEMORY, ADD, REMOVE and QUIT.
"""

from __future__ import annotations

import bisect
import struct
import sys

MEMORY, CHANGE = 4, 8


def fnv1a_fmix32(data: bytes) -> int:
    h = 2166136261
    for byte in data:
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


class Ring:
    def __init__(self) -> None:
        self.servers: list[tuple[str, float]] = []
        self.per_weight = 100
        self.positions: list[int] = []
        self.owners: list[int] = []

    def build(self) -> int:
        owner_at: dict[int, int] = {}
        for index, (name, weight) in enumerate(self.servers):
            for j in range(max(1, int(self.per_weight * weight + 0.5))):
                owner_at.setdefault(fnv1a_fmix32(f"{name}:{j}".encode()), index)
        self.positions = sorted(owner_at)
        self.owners = [owner_at[p] for p in self.positions]
        return len(self.positions)

    def route(self, keys: list[bytes]) -> list[int]:
        positions, owners, count = self.positions, self.owners, len(self.positions)
        found = []
        for key in keys:
            at = bisect.bisect_left(positions, fnv1a_fmix32(key))
            found.append(owners[at if at < count else 0])
        return found


class Request:
    def __init__(self, body: bytes) -> None:
        self.body, self.at = body, 1

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


def answer(ring: Ring, request: Request) -> bytes:
    opcode = request.body[:1]
    if opcode == b"H":
        name, version = b"ring.py", b"1"
        return (struct.pack("<III", 1, MEMORY | CHANGE, len(name)) + name
                + struct.pack("<I", len(version)) + version)
    if opcode == b"B":
        ring.servers = [(request.string(), request.f64()) for _ in range(request.u32())]
        params = request.string()
        if params.startswith("points="):
            ring.per_weight = int(params[len("points="):])
        return struct.pack("<q", ring.build())
    if opcode == b"R":
        n = request.u32()
        offsets = struct.unpack(f"<{n + 1}I", request.take(4 * (n + 1)))
        blob = request.take(offsets[n])
        owners = ring.route([blob[offsets[i]:offsets[i + 1]] for i in range(n)])
        return struct.pack(f"<I{n}H", n, *owners)
    if opcode == b"M":
        # two lists of ints: 8 bytes a slot, 32 an int object
        return struct.pack("<q", 2 * len(ring.positions) * (8 + 32))
    if opcode == b"A":
        ring.servers.append((request.string(), request.f64()))
        return struct.pack("<q", ring.build())
    if opcode == b"D":
        name = request.string()
        ring.servers = [s for s in ring.servers if s[0] != name]
        return struct.pack("<q", ring.build())
    raise ValueError(f"unsupported request {opcode!r}")


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    ring = Ring()
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
