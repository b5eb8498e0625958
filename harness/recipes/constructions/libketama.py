"""libketama (memcached clients): the MD5 continuum, as uhashring's ketama mode builds it.

Checked point for point against uhashring 2.5 (`HashRing(nodes,
hash_fn="ketama")`, uhashring/ring_ketama.py) in tests/unit/test_libketama_uhashring.py.

Points. Server s of weight w gets `floor(w / total_weight * 40 * nservers)`
digests: MD5 of "<name>-<i>" for i = 0, 1, ..., each digest read as four
32-bit little-endian points. The server name is used whole ("host:port" as
written). The floor is taken exactly: uhashring computes
`40 * nservers * w // total_weight` on integers. The C libketama computes the
share in float32 (`floorf(pct * 40.0 * numservers)`) and can come out one
digest short: on x86-64, with 61, 122, 237 or 244 equal servers (the cases
below 300) it gives each 39 digests, not 40. uhashring only accepts integer
weights; this construction accepts any positive weight and floors the exact
fraction.

Collisions. uhashring's ring is a dict from point to server filled in server
order, so of equal points the server listed *last* wins
(`collision_winner="highest"`). The C libketama keeps every point and its
binary search finds the first of equal points after the sort, i.e. the server
listed first; we follow uhashring, the peer we are checked against.

Keys. key hash = the first 4 bytes of MD5(key), little-endian; the owner is
the first point >= key hash, wrapping. The C libketama does the same;
uhashring uses `bisect_right`, so a key whose hash *equals* a point goes to
the next point instead (only the point names themselves are known to do so).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from fractions import Fraction
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native import generate as c_generate
from harness.core.native import md5_many as c_md5
from harness.core.ring import CollisionWinner, Ring
from harness.core.servers import Server, require_servers
from harness.recipes.constructions.base import FixedConstruction
from harness.recipes.constructions.generator import generation_threads, parse_template

DIGESTS_PER_SERVER = 40  # libketama's constant: 160 points per server at equal weights
POINTS_PER_DIGEST = 4  # an MD5 digest is four 32-bit points
_LITTLE_ENDIAN_U32 = np.dtype("<u4")


def digest_counts(servers: Sequence[Server]) -> list[int]:
    """Digests per server: floor(share * 40 * nservers), share = weight / total weight."""
    for server in servers:
        if server.weight <= 0:
            raise HarnessError(
                f"libketama: server {server.name!r}: weight must be positive (got {server.weight})"
            )
    total = sum(Fraction(server.weight) for server in servers)
    scale = DIGESTS_PER_SERVER * len(servers)
    return [int(Fraction(server.weight) * scale // total) for server in servers]


def md5_key_hashes(names: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """libketama's key hash of each name, the first 4 bytes of its MD5 read little-endian,
    in one C call (cext/md5_many.c)."""
    return c_md5.md5_prefix32_many(names, "little")


def md5_key_hashes_reference(names: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """`md5_key_hashes` through hashlib, which the C MD5 is tested against."""
    raw = b"".join([hashlib.md5(name).digest()[:4] for name in names])
    return np.frombuffer(raw, dtype=_LITTLE_ENDIAN_U32).astype(np.uint32)


class LibketamaConstruction(FixedConstruction):
    """libketama's continuum: 4 MD5 points per digest, 40 digests per server at equal weights."""

    name = "libketama"
    #: of equal points, the server listed last keeps it (uhashring's dict)
    collision_winner: ClassVar[CollisionWinner] = "highest"

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        return None  # any positive weights; a tiny share can floor to no digest

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [POINTS_PER_DIGEST * count for count in self.digest_counts(servers)]

    def digest_counts(self, servers: Sequence[Server]) -> list[int]:
        """Digests per server (a client that computes the share otherwise overrides it)."""
        return digest_counts(servers)

    def point_prefixes(self, servers: Sequence[Server]) -> list[str]:
        """What "-<i>" is appended to, per server: its name, whole."""
        return [server.name for server in servers]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        """The digests of the names "<name>-<i>" computed in C (cext/generate.c)."""
        require_servers(self.name, servers)
        template = parse_template("{server}-{j}")
        assert template is not None  # fields and literal text only
        literals, segments = template
        words, _ = c_generate.generate_points(
            "md5-32", literals, segments,
            [prefix.encode() for prefix in self.point_prefixes(servers)],
            self.digest_counts(servers), generation_threads(), points_per_name=POINTS_PER_DIGEST,
        )
        return Ring.from_owned_points(
            words, None, bits=32, servers=tuple(s.name for s in servers),
            collision_winner=self.collision_winner,
        )

    def build_ring_reference(self, servers: Sequence[Server]) -> Ring:
        """`build_ring` in Python (hashlib), which the C digests are tested against."""
        require_servers(self.name, servers)
        counts = self.digest_counts(servers)
        raw = b"".join(
            [hashlib.md5(f"{prefix}-{i}".encode()).digest()
             for prefix, count in zip(self.point_prefixes(servers), counts, strict=True)
             for i in range(count)]
        )
        positions = np.frombuffer(raw, dtype=_LITTLE_ENDIAN_U32).astype(np.uint32)
        owners = np.repeat(
            np.arange(len(servers), dtype=np.uint16),
            [POINTS_PER_DIGEST * count for count in counts],
        )
        return Ring.from_points(
            positions, owners, bits=32, servers=tuple(s.name for s in servers),
            collision_winner=self.collision_winner,
        )

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
        return md5_key_hashes(keys)
