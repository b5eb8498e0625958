"""What the algorithms over numbered buckets share: jump and the range hashes
(`range_hash`), and those that remove any server in place (`removable`).

Server i is bucket i (as first built, for the removable ones); servers have no weights;
a key is hashed with xxHash64, seed 0, the key hash jump and maglev take too; and each
server's share is equal only in expectation over key hashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from harness.core.hashing import xxh64_many
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm, unweighted_problem


class Buckets(OneForm):
    """An algorithm over buckets numbered as the servers, with no weights."""

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return unweighted_problem(cls.name, servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return len(servers)

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return cls.name

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        # The buckets: one per server, none of them stored.
        return len(self._servers)

    @property
    def entry_size(self) -> int:
        # None stored a bucket (memento's only once one is removed; dx's one bit a slot,
        # less than a byte, rounded to none).
        return 0

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return xxh64_many(keys)

    def exact_shares(self) -> None:
        # Shares are equal only in expectation over key hashes; no structure fixes them.
        return None
