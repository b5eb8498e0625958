"""Kafka's default partitioner as a process-protocol peer: kafka-python 3.0's own
`DefaultPartitioner` chooses the partition of every key, the BUILD servers being the
partitions 0..N-1 of one topic; ring-harness's `kafka-murmur2` algorithm routes the same.

    peers = [{ command = [".venv/bin/python", "peers/python/kafka_peer.py"],
               name = "kafka-python", routes_like = { algorithm = "kafka-murmur2" } }]

It needs kafka-python importable by the interpreter that runs it (the `test` extra installs
it in the project's virtual environment). No broker is contacted: the partitioner is given
the topic's partitions through a cluster-metadata stand-in with the three methods it reads.
Partitions have no weights: a weighted BUILD is refused.
"""

from __future__ import annotations

import struct
import sys
import time

from kafka.partitioner.default import DefaultPartitioner

TIME, MEMORY, CHANGE = 2, 4, 8
TOPIC = "ring-harness"


class Partitions:
    """What DefaultPartitioner.partition reads of a cluster's metadata: one topic's
    partitions, all available."""

    def __init__(self, count: int) -> None:
        self.ids = set(range(count))

    def topics(self) -> set[str]:
        return {TOPIC}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return self.ids

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return self.ids


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


class Peer:
    def __init__(self) -> None:
        self.partitioner = DefaultPartitioner()
        self.servers: list[tuple[str, float]] = []
        self.cluster = Partitions(0)

    def build(self) -> int:
        for name, weight in self.servers:
            if weight != 1:
                raise ValueError(f"Kafka's partitions have no weights (server {name!r} has "
                                 f"{weight:g})")
        if not self.servers:
            raise ValueError("a topic needs one partition at least")
        self.cluster = Partitions(len(self.servers))
        return -1

    def route(self, keys: list[bytes]) -> list[int]:
        partition, cluster = self.partitioner.partition, self.cluster
        return [partition(TOPIC, key, key, None, None, cluster) for key in keys]


def keys_of(request: Request) -> list[bytes]:
    n = request.u32()
    offsets = struct.unpack(f"<{n + 1}I", request.take(4 * (n + 1)))
    blob = request.take(offsets[n])
    return [blob[offsets[i]:offsets[i + 1]] for i in range(n)]


def owners_reply(owners: list[int]) -> bytes:
    return struct.pack(f"<I{len(owners)}H", len(owners), *owners)


def answer(peer: Peer, request: Request) -> bytes:
    """The payload of the reply to one request (its status is 'K')."""
    opcode = request.body[:1]
    if opcode == b"H":
        name, version = b"kafka_peer.py", b"1"
        return struct.pack("<III", request.u32(), TIME | MEMORY | CHANGE,
                           len(name)) + name + struct.pack("<I", len(version)) + version
    if opcode == b"B":
        peer.servers = [(request.string(), request.f64()) for _ in range(request.u32())]
        if params := request.string():
            raise ValueError(f"takes no parameters (got {params!r})")
        return struct.pack("<q", peer.build())
    if opcode == b"R":
        return owners_reply(peer.route(keys_of(request)))
    if opcode == b"T":
        repeats = request.u32()
        keys = keys_of(request)
        times = []
        for _ in range(repeats):
            start = time.monotonic_ns()
            peer.route(keys)
            times.append((time.monotonic_ns() - start) / max(1, len(keys)))
        return struct.pack(f"<I{repeats}d", repeats, *times)
    if opcode == b"M":
        # No structure: the partition is computed from the key and the count alone.
        return struct.pack("<q", 0)
    if opcode == b"A":
        peer.servers.append((request.string(), request.f64()))
        return struct.pack("<q", peer.build())
    if opcode == b"D":
        name = request.string()
        peer.servers = [server for server in peer.servers if server[0] != name]
        return struct.pack("<q", peer.build())
    raise ValueError(f"unsupported request {opcode!r}")


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    peer = Peer()
    while len(header := stdin.read(4)) == 4:
        body = stdin.read(struct.unpack("<I", header)[0])
        if body[:1] == b"Q":
            return 0
        try:
            payload = b"K" + answer(peer, Request(body))
        except (ValueError, struct.error, UnicodeDecodeError) as exc:
            message = str(exc).encode()
            payload = b"E" + struct.pack("<I", len(message)) + message
        stdout.write(struct.pack("<I", len(payload)) + payload)
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
