"""The process protocol, version 2: how a foreign peer in any language talks to the harness.

Every message is a frame: a 4-byte little-endian length, then that many bytes, the first
of which is an opcode (requests) or a status (replies). All integers are little-endian;
a string is a u32 byte length and that many bytes of UTF-8. docs/guide/foreign-peers.md
gives the layout of every frame with examples; this module is its one implementation.

    request  = u32 length, u8 opcode, payload          (length counts opcode and payload)
    reply    = u32 length, u8 status, payload          ('K' success, 'E' error + string)

    'H' HELLO   u32 protocol version                  -> u32 version, u32 features,
                                                         string name, string version
    'B' BUILD   u32 n, n x (string name, f64 weight),   -> i64 entries (-1: unknown)
                string params
    'R' ROUTE   u32 n, (n + 1) x u32 offsets, bytes    -> u32 n, n x u16 owners
    'L' LOOKUP  u32 n, n x u64 hashes                  -> u32 n, n x u16 owners
    'T' TIME    u32 repeats, then a ROUTE payload      -> u32 repeats, repeats x f64 ns/key
    'M' MEMORY  (nothing)                              -> i64 bytes (-1: unknown)
    'A' ADD     string name, f64 weight                -> i64 entries
    'D' REMOVE  string name                            -> i64 entries
    'Q' QUIT    (nothing)                              -> no reply; the peer exits 0

Version 2 adds shared batches, for a peer whose HELLO answers version 2 with the
SHARED_BATCHES feature bit: the harness passes the peer a memfd (its number in the
environment variable RING_PEER_SHARED_FD), writes each batch into it once, and sends only
where the batch lies in it (offsets of the region, in bytes); the peer reads the keys from
the region and writes the owners into it. A version-1 peer never sees these requests.

    'S' SHARE         u64 bytes: map the region at this size -> (nothing)
    'r' ROUTE_SHARED  u32 n, u64 offsets_at, u64 keys_at,     -> u32 n (owners in region)
                      u64 owners_at
    'l' LOOKUP_SHARED u32 n, u64 hashes_at, u64 owners_at    -> u32 n (owners in region)
    't' TIME_SHARED   u32 repeats, then a ROUTE_SHARED payload -> as TIME

In the region the offsets are n + 1 u64 (relative to keys_at, 8-aligned), the hashes n
u64 (8-aligned), the owners n u16 (2-aligned).

Owners index the servers in BUILD order; ADD appends a server, REMOVE closes the gap.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: the version the harness speaks; a peer answers HELLO with the one it speaks, 1 or 2
PROTOCOL_VERSION = 2
VERSIONS = (1, 2)
HELLO, BUILD, ROUTE, LOOKUP, TIME, MEMORY, ADD, REMOVE, QUIT = (
    b"H", b"B", b"R", b"L", b"T", b"M", b"A", b"D", b"Q")
SHARE, ROUTE_SHARED, LOOKUP_SHARED, TIME_SHARED = b"S", b"r", b"l", b"t"
#: the environment variable that names the region's file descriptor in the peer
SHARED_FD_VARIABLE = "RING_PEER_SHARED_FD"
#: the environment variable holding the path of the harness's Python interpreter, set for
#: every process peer (a Python peer may need the packages the harness runs with)
PYTHON_VARIABLE = "RING_PEER_PYTHON"
OK, ERROR = b"K", b"E"
#: feature bits of the HELLO reply: which optional requests the peer answers
FEATURE_LOOKUP, FEATURE_TIME, FEATURE_MEMORY, FEATURE_CHANGE = 1, 2, 4, 8
#: version 2: the peer takes batches in a shared region (SHARE and the *_SHARED requests)
FEATURE_SHARED_BATCHES = 16
FEATURES = {FEATURE_LOOKUP: "lookup", FEATURE_TIME: "time", FEATURE_MEMORY: "memory",
            FEATURE_CHANGE: "add/remove", FEATURE_SHARED_BATCHES: "shared batches"}
#: the largest reply frame accepted: a batch of 2**26 owners, with room to spare
MAX_REPLY_BYTES = 1 << 28
#: the largest reply to a request whose answer is a few fields (HELLO, BUILD, MEMORY, ADD,
#: REMOVE): a peer answering HELLO with a 200 MiB name took 6 GiB and minutes to render,
#: as the name is copied into every table cell and padded
SMALL_REPLY_BYTES = 1 << 16
#: the longest name or version a peer may give itself in HELLO (characters)
MAX_IDENTITY_CHARS = 200
#: ns per key a peer may report by its own clock: an hour a key is no measurement
MAX_SELF_TIMED_NS = 3.6e12
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")
_SHARED_ROUTE = struct.Struct("<IQQQ")
_SHARED_LOOKUP = struct.Struct("<IQQ")


class ProtocolError(ValueError):
    """A reply that breaks the protocol; the message says how, for the peer's error line."""


def frame(opcode: bytes, payload: bytes = b"") -> bytes:
    return _U32.pack(1 + len(payload)) + opcode + payload


def string(text: str) -> bytes:
    encoded = text.encode()
    return _U32.pack(len(encoded)) + encoded


def hello() -> bytes:
    return frame(HELLO, _U32.pack(PROTOCOL_VERSION))


def build(names: Sequence[str], weights: Sequence[float], params: str) -> bytes:
    parts = [_U32.pack(len(names))]
    for name, weight in zip(names, weights, strict=True):
        parts += [string(name), _F64.pack(weight)]
    parts.append(string(params))
    return frame(BUILD, b"".join(parts))


def packed_keys(keys: Sequence[bytes]) -> tuple[bytes, npt.NDArray[np.uint64]]:
    """Keys back to back and their n + 1 offsets (the ABI's and the protocol's batch)."""
    offsets = np.zeros(len(keys) + 1, np.uint64)
    np.cumsum([len(key) for key in keys], out=offsets[1:])
    return b"".join(keys), offsets


def route_payload(blob: bytes, offsets: npt.NDArray[np.uint64]) -> bytes:
    if int(offsets[-1]) >= 2**32:
        raise ProtocolError("a batch of keys must be under 4 GiB")
    return _U32.pack(len(offsets) - 1) + offsets.astype("<u4").tobytes() + blob


def route(blob: bytes, offsets: npt.NDArray[np.uint64]) -> bytes:
    return frame(ROUTE, route_payload(blob, offsets))


def lookup(hashes: npt.NDArray[np.uint64]) -> bytes:
    return frame(LOOKUP, _U32.pack(len(hashes)) + hashes.astype("<u8").tobytes())


def time(repeats: int, blob: bytes, offsets: npt.NDArray[np.uint64]) -> bytes:
    return frame(TIME, _U32.pack(repeats) + route_payload(blob, offsets))


def share(size: int) -> bytes:
    return frame(SHARE, _U64.pack(size))


@dataclass(frozen=True)
class SharedRoute:
    """Where a batch of keys lies in the shared region: n + 1 u64 offsets at `offsets_at`,
    the key bytes from `keys_at` (the offsets count from there), n u16 owners at
    `owners_at`; `size` is the bytes the region needs for it."""

    keys: int
    offsets_at: int
    keys_at: int
    owners_at: int
    size: int

    @classmethod
    def of(cls, keys: int, key_bytes: int) -> SharedRoute:
        owners_at = 8 * (keys + 1)
        keys_at = owners_at + 2 * keys
        return cls(keys, 0, keys_at, owners_at, keys_at + key_bytes)

    def payload(self) -> bytes:
        return _SHARED_ROUTE.pack(self.keys, self.offsets_at, self.keys_at, self.owners_at)


@dataclass(frozen=True)
class SharedLookup:
    """Where a batch of hashes lies in the region: n u64 at `hashes_at`, n u16 owners at
    `owners_at`."""

    keys: int
    hashes_at: int
    owners_at: int
    size: int

    @classmethod
    def of(cls, keys: int) -> SharedLookup:
        return cls(keys, 0, 8 * keys, 10 * keys)

    def payload(self) -> bytes:
        return _SHARED_LOOKUP.pack(self.keys, self.hashes_at, self.owners_at)


def route_shared(where: SharedRoute) -> bytes:
    return frame(ROUTE_SHARED, where.payload())


def lookup_shared(where: SharedLookup) -> bytes:
    return frame(LOOKUP_SHARED, where.payload())


def time_shared(repeats: int, where: SharedRoute) -> bytes:
    return frame(TIME_SHARED, _U32.pack(repeats) + where.payload())


def memory() -> bytes:
    return frame(MEMORY)


def add(name: str, weight: float) -> bytes:
    return frame(ADD, string(name) + _F64.pack(weight))


def remove(name: str) -> bytes:
    return frame(REMOVE, string(name))


def quit_() -> bytes:
    return frame(QUIT)


@dataclass(frozen=True)
class Hello:
    version: int
    features: int
    name: str
    library_version: str

    def supports(self, feature: int) -> bool:
        return bool(self.features & feature)


class Reader:
    """Reads the fields of one reply payload in order; any shortfall is a ProtocolError."""

    def __init__(self, payload: bytes, what: str) -> None:
        self._payload, self._at, self._what = payload, 0, what

    def take(self, size: int) -> bytes:
        if self._at + size > len(self._payload):
            raise ProtocolError(f"answered {self._what} with a reply cut short "
                                f"({len(self._payload)} bytes)")
        chunk = self._payload[self._at:self._at + size]
        self._at += size
        return chunk

    def u32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def i64(self) -> int:
        return int(_I64.unpack(self.take(8))[0])

    def f64(self) -> float:
        return float(_F64.unpack(self.take(8))[0])

    def string(self) -> str:
        raw = self.take(self.u32())
        try:
            return raw.decode()
        except UnicodeDecodeError:
            raise ProtocolError(f"answered {self._what} with a string that is not "
                                "UTF-8") from None

    def end(self) -> None:
        extra = len(self._payload) - self._at
        if extra:
            raise ProtocolError(f"answered {self._what} with {extra} bytes more than the "
                                "protocol's reply")


def reply_limit(what: str, keys: int = 0, repeats: int = 0) -> int:
    """The most bytes a reply frame to `what` may take: what the protocol's answer takes
    (owners for ROUTE and LOOKUP, figures for TIME), and never less than SMALL_REPLY_BYTES,
    room for an error reply's message or a few fields."""
    exact = {"ROUTE": 5 + 2 * keys, "LOOKUP": 5 + 2 * keys, "TIME": 5 + 8 * repeats}
    return max(SMALL_REPLY_BYTES, exact.get(what, 0))


def _identity(text: str, what: str) -> str:
    """A name or version the report shows: short, and free of control characters, which
    would break a one-line message or move a terminal's cursor when shown."""
    if len(text) > MAX_IDENTITY_CHARS:
        raise ProtocolError(f"answered HELLO with a {what} of {len(text):,} characters (at "
                            f"most {MAX_IDENTITY_CHARS})")
    if any(not character.isprintable() for character in text):
        raise ProtocolError(f"answered HELLO with a {what} holding control characters "
                            f"({text!r:.80})")
    return text


def parse_hello(payload: bytes) -> Hello:
    reader = Reader(payload, "HELLO")
    reply = Hello(reader.u32(), reader.u32(), _identity(reader.string(), "name"),
                  _identity(reader.string(), "version"))
    reader.end()
    return reply


def parse_count(payload: bytes, what: str) -> int:
    """The i64 of a BUILD, ADD, REMOVE or MEMORY reply."""
    reader = Reader(payload, what)
    value = reader.i64()
    reader.end()
    return value


def parse_empty(payload: bytes, what: str) -> None:
    """A reply of no fields (SHARE): any byte in it breaks the protocol."""
    Reader(payload, what).end()


def parse_shared_count(payload: bytes, keys: int, what: str) -> None:
    """A ROUTE_SHARED or LOOKUP_SHARED reply: the u32 count of owners it wrote, all of them."""
    reader = Reader(payload, what)
    count = reader.u32()
    reader.end()
    if count != keys:
        raise ProtocolError(f"answered {what} of {keys:,} keys with {count:,} owners")


def check_owners(owners: npt.NDArray[np.uint16], servers: int, what: str) -> None:
    if len(owners) and int(owners.max()) >= servers:
        at = int(np.argmax(owners >= servers))
        raise ProtocolError(f"answered {what} with owner {int(owners[at])} for key {at}, "
                            f"out of range for {servers} servers")


def parse_owners(payload: bytes, keys: int, servers: int, what: str) -> npt.NDArray[np.uint16]:
    """The owners of a ROUTE or LOOKUP reply, checked: as many as keys, each a server."""
    reader = Reader(payload, what)
    count = reader.u32()
    if count != keys:
        raise ProtocolError(f"answered {what} of {keys:,} keys with {count:,} owners")
    # Little-endian u16 is uint16 here (x86-64, arm64): a view, not a copy.
    owners = np.frombuffer(reader.take(2 * count), "<u2").astype(np.uint16, copy=False)
    reader.end()
    check_owners(owners, servers, what)
    return owners


def parse_times(payload: bytes, repeats: int) -> list[float]:
    reader = Reader(payload, "TIME")
    count = reader.u32()
    if count != repeats:
        raise ProtocolError(f"answered TIME of {repeats} repeats with {count} figures")
    times = [reader.f64() for _ in range(count)]
    reader.end()
    # A NaN, an infinity or a negative time is no measurement: it would stop the run when
    # the result is written (NaN is not JSON) or stand in the report as a figure.
    for figure in times:
        if not 0.0 <= figure <= MAX_SELF_TIMED_NS:
            raise ProtocolError(f"answered TIME with {figure!r} ns per key (expected a "
                                f"number from 0 to {MAX_SELF_TIMED_NS:g})")
    return times


def error_message(payload: bytes, what: str) -> str:
    """The message of an error reply ('E'), at most 300 characters: its string, which must
    be the whole payload and UTF-8 (an empty payload is no message). Anything else is a
    ProtocolError, as for any reply that breaks the protocol."""
    if not payload:
        return "no message"
    reader = Reader(payload, what)
    try:
        text = reader.string()
        reader.end()
    except ProtocolError:
        raise ProtocolError(f"answered {what} with a malformed error reply ({len(payload):,} "
                            "bytes that are not one UTF-8 string filling the frame)") from None
    return text[:300] or "no message"
