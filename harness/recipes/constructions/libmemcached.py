"""libmemcached 1.1.4's weighted ketama (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED): libketama's
continuum as that client computes it, which differs from our `libketama` in two places.

Both are in `update_continuum` (libmemcached/hosts.cc, libmemcached 1.1.4, the Debian
package `libmemcached-dev` 1.1.4-1), and the shipped adapter peers/c/libmemcached_ketama.c
is checked against this construction on every key (tests/test_foreign_adapters.py):

- Digest counts are computed in single precision: `pct = (float)weight / (float)total`,
  then `floor((float)(pct * 160 / 4 * (float)servers + 1e-10))` digests. An exact share
  of 40 digests can come out as 39.999998 and floor to 39: at 100 equal servers every
  server gets 39 digests (156 points), where `libketama` (exact fractions, as uhashring)
  gives 40, so about 2.4% of keys route differently between the two.
- On the default port 11211 the point names leave the port out: "host-<i>" instead of
  "host:11211-<i>" (other ports: "host:port-<i>", as `libketama` names every server).

Keys hash as in `libketama` (the first four bytes of MD5, little-endian; first point
>= hash, wrapping). libmemcached sorts the continuum with qsort, which leaves equal
points in no defined order; this construction keeps the last server's, as `libketama`
does (equal 32-bit points are about one in 10**5 rings of 16,000 points).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from harness.core.servers import Server
from harness.recipes.constructions.libketama import DIGESTS_PER_SERVER, LibketamaConstruction

DEFAULT_PORT = ":11211"
#: libmemcached's MEMCACHED_POINTS_PER_SERVER_KETAMA and MEMCACHED_POINTS_PER_HASH
POINTS_PER_SERVER, POINTS_PER_HASH = 160, 4


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

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        for server in servers:
            if server.weight != int(server.weight) or server.weight < 1:
                return (f"positive integer weights, as libmemcached takes (server "
                        f"{server.name!r} has {server.weight})")
        return None

    def digest_counts(self, servers: Sequence[Server]) -> list[int]:
        return float32_digest_counts(servers)

    def point_prefixes(self, servers: Sequence[Server]) -> list[str]:
        return [server.name.removesuffix(DEFAULT_PORT) for server in servers]
