"""A tiny process-protocol peer that misbehaves on purpose: `python fake_peer.py MODE`.

Each mode breaks the protocol one way, at one request, so that tests/unit/test_foreign_faults.py
can check the harness's one-line failure for it. Every mode answers HELLO and BUILD
correctly (unless the mode is about them), and routes every key to server 0 otherwise.
If FAKE_PEER_PIDS names a file, the peer (and any child it starts) appends its pid there.
The `shared-*` modes speak protocol version 2 with shared batches (the region's descriptor
in RING_PEER_SHARED_FD): `shared-ok` routes key i to server i mod n there, the others
break it one way.
"""

from __future__ import annotations

import mmap
import os
import signal
import struct
import subprocess
import sys
import time

HOSTILE_NAME = b"<script>alert(1)</script> | `x` *y*"


def note_pid(pid: int) -> None:
    if path := os.environ.get("FAKE_PEER_PIDS"):
        with open(path, "a") as pids:
            pids.write(f"{pid}\n")


def reply(payload: bytes, status: bytes = b"K") -> None:
    sys.stdout.buffer.write(struct.pack("<I", 1 + len(payload)) + status + payload)
    sys.stdout.buffer.flush()


def main(mode: str) -> int:
    note_pid(os.getpid())
    if mode == "exit-at-start":
        print("fake_peer: cannot open its configuration", file=sys.stderr)
        return 3
    stdin = sys.stdin.buffer
    servers = routes = 0
    shared = mode.startswith("shared-")
    region: mmap.mmap | None = None
    while len(header := stdin.read(4)) == 4:
        length = struct.unpack("<I", header)[0]
        if mode == "kill-self-mid-batch" and length > 1000:  # a ROUTE, not HELLO or BUILD
            stdin.read(length // 2)  # half the batch read, then gone
            os.kill(os.getpid(), signal.SIGKILL)
        body = stdin.read(length)
        opcode = body[:1]
        if opcode == b"H":
            version = 99 if mode == "old-version" else 2 if shared else 1
            # A peer names itself: in a report that is a user string like any other.
            name = {"hostile-name": HOSTILE_NAME, "huge-name": b"N" * (8 << 20),
                    "control-name": b"fake\n\x1b[31m"}.get(mode, b"fake")
            # 16: shared batches; 2: TIME
            features = (16 if shared else 0) | (2 if mode.startswith("time-") else 0)
            reply(struct.pack("<III", version, features, len(name)) + name
                  + struct.pack("<I", 1) + b"0")
        elif opcode == b"S":
            if mode == "shared-refuse-share":
                message = b"cannot map"
                reply(struct.pack("<I", len(message)) + message, b"E")
                continue
            size = struct.unpack("<Q", body[1:9])[0]
            region = mmap.mmap(int(os.environ["RING_PEER_SHARED_FD"]), size)
            reply(b"")
        elif opcode in (b"r", b"l"):
            assert region is not None
            if mode == "shared-kill-mid-batch":
                os.kill(os.getpid(), signal.SIGKILL)
            n = struct.unpack("<I", body[1:5])[0]
            owners_at = struct.unpack("<Q", body[-8:])[0]
            owners = [i % servers for i in range(n)]
            if mode == "shared-out-of-range" and n:
                owners[-1] = servers
            region[owners_at:owners_at + 2 * n] = struct.pack(f"<{n}H", *owners)
            reply(struct.pack("<I", n - 1 if mode == "shared-wrong-count" else n))
        elif opcode == b"B":
            if mode == "crash-on-build":
                raise RuntimeError("fake_peer: crashed while building")
            if mode in ("error-not-utf8", "error-past-frame"):  # #38 class 3
                message = b"\xff\xfe not UTF-8" if mode == "error-not-utf8" else b"cut"
                said = len(message) + (0 if mode == "error-not-utf8" else 1000)
                reply(struct.pack("<I", said) + message, b"E")
                continue
            if mode == "refuse-build":
                message = b"no such server"
                reply(struct.pack("<I", len(message)) + message, b"E")
                continue
            servers = struct.unpack("<I", body[1:5])[0]
            reply(struct.pack("<q", -1))
        elif opcode == b"R":
            n = struct.unpack("<I", body[1:5])[0]
            routes += 1
            if mode == "kill-self-on-second-route" and routes == 2:  # a migration's batch
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "hang-on-route":
                note_pid(subprocess.Popen(["sleep", "300"]).pid)  # a child left to the group
                time.sleep(300)
            if mode == "stderr-escapes":  # a last line that would drive a terminal
                sys.stderr.write("fake_peer: \x1b[2J\x1b]0;owned\x07 died\n")
                return 5
            if mode == "stderr-forever":  # and never answer
                while True:
                    sys.stderr.write("y" * 65535 + "\n")
            if mode == "stderr-flood":
                for _ in range(512):  # 32 MiB, more than any pipe holds
                    sys.stderr.write("x" * 65535 + "\n")
                sys.stderr.write("fake_peer: flooded stderr, then died\n")
                sys.stderr.flush()
                return 4
            if mode == "garbage":
                sys.stdout.buffer.write(b"Traceback? no: plain garbage on stdout\n")
                sys.stdout.buffer.flush()
                continue
            owners = [0] * n
            if mode == "wrong-count":
                owners = owners[:-1]
            if mode == "out-of-range":
                owners[-1] = servers
            reply(struct.pack(f"<I{len(owners)}H", len(owners), *owners))
        elif opcode == b"T":
            repeats = struct.unpack("<I", body[1:5])[0]
            figure = {"time-nan": float("nan"), "time-negative": -5.0}.get(mode, 10.0)
            reply(struct.pack(f"<I{repeats}d", repeats, *[figure] * repeats))
        elif opcode == b"Q":
            return 0
        else:
            reply(struct.pack("<I", 11) + b"unsupported", b"E")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
