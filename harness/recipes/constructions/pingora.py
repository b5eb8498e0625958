"""Cloudflare Pingora's ketama (the pingora-ketama crate): v1, nginx's ring, and v2.

Read from `Continuum::new_with_version`, `RingBuilder::sort` and `VersionedRing::node_idx`
(pingora-ketama/src/lib.rs); checked against the crate's own tests (src/lib.rs's tests
and the 1,000 routes of test-data/sample-nginx-upstream.csv, kept in
tests/fixtures/pingora_ketama_vectors.json) by tests/unit/test_pingora_ketama.py.

Servers. A Pingora bucket is a socket address (`SocketAddr`) and a weight, an integer
from 1: a server's name here must be one, "10.0.0.1:80" or "[2001:db8::1]:80", in the
form Rust parses (no host names, no leading zeros, a port 0..65535), and two servers
may not share one.

Points. As nginx (see `nginx.py`), with one difference in the text hashed: the
address as Rust prints it, then a zero byte, then the port: "10.0.0.1\\0" "80", and
for IPv6 "2001:db8::1\\0" "80", without the brackets that nginx hashes, in RFC 5952's
short form (an IPv4-mapped address printed "::ffff:a.b.c.d"). Each server gets
`weight * point_multiple` points, the CRC-32 chain from that text: 160 in v1 (nginx's
constant), any `point_multiple` in v2. Point j continues the CRC-32 of the text with
the previous point, 4 little-endian bytes (0 for the first).

Collisions. v1 sorts the points by hash with Rust's unstable sort and keeps the first
of equal hashes: which server wins is not specified (our v1 keeps the first-listed, as
nginx does, which is what Pingora's own test gets on a fleet sorted by address). v2
sorts by hash then by socket address, and keeps the first: the smallest address wins
(IPv4 before IPv6, then the address as a number, then the port), whatever the order
of the configuration. v2 stores a point in 6 bytes (`[u8; 6]`: the u32 hash, then the
u16 node index, both native-endian), which is our `cffi-packed` / `numpy-packed`
entry byte for byte; its node index is a u16, so a v2 ring holds 65,536 backends at
most (the harness's rings: 65,535).

Keys. The key's CRC-32; the owner is the point found by a binary search, the first
point >= hash, wrapping past the last, as nginx.

Not modelled: Pingora's health checks and `node_iter`'s walk to the next points for
failover (which the harness's rings give by their order), and Unix sockets (a TODO in
the crate).
"""

from __future__ import annotations

import ipaddress
import re
import zlib
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError, ScenarioError
from harness.core.hashing import hash_many
from harness.core.native import generate as c_generate
from harness.core.params import Param, parse_keywords
from harness.core.ring import Ring
from harness.core.servers import Server, require_servers
from harness.recipes.constructions.base import ConstructionBase
from harness.recipes.constructions.generator import generation_threads
from harness.recipes.constructions.nginx import POINTS_PER_WEIGHT

VERSIONS = ("v2", "v1")
#: Pingora sums weight x point_multiple in a u32
MAX_POINTS = 2**32 - 1
#: matched whole (`fullmatch`: `$` would let a trailing newline through, which Rust
#: refuses); a port of any number of ASCII digits, as Rust's parser reads one (leading
#: zeros allowed, the value below 2**16)
_IPV4_SOCKET = re.compile(r"([0-9.]+):([0-9]+)")
_IPV6_SOCKET = re.compile(r"\[([0-9A-Fa-f:.]+)\]:([0-9]+)")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_socket_address(text: str) -> tuple[Address, int] | None:
    """The (address, port) of a socket address as Rust's `SocketAddr::from_str` reads
    it ("1.2.3.4:80", "[::1]:80"); None for anything else (a scope id is not taken)."""
    match = _IPV4_SOCKET.fullmatch(text) or _IPV6_SOCKET.fullmatch(text)
    if match is None:
        return None
    try:
        address: Address = ipaddress.ip_address(match.group(1))
    except ValueError:
        return None
    if (match.re is _IPV4_SOCKET) != (address.version == 4):
        return None
    digits = match.group(2).lstrip("0") or "0"
    if len(digits) > 5:  # before int(), which refuses more than 4,300 digits
        return None
    port = int(digits)
    return (address, port) if port < 2**16 else None


def rust_address_text(address: Address) -> str:
    """The address as Rust's `Display` prints it: dotted IPv4, RFC 5952 IPv6 (Python's
    compressed form), an IPv4-mapped IPv6 address as "::ffff:a.b.c.d"."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return f"::ffff:{address.ipv4_mapped}"
    return str(address)


def point_base(address: Address, port: int) -> bytes:
    """What Pingora hashes before the chain: "<address>\\0<port>"."""
    return f"{rust_address_text(address)}\0{port}".encode()


def address_order(address: Address, port: int) -> tuple[int, int, int]:
    """Rust's order of socket addresses: V4 before V6, then the address, then the port."""
    return (address.version, int(address), port)


def chain_points(base: bytes, count: int) -> list[int]:
    """The `count` chained CRC-32 points from the base text, in Python (the reference)."""
    seed = zlib.crc32(base)
    points, previous = [], 0
    for _ in range(count):
        previous = zlib.crc32(previous.to_bytes(4, "little"), seed)
        points.append(previous)
    return points


class PingoraConstruction(ConstructionBase):
    """pingora-ketama's continuum, v2 (tie by socket address, `point_multiple`) or v1."""

    name: ClassVar[str] = "pingora"
    params: ClassVar[tuple[Param, ...]] = (
        Param("version", "choice", VERSIONS[0],
              "v2 (`Version::V2`: ties broken by socket address, 6-byte points) or v1 (the "
              "default of the crate: nginx's ring)", choices=VERSIONS),
        Param("point_multiple", "int", POINTS_PER_WEIGHT,
              "points per unit of weight (v2's `point_multiple`; v1 fixes 160)",
              minimum=1, maximum=MAX_POINTS),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        found = self.params_problem(values)
        if found is not None:
            key, expected = found
            raise ScenarioError(f"construction {self.name!r}: {key} must be {expected} "
                                f"(got {values[key]})")
        self.version: str = values["version"]
        self.point_multiple: int = values["point_multiple"]

    @staticmethod
    def params_problem(values: dict[str, Any]) -> tuple[str, str] | None:
        """v1 has no point_multiple of its own: 160, nginx's."""
        if values["version"] == "v1" and values["point_multiple"] != POINTS_PER_WEIGHT:
            return ("point_multiple", f"{POINTS_PER_WEIGHT} (or left out) for version 'v1', "
                    "which fixes it")
        return None

    @property
    def bits(self) -> int:
        return 32

    @property
    def label(self) -> str:
        parts = [self.name, self.version]
        if self.point_multiple != POINTS_PER_WEIGHT:
            parts.append(f"x{self.point_multiple}")
        return " ".join(parts)

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        seen: dict[tuple[int, int, int], str] = {}
        for server in servers:
            if server.weight != int(server.weight) or server.weight < 1:
                return (f"positive integer weights, as Pingora's Bucket (server "
                        f"{server.name!r} has {server.weight})")
            parsed = parse_socket_address(server.name)
            if parsed is None:
                return ("names that are socket addresses, \"10.0.0.1:80\" or \"[::1]:80\", "
                        f"as Pingora's buckets (server {server.name!r})")
            order = address_order(*parsed)
            if order in seen:
                return (f"distinct socket addresses (servers {seen[order]!r} and "
                        f"{server.name!r})")
            seen[order] = server.name
        if sum(int(s.weight) for s in servers) * self.point_multiple > MAX_POINTS:
            return f"at most {MAX_POINTS:,} points in all, as Pingora counts them in a u32"
        return None

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [int(server.weight) * self.point_multiple for server in servers]

    def _checked(self, servers: Sequence[Server]) -> tuple[list[bytes], list[int], list[int]]:
        """Each server's base text, point count and rank by address (v2's tie order)."""
        require_servers(self.name, servers)
        problem = self.check_servers(servers)
        if problem:
            raise HarnessError(f"{self.name}: servers must have {problem}")
        parsed = [parse_socket_address(server.name) for server in servers]
        sockets = [socket for socket in parsed if socket is not None]
        order = sorted(range(len(servers)), key=lambda i: address_order(*sockets[i]))
        ranks = [0] * len(servers)
        for rank, index in enumerate(order):
            ranks[index] = rank
        return [point_base(*socket) for socket in sockets], self.point_counts(servers), ranks

    def _tie_order(self, ranks: list[int]) -> list[int]:
        """Each server's rank among equal points: its address order (v2), its place (v1)."""
        return ranks if self.version == "v2" else list(range(len(ranks)))

    def _ring(self, words: npt.NDArray[np.uint64], ranks: list[int],
              servers: Sequence[Server]) -> Ring:
        """Packed points (position << 16 | server index), re-owned by their server's tie
        rank so that the ring's lowest-owner rule keeps the winner, sorted in place
        (`Ring.from_owned_points`), then given back their servers."""
        tie = np.array(self._tie_order(ranks), dtype=np.uint16)
        owners = (words & np.uint64(0xFFFF)).astype(np.uint16)
        words &= ~np.uint64(0xFFFF)
        words |= tie[owners]
        del owners
        ring = Ring.from_owned_points(words, None, bits=32,
                                      servers=tuple(s.name for s in servers))
        back = np.empty(len(servers), dtype=np.uint16)
        back[tie.astype(np.int64)] = np.arange(len(servers), dtype=np.uint16)
        return Ring(positions=ring.positions, owners=back[ring.owners], bits=32,
                    collisions=ring.collisions, servers=ring.servers)

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        """The chains computed in C from each server's base CRC (cext/generate.c)."""
        bases, counts, ranks = self._checked(servers)
        words, _ = c_generate.generate_nginx([zlib.crc32(base) for base in bases], counts,
                                             generation_threads())
        return self._ring(words, ranks, servers)

    def build_ring_reference(self, servers: Sequence[Server]) -> Ring:
        """`build_ring` in Python (`chain_points`), which the C chains are tested against:
        the points sorted by (position, tie rank), the first of each position kept."""
        bases, counts, ranks = self._checked(servers)
        tie = self._tie_order(ranks)
        points = sorted((point, tie[index], index)
                        for index, (base, count) in enumerate(zip(bases, counts, strict=True))
                        for point in chain_points(base, count))
        kept = [point for at, point in enumerate(points)
                if at == 0 or point[0] != points[at - 1][0]]
        return Ring(positions=np.array([p for p, _, _ in kept], dtype=np.uint32),
                    owners=np.array([i for _, _, i in kept], dtype=np.uint16), bits=32,
                    collisions=len(points) - len(kept),
                    servers=tuple(s.name for s in servers))

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
        return hash_many("crc32", keys).astype(np.uint32)
