"""A third-party plugin, as a user would write one: a layout and an algorithm of their own.

Installed by the tests (tests/test_plugins.py) with a distribution's metadata
declaring the entry points `ring_harness.layouts` and `ring_harness.algorithms`.
Each class subclasses the harness's base class (`LayoutBase`, `Routing`), which
gives it the defaults of the protocol's optional members.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.core.fields import Fields
from harness.core.hashing import hash_many
from harness.core.params import parse_keywords
from harness.core.servers import Server, server_list_problem
from harness.recipes.algorithms.base import Algorithm, Routing
from harness.recipes.layouts.base import LayoutBase


class DemoBisectLayout(LayoutBase):
    """A ring held in two Python lists, searched with bisect."""

    name = "demo-bisect"
    hash_bits = 32

    def __init__(self, positions: list[int], owners: list[int]) -> None:
        self._positions, self._owners = positions, owners

    @classmethod
    def build(cls, positions: Any, owners: Any) -> DemoBisectLayout:
        return cls(positions.tolist(), owners.tolist())

    @property
    def entries(self) -> int:
        return len(self._positions)

    @property
    def entry_size(self) -> int:
        return 16

    @property
    def nbytes(self) -> int:
        return 16 * len(self._positions)

    def lookup(self, key_hash: int) -> int:
        i = bisect.bisect_left(self._positions, key_hash)
        return self._owners[0] if i == len(self._positions) else self._owners[i]

    def lookup_many(self, key_hashes: Any) -> Any:
        return np.array([self.lookup(int(h)) for h in key_hashes], dtype=np.uint16)


class DemoModuloAlgorithm(Routing):
    """hash mod N: the baseline every consistent hash is compared against."""

    name = "demo-modulo"

    def __init__(self, servers: Sequence[Server]) -> None:
        self._servers = tuple(servers)

    @classmethod
    def parse_params(cls, fields: Fields) -> dict[str, Any]:
        return {}

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return server_list_problem(servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return len(servers)

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return "mod N"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> DemoModuloAlgorithm:
        parse_keywords(f"algorithm {cls.name!r}", (), params)
        return cls(servers)

    servers = property(lambda self: self._servers)
    params = property(lambda self: {})
    form = property(lambda self: self.name)
    key_bits = property(lambda self: 32)
    entries = property(lambda self: len(self._servers))
    entry_size = property(lambda self: 0)
    nbytes = property(lambda self: 0)

    def hash_keys(self, keys: Sequence[bytes]) -> Any:
        return hash_many("blake2b-32", keys)

    def lookup(self, key_hash: int) -> int:
        return key_hash % len(self._servers)

    def lookup_many(self, key_hashes: Any) -> Any:
        return (key_hashes % len(self._servers)).astype(np.uint16)

    def reference_owners(self, key_hashes: Any) -> Any:
        return self.lookup_many(key_hashes)

    def reference_lookup_many(self, key_hashes: Any) -> list[int]:
        return [int(h) % len(self._servers) for h in key_hashes]

    def forms(self, names: Sequence[str]) -> dict[str, Algorithm]:
        return {self.name: self}  # type: ignore[dict-item]  # properties as lambdas

    def exact_shares(self) -> None:
        return None
