"""nginx `hash $key consistent` (also Pingora's ketama v1): the CRC-32 chain ring.

Read from `ngx_http_upstream_init_chash` and `ngx_http_upstream_find_chash_point`
(src/http/modules/ngx_http_upstream_hash_module.c); checked against a real
nginx 1.22 in tests/live/test_nginx_live.py.

Points. Each server contributes `160 * weight` points, `weight` being the
integer of `server ... weight=N` (default 1); there is no other rounding.
nginx hashes the server *as written in the configuration* (`peer->server`),
not its resolved address:
- the text is split at its last ':' only if everything after it is digits:
  "10.0.0.1:8080" -> host "10.0.0.1", port "8080"; "[::1]:80" -> "[::1]", "80";
- with no such port there is no default: "backend" hashes host "backend" and
  an empty port, so "backend" and "backend:80" make different rings;
- "unix:/path" (any case) hashes the path as host, with an empty port.
base = CRC-32 of host, one zero byte, port. Point j = CRC-32 of the base
continued with the previous point's hash as 4 little-endian bytes (0 for the
first point). nginx continues the raw register and then applies
`ngx_crc32_final` (xor 0xffffffff); zlib's running value is the finalized CRC
and zlib un-finalizes it on entry, so `zlib.crc32(prev, base)` is the same.
nginx writes the previous hash little-endian on big-endian hosts too.

Collisions. All points, in configuration order of the servers, are sorted by
hash alone with `ngx_qsort` (glibc's qsort: a stable merge sort at these
sizes), then the first point of each run of equal hashes is kept, so the
server listed first wins: `Ring.from_points`'s lowest-index rule.

Keys. key hash = CRC-32 of the key (`ngx_crc32_long`); the owner is the first
point >= key hash, and `index % points` wraps past the last point.

Not modelled (they decide routing only around failures or odd configs): an
empty key or a single server falls back to round robin; a down or failed
server passes the key on to the next point (up to 20 tries); a name that
resolves to several addresses gives several peers with identical points.
With `hash $arg_key`, the key is the raw, still URL-encoded argument.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.hashing import hash_many
from harness.core.native import generate as c_generate
from harness.core.ring import Ring
from harness.core.servers import Server, require_servers
from harness.recipes.constructions.base import FixedConstruction
from harness.recipes.constructions.generator import generation_threads

POINTS_PER_WEIGHT = 160  # nginx's constant, also Pingora's ketama
_PREVIOUS_HASH = struct.Struct("<I")


def split_host_port(server: str) -> tuple[bytes, bytes]:
    """The host and port bytes nginx hashes for a `server` directive's address text."""
    data = server.encode()
    if data[:5].lower() == b"unix:":
        return data[5:], b""
    host, colon, port = data.rpartition(b":")
    if colon and all(0x30 <= byte <= 0x39 for byte in port):  # digits only, possibly none
        return host, port
    return data, b""


def server_points(server: str, count: int) -> list[int]:
    """The `count` chained CRC-32 points of one server, in generation order."""
    host, port = split_host_port(server)
    base = zlib.crc32(host + b"\0" + port)
    points = []
    previous = 0
    for _ in range(count):
        previous = zlib.crc32(_PREVIOUS_HASH.pack(previous), base)
        points.append(previous)
    return points


def weight_problem(server: Server) -> str | None:
    """nginx's `weight=N` is a positive integer; anything else is refused, naming the server."""
    if server.weight != int(server.weight) or server.weight < 1:
        return (f"positive integer weights, as nginx's weight=N (server {server.name!r} "
                f"has {server.weight})")
    return None


class NginxConstruction(FixedConstruction):
    """nginx's consistent hash ring; Pingora's ketama v1 builds the same one."""

    name = "nginx"

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        return next(filter(None, map(weight_problem, servers)), None)

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [POINTS_PER_WEIGHT * int(server.weight) for server in servers]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        """The chains computed in C from each server's base CRC (cext/generate.c)."""
        require_servers(self.name, servers)
        problem = self.check_servers(servers)
        if problem:
            raise HarnessError(f"nginx: servers must have {problem}")
        counts = self.point_counts(servers)
        bases = [zlib.crc32(host + b"\0" + port)
                 for host, port in (split_host_port(server.name) for server in servers)]
        words, _ = c_generate.generate_nginx(bases, counts, generation_threads())
        return Ring.from_owned_points(words, None, bits=32, servers=tuple(s.name for s in servers))

    def build_ring_reference(self, servers: Sequence[Server]) -> Ring:
        """`build_ring` in Python (`server_points`), which the C chains are tested against."""
        require_servers(self.name, servers)
        problem = self.check_servers(servers)
        if problem:
            raise HarnessError(f"nginx: servers must have {problem}")
        counts = self.point_counts(servers)
        positions = np.array(
            [point for server, count in zip(servers, counts, strict=True)
             for point in server_points(server.name, count)],
            dtype=np.uint32,
        )
        owners = np.repeat(np.arange(len(servers), dtype=np.uint16), counts)
        return Ring.from_points(positions, owners, bits=32, servers=tuple(s.name for s in servers))

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
        return hash_many("crc32", keys).astype(np.uint32)
