"""Range scans: how many servers one scan of consecutive keys touches, and what adding
capacity moves, for every algorithm.

A range scan reads the keys between two bounds in key order. Hashing scatters
neighbouring keys across the fleet, so a scan of W keys touches about
`sum_s 1 - (1 - p_s)**W` servers (p_s: server s's share of the keys), nearly all of them
once W is a few times the fleet; range partitioning keeps them together, so it touches one
server plus one per range boundary crossed. That is why range stores (Bigtable, HBase,
Spanner, CockroachDB) do not hash their keys.

`[range_scans]` sorts the run's distinct keys in byte order and draws `scans` scans of
each width in `widths` (their first key uniform, seeded), each touching the owners of
`width` consecutive keys. For each width: the mean, 99th percentile and largest count of
servers touched, beside the count if every key were placed independently by the same
shares. Then what adding capacity moves: for every algorithm, the keys that change owner
when one server joins the fleet (the recipe rebuilt); for range partitioning, also the
keys a split of the largest range moves when one half goes to the least-loaded server
(the split itself moves none) and a merge of the two smallest adjacent ranges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.cost import Cost
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.core.tables import Answer, Section, Table, count, literal, pct, text
from harness.metrics.base import (
    NOTHING_MORE,
    MetricBase,
    Reference,
    ScenarioView,
    Working,
    answered_runs,
)
from harness.metrics.comparison.options import RecipeSpec, take_recipes
from harness.metrics.comparison.tables import NOT_SUPPORTED
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.cost import recipe_cost
from harness.recipes.algorithms.range_partition import RangePartition

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result
    from harness.metrics.base import RunShape
    from harness.metrics.context import RunContext, RunPlan, Scope

#: bytes per key: its place in the byte order (an int64 index and a Python list's item
#: and int while sorted), its owner in that order, the set of distinct names; beside its
#: name's bytes twice, priced by the longest name (`RunShape.longest_key_name`): the
#: sorted set, and the buffer the C hashes join them into (`hash_keys`)
BYTES_PER_KEY = 120
#: bytes per server touched in one scan: np.unique's sort of the scan's owners
BYTES_PER_SCANNED_KEY = 16
#: seconds per key sorted (Python's sort of bytes, about 1 us at 200,000) and per key of a
#: scan (numpy's unique over uint16), measured with a margin of 2
SECONDS_PER_KEY = 2e-6
SECONDS_PER_SCANNED_KEY = 4e-8
#: the layout a ring recipe is routed in (every layout routes alike; scans need one)
SCAN_LAYOUT = "numpy-aligned"
#: seconds per scan beyond its keys (one numpy call)
SECONDS_PER_SCAN = 2e-5


@dataclass(frozen=True)
class RangeScansOptions:
    recipes: tuple[RecipeSpec, ...]
    widths: tuple[int, ...] = (10, 100, 1_000)
    scans: int = 1_000
    seed: int = 1


@dataclass(frozen=True)
class ScanWidth:
    width: int
    mean_servers: float
    p99_servers: float
    max_servers: int
    #: expected servers touched if the same shares were drawn key by key, independently
    independent_servers: float


@dataclass(frozen=True)
class RecipeScans:
    label: str
    algorithm: str
    #: why the recipe cannot take the scenario's servers ("" when it can)
    problem: str = ""
    widths: list[ScanWidth] = field(default_factory=list)
    #: share of keys whose owner changes when one server joins (the recipe rebuilt); None
    #: when the recipe cannot take the grown fleet
    add_server_moved: float | None = None
    #: range partitioning: ranges, and the shares of keys a split (one half moved to the
    #: least-loaded server) and a merge of the two smallest adjacent ranges move
    ranges: int | None = None
    split_moved: float | None = None
    merge_moved: float | None = None


@dataclass(frozen=True)
class RangeScans:
    #: distinct keys in byte order that scans run over
    keys: int
    scans: int
    recipes: list[RecipeScans]


def servers_touched(ordered_owners: npt.NDArray[np.uint16], starts: npt.NDArray[np.int64],
                    width: int) -> npt.NDArray[np.int64]:
    """Distinct owners among `width` consecutive keys from each start."""
    return np.array([len(np.unique(ordered_owners[s:s + width])) for s in starts.tolist()],
                    dtype=np.int64)


def independent_servers(shares: npt.NDArray[np.float64], width: int) -> float:
    """Expected distinct servers among `width` keys each placed independently by `shares`."""
    return float(np.sum(1.0 - (1.0 - shares) ** width))


def _joining(servers: Sequence[Server]) -> Server:
    """A server that joins the fleet: a new name, the fleet's median weight."""
    names = {s.name for s in servers}
    index = len(servers)
    while f"joining-{index}" in names:
        index += 1
    return Server(f"joining-{index}", float(np.median([s.weight for s in servers])))


def _range_changes(algorithm: RangePartition, codes: npt.NDArray[np.unsignedinteger],
                   owners: npt.NDArray[np.uint16]) -> tuple[float, float]:
    """Shares of keys moved by a split of the largest range with one half handed to the
    least-loaded server, and by a merge of the two adjacent ranges of fewest keys."""
    sizes = algorithm.range_sizes(codes)
    split = algorithm.split(int(np.argmax(sizes)))
    held = np.bincount(owners, minlength=len(algorithm.servers))
    if split is algorithm:
        split_moved = 0.0
    else:
        right = int(np.argmax(sizes)) + 1
        # The least-loaded other server: the half leaves its server.
        held[algorithm.owners[right - 1]] = np.iinfo(held.dtype).max
        least = int(np.argmin(held))
        split_moved = float(np.mean(split.moved_to(right, least).lookup_many(codes) != owners))
    if algorithm.entries < 2:
        return split_moved, 0.0
    pairs = sizes[:-1] + sizes[1:]
    merged = algorithm.merged(int(np.argmin(pairs)), codes)
    return split_moved, float(np.mean(merged.lookup_many(codes) != owners))


class RangeScansMetric(MetricBase):
    """Servers touched per range scan, and keys moved by adding capacity."""

    name: ClassVar[str] = "range_scans"
    table: ClassVar[str] = "range_scans"
    on_by_default: ClassVar[bool] = False
    reference: ClassVar[Reference] = Reference(
        tables={
            "range_scans": "Servers one scan of consecutive keys touches under every "
                           "algorithm, and what adding capacity moves (a split, for range "
                           "partitioning).",
            "range_scans.algorithms[]": "One entry of `range_scans.algorithms` given as a "
                                        "table: `name` and that algorithm's parameters.",
        },
        # A default recipe is checked as a table of its own.
        aliases={"range_scans.algorithms": "range_scans.algorithms[]"},
        specimens=("""
            [servers]
            count = 4
            [keys]
            count = 500
            [measure]
            metrics = []
            layouts = []
            [range_scans]
            widths = 10
            [[range_scans.algorithms]]
            name = "ring"
            hash = "siphash24-32"
            hash_key = "000102030405060708090a0b0c0d0e0f"
            [[range_scans.algorithms]]
            name = "range"
            range_keys = 50
            sample_count = 500
            """,))
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = RangeScans
    cost_fields: ClassVar[str] = "widths, scans"

    @staticmethod
    def parse_options(table: Fields) -> RangeScansOptions:
        """`[range_scans]`: algorithms, widths, scans, seed."""
        recipes = take_recipes(table, layouts=(SCAN_LAYOUT,))
        widths = table.take_int_or_list("widths", [10, 100, 1_000], minimum=1,
                                        maximum=10**6)
        if len(set(widths)) != len(widths):
            raise table.error("widths", "distinct widths", list(widths))
        options = RangeScansOptions(
            recipes=tuple(recipes),
            widths=tuple(sorted(widths)),
            scans=table.take_int("scans", 1_000, minimum=1, maximum=10**6),
            seed=table.take_int("seed", 1, minimum=0),
        )
        table.finish()
        return options

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """A scan needs as many distinct keys as its width."""
        keys = scenario.keys
        if keys.hash_part != "whole":
            raise ScenarioError(f"{top.file}: range_scans must be left out when keys are "
                                f"routed by a part (keys.hash_part = {keys.hash_part!r}): a "
                                "scan reads consecutive keys, and the run routes only parts")
        distinct = keys.count if keys.distribution == "uniform" else keys.universe
        widest = max(options.widths)
        if widest > distinct:
            raise ScenarioError(f"{top.file}: range_scans.widths must be at most the "
                                f"scenario's distinct keys ({distinct:,}), since a scan "
                                f"reads that many consecutive keys (got {widest:,})")

    @staticmethod
    def _recipe_costs(options: RangeScansOptions, servers: Sequence[Server]) -> list[Cost]:
        """Each recipe built for the fleet and for the fleet plus one server, priced by its
        algorithm (`recipe_cost`), routing the sample twice."""
        grown = [*servers, _joining(servers)]
        return [recipe_cost(r.algorithm, r.params, [servers, grown], keys=0, builds=2,
                            why=f"range_scans.algorithms ({r.label!r})")
                for r in options.recipes]

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """The largest recipe, built twice (the fleet, and the fleet plus one server), and
        one scan's owners sorted by numpy's unique; the keys' own order is `working`."""
        assert isinstance(options, RangeScansOptions)
        built = max((2 * c.peak for c in self._recipe_costs(options, servers)), default=0.0)
        return float(built + BYTES_PER_SCANNED_KEY * max(options.widths))

    def working(self, shape: RunShape) -> Working:
        """The keys in byte order: their places, owners under each recipe and names."""
        if self.name not in shape.options:
            return NOTHING_MORE
        return Working(float((BYTES_PER_KEY + 2 * shape.longest_key_name) * shape.keys))

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        assert isinstance(options, RangeScansOptions)
        scanned = options.scans * sum(options.widths) * len(options.recipes)
        seconds = (SECONDS_PER_SCANNED_KEY * scanned
                   + SECONDS_PER_SCAN * options.scans * len(options.widths)
                   * len(options.recipes)
                   + sum(c.seconds for c in self._recipe_costs(options, servers)))
        return seconds, (f"{len(options.recipes)} recipes, {options.scans:,} scans of widths "
                         f"{list(options.widths)} each")

    def reference_lookups(self, options: Any) -> int:
        """None beyond the run's keys, which each recipe routes twice (`working`)."""
        return 0

    def steps(self, plan: RunPlan) -> int:
        return 1 if self.name in plan.options else 0

    def measure(self, context: RunContext) -> RangeScans | None:
        options = context.options.get(self.name)
        if not isinstance(options, RangeScansOptions):
            return None
        # The distinct names in byte order, held once as bytes: sorting the names by an
        # encoding key held a second copy beside the list (a run of 20,000 keys of 20,000
        # characters peaked 630 MiB above its estimate).
        encoded = sorted({name.encode() for name in context.key_names})
        servers = list(context.servers)
        grown = [*servers, _joining(servers)]
        recipes = []
        for recipe in options.recipes:
            context.stage(f"{context.label}: range scans, {recipe.label}")
            recipes.append(self._recipe(recipe, options, servers, grown, encoded))
        context.advance(1)
        return RangeScans(keys=len(encoded), scans=options.scans, recipes=recipes)

    @staticmethod
    def _recipe(recipe: RecipeSpec, options: RangeScansOptions, servers: list[Server],
                grown: list[Server], keys: list[bytes]) -> RecipeScans:
        cls = get_algorithm(recipe.algorithm)
        problem = cls.check_servers(servers, recipe.params)
        if problem:
            return RecipeScans(recipe.label, recipe.algorithm, problem=f"servers must be "
                               f"{problem}")
        algorithm = cls.from_params(servers, recipe.params)
        codes = algorithm.hash_keys(keys)
        owners = algorithm.lookup_many(codes)
        shares = (np.bincount(owners, minlength=len(servers)) / len(owners)).astype(np.float64)
        # The same starts for every recipe: each is scanned over the same key ranges.
        rng = np.random.default_rng(options.seed)
        widths = []
        for width in options.widths:
            if width > len(keys):
                continue  # zipf requests drew fewer distinct keys than the scan reads
            starts = rng.integers(0, len(keys) - width + 1, size=options.scans)
            touched = servers_touched(owners, starts, width)
            widths.append(ScanWidth(width, float(touched.mean()),
                                    float(np.percentile(touched, 99)), int(touched.max()),
                                    independent_servers(shares, width)))
        add_moved = None
        if not cls.check_servers(grown, recipe.params):
            bigger = cls.from_params(grown, recipe.params)
            add_moved = float(np.mean(bigger.lookup_many(codes) != owners))
        if not isinstance(algorithm, RangePartition):
            return RecipeScans(recipe.label, recipe.algorithm, widths=widths,
                               add_server_moved=add_moved)
        split_moved, merge_moved = _range_changes(algorithm, codes, owners)
        return RecipeScans(recipe.label, recipe.algorithm, widths=widths,
                           add_server_moved=add_moved, ranges=algorithm.entries,
                           split_moved=split_moved, merge_moved=merge_moved)

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the servers one scan of the widest width touches under range
        partitioning against the hashing algorithms, and the keys a split moves against a
        server joining."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            record: RangeScans = run.figure(self.name)
            section = (f"Range scans ({literal(run.label)})" if len(result.runs) > 1
                       else "Range scans")
            widths = [w.width for r in record.recipes for w in r.widths]
            if not widths:
                continue
            widest = max(widths)
            scanned = {r.label: w.mean_servers for r in record.recipes for w in r.widths
                       if w.width == widest}
            ranged = [r for r in record.recipes if r.ranges is not None and r.label in scanned]
            hashed = [scanned[r.label] for r in record.recipes
                      if r.ranges is None and r.label in scanned]
            for r in ranged:
                own = f"{scanned[r.label]:.2f}"
                line = (f"A scan of {widest:,} consecutive keys touches {own} servers with "
                        f"range partitioning ({literal(r.label)})")
                figures: tuple[str, ...] = (own,)
                if hashed:
                    low, high = f"{min(hashed):.2f}", f"{max(hashed):.2f}"
                    spread = low if low == high else f"{low} to {high}"
                    line += (f", against {spread} with hashing ({len(hashed)} "
                             f"recipe{'s' if len(hashed) > 1 else ''})")
                    figures += (low, high)
                lines.append(Answer(section, line + ".", figures))
                if r.split_moved is not None and r.add_server_moved is not None:
                    split, join = pct(r.split_moved).text, pct(r.add_server_moved).text
                    lines.append(Answer(section, (
                        f"Range partitioning ({literal(r.label)}): a split moves {split} of "
                        f"keys, a server joining {join}."), (split, join)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            record: RangeScans | None = run.figure(self.name)
            if record is not None:
                sections.append(self._section(run.label, record, len(result.runs) > 1))
        return sections

    @staticmethod
    def _section(label: str, record: RangeScans, named: bool) -> Section:
        widths = sorted({w.width for r in record.recipes for w in r.widths})
        rows, moves, chart_rows = [], [], []
        for r in record.recipes:
            by_width = {w.width: w for w in r.widths}
            row = [text(r.label)]
            for width in widths:
                w = by_width.get(width)
                # A recipe the fleet does not suit scanned nothing (its note says why); a
                # width left out of one it suits was wider than the keys zipf drew.
                missing = NOT_SUPPORTED if r.problem else f"more than the {record.keys:,} keys"
                row.append(text(missing) if w is None else text(
                    f"{w.mean_servers:.2f} (p99 {w.p99_servers:g}, max {w.max_servers:,}; "
                    f"key by key {w.independent_servers:.2f})"))
                if w is not None:
                    chart_rows.append({"recipe": r.label, "width": f"{width:,} keys",
                                       "servers": w.mean_servers,
                                       "label": f"{w.mean_servers:.1f}"})
            rows.append(row)
            moves.append([text(r.label),
                          pct(r.add_server_moved) if r.add_server_moved is not None
                          else text(NOT_SUPPORTED),
                          count(r.ranges) if r.ranges is not None else text("-"),
                          pct(r.split_moved) if r.split_moved is not None else text("-"),
                          pct(r.merge_moved) if r.merge_moved is not None else text("-")])
        notes = [f"Servers touched by one scan of consecutive keys, mean over {record.scans:,} "
                 f"scans of the run's {record.keys:,} distinct keys in byte order (first key "
                 "drawn uniformly, the same scans for every recipe), with the 99th percentile "
                 "and the most. \"Key by key\" is the count expected if every key went to a "
                 "server independently, by the same shares: what hashing gives."]
        notes += [f"{r.label}: {NOT_SUPPORTED}: {r.problem}." for r in record.recipes
                  if r.problem]
        scans = Table.of(["recipe", *(f"servers per scan of {w:,} keys" for w in widths)],
                         rows, notes=notes)
        capacity = Table.of(
            ["recipe", "keys moved: one server joins", "ranges", "keys moved: a split",
             "keys moved: a merge"],
            moves,
            notes=["One server joins: the recipe rebuilt for the fleet plus one server of "
                   "the median weight. A split cuts the largest range at its sample median "
                   "and hands one half to the least-loaded server (the cut alone moves "
                   "nothing); a merge joins the two adjacent ranges of fewest keys on the "
                   "larger one's server. \"-\": not range partitioning."])
        chart = charts.grouped_bars(
            "Servers touched per range scan (mean)", chart_rows, category="width",
            group="recipe", value="servers", value_title="servers touched", label="label")
        title = f"Range scans ({literal(label)})" if named else "Range scans"
        return Section(title, tables=[scans, capacity], charts=[chart])
