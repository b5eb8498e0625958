"""libmemcached 1.1.4's weighted ketama (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED): libketama's
continuum as that client computes it, which differs from our `libketama` in two places.

Both are in `update_continuum` (libmemcached/hosts.cc, libmemcached 1.1.4, the Debian
package `libmemcached-dev` 1.1.4-1), and the shipped adapter peers/c/libmemcached_ketama.c
is checked against this construction on every key (tests/live/test_foreign_adapters.py):

- Digest counts are computed in single precision: `pct = (float)weight / (float)total`,
  then `floor((float)(pct * 160 / 4 * (float)servers + 1e-10))` digests. An exact share
  of 40 digests can come out as 39.999998 and floor to 39: at 100 equal servers every
  server gets 39 digests (156 points), where `libketama` (exact fractions, as uhashring)
  gives 40, so about 2.4% of keys route differently between the two.
- On the default port 11211 the point names leave the port out: "host-<i>" instead of
  "host:11211-<i>" (other ports: "host:port-<i>", as `libketama` names every server).

`mode` picks the distribution the client is set to (the shipped adapter's parameter
string, `mode=...`):

- `"weighted"` (default): MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, as above.
- `"spy"`: the same, then MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY, libmemcached's
  spymemcached compatibility mode: the points are named "/host:port-<i>", the port always
  kept, with a leading "/" (older spymemcached's `InetSocketAddress` text). spymemcached
  2.12.3 itself names them "host:port-<i>" without the "/" (its
  `KetamaNodeKeyFormatter.Format.SPYMEMCACHED`), so the two "compatible" clients build
  different rings and agree on about 1/N of the keys.
- `"ketama"`: MEMCACHED_BEHAVIOR_KETAMA, unweighted, with MEMCACHED_HASH_MD5: 100 points
  per server (MEMCACHED_POINTS_PER_SERVER), one per name ("host:port-<i>", or "host-<i>"
  on 11211), each the first four bytes of that name's MD5, little-endian. No weights.

Keys hash as in `libketama` (the first four bytes of MD5, little-endian; first point
>= hash, wrapping). Of equal points the server listed first wins, where `libketama`
keeps the last: libmemcached keeps both and sorts them with qsort, which the C standard
leaves unordered among equals, but glibc's qsort is a merge sort (stable) whenever it can
allocate its buffer, so equal points stay in server order and the binary search finds the
first listed. Measured: at 100 servers of weights 1:2:4 on port 11212 in `mode = "spy"`,
servers 59 and 74 share a point and libmemcached routes its 13 keys of 100,000 to 59.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from harness.core.params import Param, parse_keywords
from harness.core.ring import CollisionWinner, Ring
from harness.core.servers import Server, require_servers
from harness.recipes.constructions.libketama import DIGESTS_PER_SERVER, LibketamaConstruction

DEFAULT_PORT = ":11211"
#: libmemcached's MEMCACHED_POINTS_PER_SERVER_KETAMA and MEMCACHED_POINTS_PER_HASH
POINTS_PER_SERVER, POINTS_PER_HASH = 160, 4
#: MEMCACHED_POINTS_PER_SERVER: points per server of the unweighted ketama distribution
UNWEIGHTED_POINTS = 100
#: the distributions modelled: weighted ketama, its spymemcached mode, unweighted ketama
MODES = ("weighted", "spy", "ketama")


def float32_digest_counts(servers: Sequence[Server]) -> list[int]:
    """Digests per server, in the single-precision steps libmemcached takes."""
    f32 = np.float32
    # libmemcached's weights are integers (uint32_t), summed exactly.
    total = f32(sum(int(server.weight) for server in servers))
    live = f32(len(servers))
    counts = []
    for server in servers:
        share = f32(f32(int(server.weight)) / total)
        scaled = f32(f32(f32(share * f32(POINTS_PER_SERVER)) / f32(POINTS_PER_HASH)) * live)
        # The 1e-10 is a double: the float is widened, the sum narrowed back, then floored.
        counts.append(math.floor(f32(float(scaled) + 0.0000000001)))
    assert POINTS_PER_SERVER // POINTS_PER_HASH == DIGESTS_PER_SERVER
    return counts


class LibmemcachedConstruction(LibketamaConstruction):
    """libketama's continuum as libmemcached 1.1.4 builds it (float32 shares, port 11211)."""

    name = "libmemcached"
    #: glibc's stable qsort keeps equal points in server order: the first listed wins
    collision_winner: ClassVar[CollisionWinner] = "lowest"
    params: ClassVar[tuple[Param, ...]] = (
        Param("mode", "choice", MODES[0],
              "the client's distribution: weighted ketama (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED), "
              "its spymemcached compatibility mode (points named \"/host:port-i\"), or "
              "unweighted ketama (MEMCACHED_BEHAVIOR_KETAMA, 100 points a server, MD5)",
              choices=MODES),
    )

    def __init__(self, **params: Any) -> None:
        self.mode: str = parse_keywords(f"construction {self.name!r}", self.params,
                                        params)["mode"]

    @property
    def label(self) -> str:
        return self.name if self.mode == MODES[0] else f"{self.name} {self.mode}"

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        for server in servers:
            if server.weight != int(server.weight) or server.weight < 1:
                return (f"positive integer weights, as libmemcached takes (server "
                        f"{server.name!r} has {server.weight})")
            if self.mode == "ketama" and server.weight != 1:
                return (f"all of weight 1 for mode = 'ketama', which has no weights (server "
                        f"{server.name!r} has {server.weight:g})")
        return None

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        if self.mode == "ketama":
            return [UNWEIGHTED_POINTS] * len(servers)
        return super().point_counts(servers)

    def digest_counts(self, servers: Sequence[Server]) -> list[int]:
        return float32_digest_counts(servers)

    def point_prefixes(self, servers: Sequence[Server]) -> list[str]:
        if self.mode == "spy":
            return ["/" + server.name for server in servers]
        return [server.name.removesuffix(DEFAULT_PORT) for server in servers]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        if self.mode == "ketama":
            return self.build_ring_reference(servers)
        return super().build_ring(servers)

    def build_ring_reference(self, servers: Sequence[Server]) -> Ring:
        if self.mode != "ketama":
            return super().build_ring_reference(servers)
        # One point per name (100 names a server): hashlib is fast enough for the 10,000
        # names of libmemcached's largest continuum, so there is no C path to check.
        require_servers(self.name, servers)
        raw = b"".join(hashlib.md5(f"{prefix}-{i}".encode()).digest()[:4]
                       for prefix in self.point_prefixes(servers)
                       for i in range(UNWEIGHTED_POINTS))
        positions = np.frombuffer(raw, dtype="<u4").astype(np.uint32)
        owners = np.repeat(np.arange(len(servers), dtype=np.uint16), UNWEIGHTED_POINTS)
        return Ring.from_points(positions, owners, bits=32,
                                servers=tuple(s.name for s in servers),
                                collision_winner=self.collision_winner)
