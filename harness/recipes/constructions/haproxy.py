"""HAProxy 2.6 `hash-type consistent`: the full_hash tree, searched for the nearer neighbour.

Read from `chash_init_server_tree` and `chash_get_server_hash` (src/lb_chash.c),
`full_hash` (include/haproxy/tools.h), `hash_sdbm` (src/hash.c) and the
`hash-type` parser (src/cfgparse-listen.c); checked against a real HAProxy
2.6 in tests/live/test_haproxy_live.py.

Points. A server of `weight w` (an integer 0..256) gets `16 * w` points
(BE_WEIGHT_SCALE = 16); point j of the server whose numeric id is `id` sits at
`full_hash(id * 4096 + j)` (4096 = SRV_EWGHT_RANGE, one slot per possible
point), `full_hash` being Bob Jenkins' 32-bit integer hash times 3221225473.
Both steps are bijections of 32-bit integers and `id * 4096 + j` differs for
every point, so no two points ever coincide. The name and address of a
server play no part; its id does. HAProxy numbers servers without an `id`
1, 2, ... in declaration order (`server_ids = "order"`, the default: for a
configuration that sets no `id`). `server_ids = "name"` reads each id from
the digits that end the server's name ("srv7" -> 7), for configurations that
write `id 7`; ids stay with their servers when one is removed, as when a
server goes down in HAProxy (which keeps the others' points), whereas with
"order" a server removed from the list renumbers every server after it,
as reloading HAProxy with that configuration does. Ids are limited to
1..524287 so that `id * 4096 + j` stays within HAProxy's signed int.
Weight 0 is accepted (HAProxy sends such a server nothing): it has no point.

Keys. A key is hashed with sdbm over its bytes (`hash = c + (hash << 6) +
(hash << 16) - hash`), each byte counting as 0..255: checked against the real
HAProxy with UTF-8 keys. `hash-type consistent` with no function then
applies `full_hash` to that hash ("avalanche", the default here,
`key_hash = "sdbm avalanche"`); `hash-type consistent sdbm` does not
(`key_hash = "sdbm"`). The key is what the `balance` rule extracts: with
`balance hdr(X-Key)`, the header's first comma-separated value without the
blanks around it (our live test); with `balance url_param key`, the raw,
still URL-encoded value.

Lookup. HAProxy does not take the first point at or after the key's hash:
`chash_get_server_hash` finds that point and the one before it (wrapping at
both ends) and picks the *nearer*, the one before on a tie (`dp <= dn`,
distances modulo 2**32). So the point p_i, whose successor is p_{i+1} at gap g
(modulo 2**32), owns the hashes from just after the previous boundary to
p_i + floor(g / 2). The ring this construction builds holds those
boundaries, `(p_i + g // 2) % 2**32`, each owned by p_i's server: the usual
lookup (first position >= hash, wrapping) on it routes every hash exactly as
HAProxy's search on the points does (`nearest_point_owner` is that search,
which the tests compare on every boundary). The positions are therefore arc
ends, not the points themselves, and one server's arcs stay its own.

Not modelled (they decide routing only around failures or odd
configurations): `hash-balance-factor` (bounded loads, off by default); a
redispatch avoiding the server that failed; backup servers, which form a
second tree used only when no active server is up; a missing or empty key
and a backend with a single usable server, which fall back to round robin
(the same server for one); the functions djb2, wt6 and crc32.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.params import Param, parse_keywords
from harness.core.ring import Ring
from harness.core.servers import Server, require_servers
from harness.recipes.constructions.base import ConstructionBase

MASK32 = 0xFFFFFFFF
SPACE = 2**32
BE_WEIGHT_SCALE = 16  # points per unit of user weight
SRV_EWGHT_RANGE = 4096  # id stride: 256 user weights x BE_WEIGHT_SCALE
MAX_WEIGHT = 256
MAX_SERVER_ID = (2**31 - 1) // SRV_EWGHT_RANGE  # id * 4096 + 4095 fits a signed int
KEY_HASHES = ("sdbm avalanche", "sdbm")
SERVER_IDS = ("order", "name")
_FULL_HASH_MULTIPLIER = 3221225473
_TRAILING_DIGITS = re.compile(r"(\d+)$")


def full_hash(a: int) -> int:
    """HAProxy's `full_hash`: Bob Jenkins' 32-bit integer hash, then times 3221225473."""
    a = ((a + 0x7ED55D16) + (a << 12)) & MASK32
    a = ((a ^ 0xC761C23C) ^ (a >> 19)) & MASK32
    a = ((a + 0x165667B1) + (a << 5)) & MASK32
    a = ((a + 0xD3A2646C) ^ (a << 9)) & MASK32
    a = ((a + 0xFD7046C5) + (a << 3)) & MASK32
    a = ((a ^ 0xB55A4F09) ^ (a >> 16)) & MASK32
    return (a * _FULL_HASH_MULTIPLIER) & MASK32


def full_hash_many(values: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """`full_hash` of every value: uint32 arrays wrap exactly as C's unsigned int."""
    a = values.astype(np.uint32, copy=True)
    a = (a + np.uint32(0x7ED55D16)) + (a << np.uint32(12))
    a = (a ^ np.uint32(0xC761C23C)) ^ (a >> np.uint32(19))
    a = (a + np.uint32(0x165667B1)) + (a << np.uint32(5))
    a = (a + np.uint32(0xD3A2646C)) ^ (a << np.uint32(9))
    a = (a + np.uint32(0xFD7046C5)) + (a << np.uint32(3))
    a = (a ^ np.uint32(0xB55A4F09)) ^ (a >> np.uint32(16))
    return a * np.uint32(_FULL_HASH_MULTIPLIER)


def sdbm(data: bytes) -> int:
    """HAProxy's `hash_sdbm` of the key's bytes, each 0..255."""
    h = 0
    for byte in data:
        h = (byte + (h << 6) + (h << 16) - h) & MASK32
    return h


def sdbm_many(keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """`sdbm` of every key: keys of one length form a matrix hashed a column at a time."""
    lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    hashes = np.zeros(len(keys), dtype=np.uint32)
    for length in np.unique(lengths).tolist():
        if length == 0:
            continue  # sdbm of no bytes is 0
        rows = np.flatnonzero(lengths == length)
        matrix = np.frombuffer(b"".join([keys[i] for i in rows.tolist()]), dtype=np.uint8)
        matrix = matrix.reshape(len(rows), length)
        h = np.zeros(len(rows), dtype=np.uint32)
        for column in range(length):
            h = matrix[:, column].astype(np.uint32) + (h << np.uint32(6)) \
                + (h << np.uint32(16)) - h
        hashes[rows] = h
    return hashes


def key_hash(data: bytes, avalanche: bool = True) -> int:
    """One key's hash, as HAProxy computes it before searching the tree."""
    h = sdbm(data)
    return full_hash(h) if avalanche else h


def point_positions(server_id: int, count: int) -> npt.NDArray[np.uint32]:
    """The first `count` points of the server with this id: full_hash(id * 4096 + j)."""
    return full_hash_many(np.arange(count, dtype=np.uint32)
                          + np.uint32(server_id * SRV_EWGHT_RANGE))


def nearest_point_owner(points: Sequence[int], owners: Sequence[int], hash_value: int) -> int:
    """`chash_get_server_hash` on sorted points: the nearer of the first point >= hash and
    the one before it (both wrapping), the one before on a tie. The plain reference."""
    after = bisect.bisect_left(points, hash_value)
    if after == len(points):
        after = 0
    before = after - 1  # -1 wraps to the last point, as eb32_last does
    distance_before = (hash_value - points[before]) & MASK32
    distance_after = (points[after] - hash_value) & MASK32
    return owners[before] if distance_before <= distance_after else owners[after]


def arc_ends(points: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """For sorted, distinct points: the last hash each one wins, p_i + floor(gap_i / 2)."""
    wide = points.astype(np.int64)
    gaps = np.empty_like(wide)
    gaps[:-1] = np.diff(wide)
    gaps[-1] = wide[0] + SPACE - wide[-1]  # the last point's gap wraps to the first
    return ((wide + gaps // 2) % SPACE).astype(np.uint32)


def server_ids(servers: Sequence[Server], scheme: str) -> list[int]:
    """Each server's HAProxy id: 1, 2, ... in order, or the digits ending its name."""
    if scheme == "order":
        return list(range(1, len(servers) + 1))
    ids = []
    for server in servers:
        match = _TRAILING_DIGITS.search(server.name)
        ids.append(int(match.group(1)) if match else 0)
    return ids


class HaproxyConstruction(ConstructionBase):
    """HAProxy's consistent hash tree (2.6), held as the arcs its nearest-point search gives."""

    name: ClassVar[str] = "haproxy"
    params: ClassVar[tuple[Param, ...]] = (
        Param("key_hash", "choice", KEY_HASHES[0],
              "the key's hash: sdbm then full_hash (`hash-type consistent`), or sdbm alone "
              "(`hash-type consistent sdbm`)", choices=KEY_HASHES),
        Param("server_ids", "choice", SERVER_IDS[0],
              "server ids: 1, 2, ... in list order (HAProxy's automatic ids), or the digits "
              "ending each name (`id N` written in the configuration)",
              choices=SERVER_IDS),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        self.key_hash: str = values["key_hash"]
        self.server_ids: str = values["server_ids"]

    @property
    def bits(self) -> int:
        return 32

    @property
    def label(self) -> str:
        parts = [self.name]
        if self.key_hash != KEY_HASHES[0]:
            parts.append(self.key_hash)
        if self.server_ids != SERVER_IDS[0]:
            parts.append(f"ids={self.server_ids}")
        return " ".join(parts)

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        for server in servers:
            if server.weight != int(server.weight) or not 0 <= server.weight <= MAX_WEIGHT:
                return (f"integer weights 0..{MAX_WEIGHT}, as HAProxy's `weight` "
                        f"(server {server.name!r} has {server.weight})")
        if not any(server.weight for server in servers):
            return "at least one server of positive weight"
        if self.server_ids == "name":
            seen: dict[int, str] = {}
            for server, server_id in zip(servers, server_ids(servers, "name"), strict=True):
                if not 1 <= server_id <= MAX_SERVER_ID:
                    return (f"names ending in an id 1..{MAX_SERVER_ID} for server_ids = 'name' "
                            f"(server {server.name!r})")
                if server_id in seen:
                    return (f"names ending in distinct ids for server_ids = 'name' "
                            f"(servers {seen[server_id]!r} and {server.name!r})")
                seen[server_id] = server.name
        return None

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [BE_WEIGHT_SCALE * int(server.weight) for server in servers]

    def points(self, servers: Sequence[Server]) -> tuple[npt.NDArray[np.uint32],
                                                         npt.NDArray[np.uint16]]:
        """HAProxy's tree itself: the sorted points and their servers' indexes."""
        require_servers(self.name, servers)
        problem = self.check_servers(servers)
        if problem:
            raise HarnessError(f"haproxy: servers must have {problem}")
        counts = self.point_counts(servers)
        ids = server_ids(servers, self.server_ids)
        positions = np.concatenate([point_positions(server_id, count)
                                    for server_id, count in zip(ids, counts, strict=True)])
        owners = np.repeat(np.arange(len(servers), dtype=np.uint16), counts)
        order = np.argsort(positions, kind="stable")
        return positions[order], owners[order]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        points, owners = self.points(servers)
        return Ring.from_points(arc_ends(points), owners, bits=32,
                                servers=tuple(s.name for s in servers))

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
        hashes = sdbm_many(keys)
        return full_hash_many(hashes) if self.key_hash == "sdbm avalanche" else hashes
