"""A process-protocol peer that speaks a mutated protocol: `python fuzz_peer.py PLAN`.

PLAN is JSON: {"version": 1 or 2, "pids": a file to append its pid to, "mutations": a
list, one per request in order (missing ones answer correctly)}. The peer computes the
correct reply to each request (every key to server i mod n, a correct count, figures),
then breaks it as its mutation says (tests/property/test_fuzz_peer_protocol.py draws the
plans with hypothesis):

    ["ok"]                       the correct reply
    ["flip", at, xor]            one byte of the frame (length included) xored
    ["truncate", keep]           the first `keep` bytes of the frame, then exit
    ["length", value]            the frame's length field replaced
    ["extra", bytes_hex]         bytes appended after the frame (a reply too many)
    ["twice"]                    the reply sent twice
    ["early", keep_reading]      answered before the request's payload is read (then the
                                 payload read, or not, and the peer waits for the next)
    ["garbage", bytes_hex]       these bytes instead of the reply
    ["status", byte]             another status byte
    ["error", raw_hex, lie]      an 'E' reply of these bytes as its string, its length
                                 field `lie` bytes off (past the frame, or short of it)
    ["owner", value]             a ROUTE/LOOKUP owner, or a count, replaced
    ["figure", value]            a TIME figure replaced (NaN, negative, huge)
    ["exit", code]               exit before answering
    ["hang"]                     never answer
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
import time


def read(size: int) -> bytes:
    """Exactly `size` bytes of stdin (fewer at its end), unbuffered: what the peer has not
    read stays in the pipe, as for a C peer's exact reads."""
    got = b""
    while len(got) < size and (chunk := os.read(0, size - len(got))):
        got += chunk
    return got


def main(plan_text: str) -> int:
    plan = json.loads(plan_text)
    with open(plan["pids"], "a") as pids:
        pids.write(f"{os.getpid()}\n")
    version, mutations = plan["version"], plan["mutations"]
    stdout = sys.stdout.buffer
    servers = 0
    region: mmap.mmap | None = None
    requests = 0
    while len(header := read(4)) == 4:
        length = struct.unpack("<I", header)[0]
        mutation = mutations[requests] if requests < len(mutations) else ["ok"]
        requests += 1
        if mutation[0] == "early":
            opcode = read(1)
            stdout.write(struct.pack("<I", 9) + b"K" + struct.pack("<q", -1))
            stdout.flush()
            if mutation[1]:
                read(length - 1)
            else:
                time.sleep(60)
            continue
        body = read(length)
        opcode = body[:1]
        if opcode == b"Q":
            return 0
        if mutation[0] == "exit":
            return int(mutation[1])
        if mutation[0] == "hang":
            time.sleep(60)
        payload = b""
        n = struct.unpack("<I", body[1:5])[0] if len(body) >= 5 else 0
        if opcode == b"H":
            features = 1 | 2 | 4 | 8 | (16 if version == 2 else 0)
            payload = struct.pack("<III", version, features, 4) + b"fuzz" + struct.pack(
                "<I", 1) + b"1"
        elif opcode == b"B":
            servers = n
            payload = struct.pack("<q", 100 * servers)
        elif opcode in (b"A", b"D"):
            servers += 1 if opcode == b"A" else -1
            payload = struct.pack("<q", 100 * servers)
        elif opcode == b"M":
            payload = struct.pack("<q", 4096)
        elif opcode in (b"R", b"L"):
            owners = [i % max(1, servers) for i in range(n)]
            if mutation[0] == "owner" and owners:
                owners[-1] = int(mutation[1]) & 0xFFFF
            payload = struct.pack(f"<I{n}H", n, *owners)
        elif opcode in (b"T", b"t"):
            figures = [10.0] * n
            if mutation[0] == "figure" and figures:
                figures[0] = float(mutation[1])
            payload = struct.pack(f"<I{n}d", n, *figures)
        elif opcode == b"S":
            size = struct.unpack("<Q", body[1:9])[0]
            region = mmap.mmap(int(os.environ["RING_PEER_SHARED_FD"]), size)
        elif opcode in (b"r", b"l"):
            owners_at = struct.unpack("<Q", body[-8:])[0]
            owners = [i % max(1, servers) for i in range(n)]
            if mutation[0] == "owner" and owners:
                owners[-1] = int(mutation[1]) & 0xFFFF
            if region is not None:
                region[owners_at:owners_at + 2 * n] = struct.pack(f"<{n}H", *owners)
            payload = struct.pack("<I", n)
        reply = struct.pack("<I", 1 + len(payload)) + b"K" + payload
        kind = mutation[0]
        if kind == "flip":
            at = int(mutation[1]) % len(reply)
            reply = reply[:at] + bytes([reply[at] ^ (int(mutation[2]) or 1)]) + reply[at + 1:]
        elif kind == "truncate":
            stdout.write(reply[:int(mutation[1]) % len(reply)])
            stdout.flush()
            return 0
        elif kind == "length":
            reply = struct.pack("<I", int(mutation[1]) & 0xFFFFFFFF) + reply[4:]
        elif kind == "extra":
            reply += bytes.fromhex(mutation[1])
        elif kind == "twice":
            reply += reply
        elif kind == "garbage":
            reply = bytes.fromhex(mutation[1])
        elif kind == "status":
            reply = reply[:4] + bytes([int(mutation[1])]) + reply[5:]
        elif kind == "error":
            raw = bytes.fromhex(mutation[1])
            said = max(0, len(raw) + int(mutation[2]))
            message = struct.pack("<I", said & 0xFFFFFFFF) + raw
            reply = struct.pack("<I", 1 + len(message)) + b"E" + message
        stdout.write(reply)
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
