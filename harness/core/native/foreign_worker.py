"""The worker a foreign library runs in: `python -m harness.core.native.foreign_worker LIB`.

A library is code we cannot vouch for: it may call exit() or abort(), crash, or never
return. Loaded here, in a process of its own (started under a peer's supervisor by
`recipes/peers/foreign/library_peer.py`), whatever it does ends this process only, and the
harness, waiting on a pipe with the peer's deadline, says what happened in one line.

The harness speaks to it in the frames of the process protocol (a u32 length, an opcode;
replies `K` or `E` and a string), with requests of its own, and hands batches over in the
shared region of protocol 2 (the memfd in RING_PEER_SHARED_FD), so a batch is never
copied. Each route is timed here, around the C call alone (wall and CPU ns), so that the
library's figures are its own, not the round trip's.

| request | payload | reply after `K` |
|---|---|---|
| `O` open | (none) | (none); `E` names what is wrong with the library |
| `B` build | JSON: names, weights, params | JSON: entries, nbytes, has_lookup |
| `S` share | u64 bytes | (none) |
| `r` route | u32 n, u64 offsets_at, u64 keys_at, u64 owners_at | u64 wall ns, u64 CPU ns |
| `l` lookup | u32 n, u64 hashes_at, u64 owners_at | u64 wall ns, u64 CPU ns |
| `M` nbytes | (none) | i64 |
| `Q` quit | (none) | no reply |

A worker of another module may answer more requests (`Worker.extra`): the memory probe's
(`metrics/foreign/memory_worker.py`) measures the library's allocations here, in the same
supervised process, so a library that misbehaves while it is measured is contained too.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
import time
from typing import Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.native.foreign import ForeignLibrary, ForeignRing

SHARED_FD_VARIABLE = "RING_PEER_SHARED_FD"


#: the harness's pipe, moved off fd 1 so that what the library prints cannot break a frame
_replies = sys.stdout.buffer


def _reply(payload: bytes, status: bytes = b"K") -> None:
    _replies.write(struct.pack("<I", 1 + len(payload)) + status + payload)
    _replies.flush()


def _refuse(message: str) -> None:
    data = message.encode(errors="replace")
    _reply(struct.pack("<I", len(data)) + data, b"E")


class Worker:
    def __init__(self, path: str) -> None:
        self.path = path
        self.library: ForeignLibrary | None = None
        self.ring: ForeignRing | None = None
        self.region: mmap.mmap | None = None
        #: what the last `B` asked for (names, weights, params)
        self.given: dict[str, Any] = {}

    def handle(self, opcode: bytes, payload: bytes) -> None:
        if opcode == b"O":
            self.library = ForeignLibrary.open(self.path)
            _reply(b"")
        elif opcode == b"B":
            assert self.library is not None
            self.given = json.loads(payload)
            self.ring = None  # the old ring freed before the new one is built
            self.ring = self.build()
            _reply(json.dumps({"entries": self.ring.entries, "nbytes": self.ring.nbytes,
                               "has_lookup": self.library.has_lookup}).encode())
        elif opcode == b"S":
            size = struct.unpack("<Q", payload)[0]
            self.region = mmap.mmap(int(os.environ[SHARED_FD_VARIABLE]), size)
            _reply(b"")
        elif opcode in (b"r", b"l"):
            _reply(self.route(opcode, payload))
        elif opcode == b"M":
            assert self.ring is not None
            _reply(struct.pack("<q", self.ring.nbytes))
        elif (reply := self.extra(opcode, payload)) is not None:
            _reply(reply)
        else:
            _refuse(f"unknown request {opcode!r}")

    def build(self) -> ForeignRing:
        """A ring of the library, as the last `B` asked."""
        assert self.library is not None
        given = self.given
        return self.library.build(given["names"], given["weights"], given["params"])

    def extra(self, opcode: bytes, payload: bytes) -> bytes | None:
        """The reply to a request this worker adds, None if it adds none."""
        return None

    def quit(self) -> None:
        """Before the worker exits at `Q` or the end of its pipe."""

    def route(self, opcode: bytes, payload: bytes) -> bytes:
        assert self.ring is not None and self.region is not None
        region = self.region
        if opcode == b"r":
            n, offsets_at, keys_at, owners_at = struct.unpack("<IQQQ", payload)
            offsets = np.frombuffer(region, np.uint64, n + 1, offsets_at)
            keys = memoryview(region)[keys_at:keys_at + int(offsets[-1])]
            owners = np.frombuffer(region, np.uint16, n, owners_at)
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            self.ring.route(keys, offsets, owners)
        else:
            n, hashes_at, owners_at = struct.unpack("<IQQ", payload)
            hashes = np.frombuffer(region, np.uint64, n, hashes_at)
            owners = np.frombuffer(region, np.uint16, n, owners_at)
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            self.ring.lookup(hashes, owners)
        return struct.pack("<QQ", time.perf_counter_ns() - wall, time.thread_time_ns() - cpu)


def main(path: str, worker_class: type[Worker] = Worker) -> int:
    global _replies
    _replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the library's printf goes to stderr, the tail the harness keeps
    worker, stdin = worker_class(path), sys.stdin.buffer
    try:
        while len(header := stdin.read(4)) == 4:
            body = stdin.read(struct.unpack("<I", header)[0])
            if body[:1] == b"Q":
                break
            try:
                worker.handle(body[:1], body[1:])
            except HarnessError as exc:
                _refuse(str(exc))
    finally:
        worker.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
