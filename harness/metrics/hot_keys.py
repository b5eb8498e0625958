"""Hot keys: the busiest server under zipf traffic, and three remedies, replayed request by
request.

Even placement is not even traffic: under zipf popularity one object can carry
more requests than a server's whole fair share, and the ring cannot spread one
key. `[hot_keys]` draws `requests` requests over `universe` objects
("object-{i}", popularity rank**-zipf_exponent, seeded) and routes them four ways:

- **primary**: every request to the object's owner (the plain ring: the load metric's
  figure for this stream);
- **replicas**: each read to one of the object's `copies` replicas, drawn uniformly (the
  preference lists of `harness.recipes.replication`);
- **split**: the `top_keys` most requested objects each split into `sub_keys` sub-keys
  ("object-{i}#{s}", each hashed and placed on its own), a request to one of them going
  to a sub-key drawn uniformly; the rest as primary;
- **front cache**: one LRU cache of `cache_objects` objects in front of the fleet
  (`harness.core.cache_model`, the C replay): hits never reach a server, misses go to
  the owner.

For each: the busiest server's requests per unit weight over the mean (peak-to-mean),
the CV, and the busiest server's share of the requests that reached the fleet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.cache_model import lru_misses
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.native.lru import lru_workspace_bytes
from harness.core.servers import Server
from harness.core.tables import Answer, Section, Table, count, literal, number, pct, text
from harness.metrics.base import (
    NOTHING_MORE,
    MetricBase,
    Reference,
    ScenarioView,
    Working,
    answered_runs,
)
from harness.metrics.migration.metric import zipf_stream
from harness.recipes.replication import ReplicaPlacement, replication_problem

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result
    from harness.metrics.base import RunShape
    from harness.metrics.context import RunContext, RunPlan, Scope

#: bytes per object: its encoded name and hash (about 110), owner and copies (2 per copy)
BYTES_PER_OBJECT = 120
#: bytes per request: the drawn object (4), its int64 index while drawn (8), four routed
#: streams (2 each) with one int64 temporary (8), the replica draw (8), the miss flag (1)
BYTES_PER_REQUEST = 40
#: seconds per request (the draw, four routings, the LRU replay) and per object (naming
#: and hashing), measured at 2M requests over 100,000 objects, with a margin of 2
SECONDS_PER_REQUEST = 2e-7
SECONDS_PER_OBJECT = 2e-6


@dataclass(frozen=True)
class HotKeysOptions:
    universe: int = 100_000
    requests: int = 1_000_000
    zipf_exponent: float = 1.0
    copies: int = 3
    top_keys: int = 100
    sub_keys: int = 8
    cache_objects: int = 1_000
    seed: int = 1


@dataclass(frozen=True)
class Policy:
    name: str
    #: requests that reached a server (all but the front cache's hits)
    fleet_requests: int
    peak_to_mean: float
    cv: float
    hottest_share: float


@dataclass(frozen=True)
class HotKeys:
    universe: int
    requests: int
    zipf_exponent: float
    copies: int
    top_keys: int
    sub_keys: int
    cache_objects: int
    #: the single most requested object's share of all requests
    hottest_object_share: float
    cache_hit_ratio: float
    policies: list[Policy]


def policy_load(name: str, servers_hit: npt.NDArray[np.integer],
                weights: npt.NDArray[np.float64]) -> Policy:
    """Figures of the requests that reached the fleet, each given as its server."""
    requests = np.bincount(servers_hit.astype(np.int64), minlength=len(weights))
    per_weight = requests / weights
    mean = per_weight.mean()
    total = int(requests.sum())
    return Policy(name, total, float(per_weight.max() / mean), float(per_weight.std() / mean),
                  float(requests.max() / total))


class HotKeysMetric(MetricBase):
    """The busiest server under zipf traffic: primary only, reads over replicas, hot keys
    split into sub-keys, and a front cache."""

    name: ClassVar[str] = "hot_keys"
    table: ClassVar[str] = "hot_keys"
    reference: ClassVar[Reference] = Reference(tables={
        "hot_keys": "Zipf traffic replayed four ways: primary only, reads over replicas, hot "
                    "keys split into sub-keys, a front cache.",
    })
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = HotKeys
    cost_fields: ClassVar[str] = "universe, requests, copies, cache_objects"

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """Reads spread over replicas: an algorithm with replica sets, and servers enough."""
        for recipe in scenario.recipes():
            reason = replication_problem(recipe.algorithm)
            if reason:
                raise ScenarioError(f"{top.file}: hot_keys must be left out for "
                                    f"{recipe.algorithm}, whose reads it spreads over "
                                    f"replicas: {reason}")
        servers = len(scenario.ring_servers())
        if options.copies > servers:
            raise ScenarioError(f"{top.file}: hot_keys.copies must be at most the servers on "
                                f"the ring ({servers}), since each copy needs its own (got "
                                f"{options.copies})")

    @staticmethod
    def parse_options(table: Fields) -> HotKeysOptions:
        """`[hot_keys]`: universe, requests, zipf_exponent, copies, top_keys, sub_keys,
        cache_objects, seed."""
        options = HotKeysOptions(
            universe=table.take_int("universe", 100_000, minimum=1, maximum=10**8),
            requests=table.take_int("requests", 1_000_000, minimum=1, maximum=10**9),
            zipf_exponent=table.take_number("zipf_exponent", 1.0),
            copies=table.take_int("copies", 3, minimum=1, maximum=64),
            top_keys=table.take_int("top_keys", 100, minimum=0, maximum=10**6),
            sub_keys=table.take_int("sub_keys", 8, minimum=1, maximum=1024),
            cache_objects=table.take_int("cache_objects", 1_000, minimum=1, maximum=10**8),
            seed=table.take_int("seed", 1, minimum=0),
        )
        table.finish()
        return options

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """Names, hashes and copies per object and per sub-key; the request streams; the
        front cache's LRU workspace."""
        assert isinstance(options, HotKeysOptions)
        objects = options.universe + options.top_keys * options.sub_keys
        return float(objects * (BYTES_PER_OBJECT + 2 * options.copies)
                     + BYTES_PER_REQUEST * options.requests
                     + lru_workspace_bytes(1, options.cache_objects))

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        assert isinstance(options, HotKeysOptions)
        objects = options.universe + options.top_keys * options.sub_keys
        seconds = SECONDS_PER_REQUEST * options.requests + SECONDS_PER_OBJECT * objects
        return seconds, f"{options.requests:,} requests over {objects:,} objects"

    def working(self, shape: RunShape) -> Working:
        """On a ring, the per-point table of R replicas (uint16 each)."""
        options = shape.options.get(self.name)
        if not isinstance(options, HotKeysOptions) or not shape.ring_array_bytes:
            return NOTHING_MORE
        return Working(2.0 * options.copies * shape.entries)

    def reference_lookups(self, options: Any) -> int:
        """Every object placed once, and every sub-key."""
        assert isinstance(options, HotKeysOptions)
        return options.universe + options.top_keys * options.sub_keys

    def steps(self, plan: RunPlan) -> int:
        return 1 if self.name in plan.options else 0

    def measure(self, context: RunContext) -> HotKeys | None:
        options = context.options.get(self.name)
        if not isinstance(options, HotKeysOptions):
            return None
        algorithm = context.algorithm
        weights = np.array([s.weight for s in context.servers], dtype=np.float64)
        context.stage(f"{context.label}: hot keys, {options.requests:,} requests")
        hashes = algorithm.hash_keys([f"object-{i}".encode() for i in range(options.universe)])
        lists = ReplicaPlacement(algorithm, options.copies).lists(hashes)
        owner = lists[:, 0]
        stream = zipf_stream(options.universe, options.zipf_exponent, options.requests,
                             options.seed)
        rng = np.random.default_rng(options.seed + 1)
        primary = owner[stream]
        spread = lists[stream, rng.integers(0, options.copies, size=len(stream))]
        requested = np.bincount(stream, minlength=options.universe)
        hot = np.argsort(-requested, kind="stable")[:options.top_keys]
        split = primary.copy()
        if len(hot):
            sub_names = [f"object-{i}#{s}".encode() for i in hot.tolist()
                         for s in range(options.sub_keys)]
            sub_owner = algorithm.reference_owners(algorithm.hash_keys(sub_names)).reshape(
                len(hot), options.sub_keys)
            slot = np.full(options.universe, -1, dtype=np.int64)
            slot[hot] = np.arange(len(hot))
            to_hot = np.flatnonzero(slot[stream] >= 0)
            split[to_hot] = sub_owner[slot[stream[to_hot]],
                                      rng.integers(0, options.sub_keys, size=len(to_hot))]
        misses = lru_misses(np.zeros(len(stream), dtype=np.uint16), stream, 1,
                            options.cache_objects)
        policies = [policy_load("primary", primary, weights),
                    policy_load(f"reads over {options.copies} replicas", spread, weights),
                    policy_load(f"top {options.top_keys} split in {options.sub_keys}", split,
                                weights),
                    policy_load(f"front cache of {options.cache_objects:,}", primary[misses],
                                weights)]
        context.advance(1)
        return HotKeys(universe=options.universe, requests=options.requests,
                       zipf_exponent=options.zipf_exponent, copies=options.copies,
                       top_keys=options.top_keys, sub_keys=options.sub_keys,
                       cache_objects=options.cache_objects,
                       hottest_object_share=float(requested.max() / options.requests),
                       cache_hit_ratio=float(1 - misses.mean()), policies=policies)

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the policy that keeps the busiest server coolest, against
        routing every request to its primary."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            record: HotKeys = run.figure(self.name)
            best = min(record.policies, key=lambda p: p.peak_to_mean)
            first = record.policies[0]
            peak, against = number(best.peak_to_mean).text, number(first.peak_to_mean).text
            figures: tuple[str, ...] = (peak,)
            line = (f"{literal(run.label)}: under zipf {record.zipf_exponent:g} traffic, "
                    f"{literal(best.name)} keeps the busiest server at {peak}x the mean")
            if best is not first:
                line += f", against {against}x with {literal(first.name)}"
                figures += (against,)
            lines.append(Answer(f"Hot keys ({literal(run.label)})", line + ".", figures))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            record: HotKeys | None = run.figure(self.name)
            if record is None:
                continue
            table = Table.of(
                ["policy", "requests to the fleet", "peak-to-mean", "cv", "hottest share"],
                [[text(p.name), count(p.fleet_requests), number(p.peak_to_mean), pct(p.cv),
                  pct(p.hottest_share)] for p in record.policies],
                notes=[f"{record.requests:,} requests, zipf exponent "
                       f"{record.zipf_exponent:g} over {record.universe:,} objects; the "
                       f"hottest object alone is {100 * record.hottest_object_share:.2f}% "
                       f"of them. The front cache served "
                       f"{100 * record.cache_hit_ratio:.1f}% of requests; the other figures "
                       "are over the requests that reached a server."])
            chart = charts.bars(
                f"Busiest server's load over the mean ({run.label})",
                [{"policy": p.name, "peak": p.peak_to_mean, "label": f"{p.peak_to_mean:.3f}"}
                 for p in record.policies],
                category="policy", value="peak", value_title="peak-to-mean", label="label")
            sections.append(Section(f"Hot keys ({literal(run.label)})", tables=[table],
                                    charts=[chart]))
        return sections
