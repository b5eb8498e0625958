"""A third-party plugin, as a user would write one: a layout, an algorithm and a table
metric of their own.

Installed by the tests (tests/unit/test_plugins.py) with a distribution's metadata
declaring the entry points `ring_harness.layouts`, `ring_harness.algorithms` and
`ring_harness.metrics`. Each class subclasses the harness's base class (`LayoutBase`,
`Routing`, `MetricBase`), which gives it the defaults of the protocol's optional members.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.hashing import hash_many
from harness.core.params import parse_keywords
from harness.core.servers import Server, server_list_problem
from harness.core.tables import Section, Table, count, pct, text
from harness.metrics.base import MetricBase, Reference, ScenarioView
from harness.recipes.algorithms.base import Algorithm, Routing
from harness.recipes.layouts.base import LayoutBase

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.metrics.context import RunContext, RunPlan, Scope


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


@dataclass
class DemoTopShare:
    """What the demo metric records for one sweep point."""

    #: the most loaded servers counted
    top: int
    #: the share of the keys they own
    share: float


@dataclass(frozen=True)
class DemoTopShareOptions:
    top: int


class DemoTopShareMetric(MetricBase):
    """The share of the keys the `top` most loaded servers own: a table metric, configured
    and turned on by `[demo_top_share]`, with a rule of its own across the scenario."""

    name: ClassVar[str] = "demo_top_share"
    table: ClassVar[str] = "demo_top_share"
    reference: ClassVar[Reference] = Reference(tables={
        "demo_top_share": "The share of the keys the most loaded servers own."})
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = DemoTopShare

    def parse_options(self, table: Fields) -> DemoTopShareOptions:
        options = DemoTopShareOptions(table.take_int("top", 1, minimum=1))
        table.finish()
        return options

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        servers = len(scenario.ring_servers())
        if options.top > servers:
            raise ScenarioError(f"{top.file}: demo_top_share.top must be at most the servers "
                                f"on the ring ({servers}) (got {options.top})")

    def steps(self, plan: RunPlan) -> int:
        return 0

    def measure(self, context: RunContext) -> DemoTopShare:
        options = context.options[self.name]
        keys = np.bincount(context.owners, minlength=len(context.servers))
        top = np.sort(keys)[::-1][:options.top]
        return DemoTopShare(options.top, float(top.sum() / len(context.owners)))

    def sections(self, result: Result) -> list[Section]:
        rows = [[text(run.label), count(figure.top), pct(figure.share)]
                for run in result.runs if (figure := run.figure(self.name)) is not None]
        if not rows:
            return []
        return [Section("Most loaded servers", tables=[Table.of(
            ["ring", "servers", "share of keys"], rows)])]
