"""twemproxy (nutcracker) 0.5.0 with `distribution: ketama`: libmemcached's weighted ketama
continuum, with twemproxy's own point names and key hashes.

From src/hashkit/nc_ketama.c (`ketama_update`, `ketama_dispatch`), src/nc_server.c
(`server_pool_idx`) and src/nc_conf.c (`conf_add_server`) of twitter/twemproxy 0.5.0, the
version Debian packages as `nutcracker` (checked live in tests/live/test_clients_twemproxy.py):

- Points are exactly libmemcached 1.1.4's (our `libmemcached` construction): each server
  gets `floorf((float)(pct * 160 / 4 * (float)N + 1e-10))` MD5 digests of "<name>-<i>", pct
  = weight / total weight in single precision, four little-endian 32-bit points per digest.
  Weights are integers from 1.
- The point name is the server's own `name` when its configuration line gives one
  (`host:port:weight name`): `names = "given"`, the scenario's server name used whole.
  Without one it is the address, and, like libmemcached, twemproxy leaves the port out on
  11211: `names = "address"` (the default), "host-<i>" for "host:11211", "host:port-<i>"
  otherwise.
- Keys are hashed with the pool's `hash` (our `key_hash`, default `fnv1a_64` as
  twemproxy's), while points are always MD5:
  `md5` (the first four bytes of the key's MD5, little-endian, as libketama), `fnv1a_64`
  (twemproxy's own 32-bit variant: harness.core.client_hashes) or `murmur` (MurmurHash2
  seeded with 0xdeadbeef times the key's length). An empty key hashes to 0 (`server_pool_hash`).
- The owner is the first point >= the key's hash, wrapping. Of equal points the server
  listed first wins, as in `libmemcached`: both sort with glibc's qsort, a stable merge
  sort, and take the first of equal points.

So at `key_hash = "md5"` and `names = "address"` it is libmemcached's ring to the key; with
another hash the continuum is the same and the keys land elsewhere (a client hashing keys
with MD5 agrees with it on about 1/N of them), and with named servers the points move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.native import client_hashes as c_client_hashes
from harness.core.params import Param, parse_keywords
from harness.core.servers import Server
from harness.recipes.constructions.libketama import md5_key_hashes
from harness.recipes.constructions.libmemcached import LibmemcachedConstruction

#: the key hashes of twemproxy measured here (its others: crc16, crc32, crc32a, fnv1_32,
#: fnv1_64, fnv1a_32, hsieh, jenkins, one_at_a_time)
#: fnv1a_64 first: twemproxy's default (CONF_DEFAULT_HASH in src/nc_conf.h)
KEY_HASHES = ("fnv1a_64", "md5", "murmur")
#: how its points are named: the address (port 11211 left out) or the configured name
NAMES = ("address", "given")


class TwemproxyConstruction(LibmemcachedConstruction):
    """twemproxy 0.5.0's ketama continuum and key hash."""

    name = "twemproxy"
    params: ClassVar[tuple[Param, ...]] = (
        Param("key_hash", "choice", KEY_HASHES[0],
              "the pool's `hash`, with which keys are hashed (points are always MD5)",
              choices=KEY_HASHES),
        Param("names", "choice", NAMES[0],
              "point names: the server's address, with port 11211 left out, as when the "
              "configuration gives no name; or its name whole (`host:port:weight name`)",
              choices=NAMES),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        self.key_hash: str = values["key_hash"]
        self.names: str = values["names"]
        #: libmemcached's weighted ketama, the continuum twemproxy builds
        self.mode = "weighted"

    @property
    def label(self) -> str:
        parts = [self.name]
        if self.key_hash != KEY_HASHES[0]:
            parts.append(self.key_hash)
        if self.names != NAMES[0]:
            parts.append(f"names={self.names}")
        return " ".join(parts)

    def point_prefixes(self, servers: Sequence[Server]) -> list[str]:
        if self.names == "given":
            return [server.name for server in servers]
        return super().point_prefixes(servers)

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
        if self.key_hash == "md5":
            hashes = md5_key_hashes(keys)
        else:
            hashes = c_client_hashes.twemproxy_hash_many(keys, self.key_hash)
        if not all(keys):  # one pass in C; the mask is built only when some key is empty
            hashes[[i for i, key in enumerate(keys) if not key]] = 0
        return hashes
