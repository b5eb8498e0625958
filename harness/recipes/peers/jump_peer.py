"""PyPI jump-consistent-hash (`jump.hash(key, num_buckets)`, C) as a peer.

The library implements Lamping & Veach's loop on a 64-bit integer key; it
does not hash strings. `lookup_key` therefore hashes the key as our `jump`
algorithm does (xxHash64, seed 0) and asks `jump.hash` for the bucket, so the
two agree on every key (`exact`); `lookup_hash` is `jump.hash` alone, timed
on precomputed hashes to set our whole route (hashing included) beside the
library's bare call.

No weights, and no structure: memory is nothing beyond the server count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self

from harness.core.errors import HarnessError
from harness.core.hashing import xxh64
from harness.core.servers import Server
from harness.recipes.peers.pymemcache_peer import unweighted_servers_problem
from harness.recipes.peers.sizing import per_server_bytes


class JumpConsistentHashPeer:
    """jump.hash over the servers as buckets 0..N-1, in configuration order."""

    name: ClassVar[str] = "jump-consistent-hash"
    #: the Python package it wraps: (module imported, requirement pip installs)
    package: ClassVar[tuple[str, str]] = ("jump", "jump-consistent-hash>=3.6")
    agrees_with: ClassVar[dict[str, Any] | None] = {"algorithm": "jump"}
    exact: ClassVar[bool] = True
    agreement_note: ClassVar[str] = ""

    def __init__(self, jump_hash: Callable[[int, int], int], buckets: int) -> None:
        self._jump_hash, self._buckets = jump_hash, buckets

        def lookup_hash(key_hash: int) -> int:
            return jump_hash(key_hash, buckets)

        self.lookup_hash = lookup_hash

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server]) -> float:
        """No ring, only a bucket count (656 bytes measured at 100 servers): 64 a server."""
        return per_server_bytes(servers, 64)

    @classmethod
    def check_servers(cls, servers: Sequence[Server]) -> str | None:
        return unweighted_servers_problem("jump-consistent-hash", servers)

    @classmethod
    def build(cls, servers: Sequence[Server]) -> Self:
        problem = cls.check_servers(servers)
        if problem:
            raise HarnessError(f"peer {cls.name!r}: needs {problem}")
        try:
            import jump
        except ImportError:
            raise HarnessError(f"peer {cls.name!r} needs jump-consistent-hash: "
                               "pip install -e '.[test]'") from None
        return cls(jump.hash, len(servers))

    @property
    def entries(self) -> int:
        return self._buckets

    @property
    def nbytes(self) -> int:
        return 0

    @staticmethod
    def hash_key(key: str) -> int:
        return xxh64(key.encode())

    def lookup_key(self, key: str) -> int:
        return self._jump_hash(xxh64(key.encode()), self._buckets)
