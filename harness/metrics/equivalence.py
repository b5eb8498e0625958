"""Equivalence: how many random points per server give the balance of a recipe's few.

Hashed (random) points balance only as 1/sqrt(k): a server of weight w holding
k w of them owns a Beta share, so over N servers `cv_arcs` is close to
c / sqrt(k) with c**2 = mean(1/w) - 1/sum(w) (1 - 1/N for equal weights;
docs/design.md, section 5). A recipe that chooses its positions (allocated
tokens) does better with far fewer. This metric measures both on stated
fleets and answers, for each of the recipe's rows: which random k gives the
same `cv_arcs`, and how many more entries (hence bytes, in any one layout)
that random ring holds.

For each fleet (a server count and a cycle of weights), it builds:
- the scenario's recipe at each of `points_per_weight`;
- the `[equivalence.against]` recipe (random points) at each of its
  `points_per_weight`, a log-spaced sweep.
Only the rings' exact arc shares are needed (no lookups), so each ring is
held in no layout. Rings over `max_points` points (each side has its own cap,
stated in the scenario and the result) are not built: random rings cost time
and memory in proportion to their points, the allocator more than that.

The random k with the same CV is read off the measured random curve,
interpolated linearly in log k against log cv between the two measured
points around it; outside the measured range it comes from the fitted law
c / sqrt(k) (c fitted in log space with the slope fixed at -1/2 over every
measured random ring), and is marked extrapolated. Both values are recorded.
The memory ratio is the random ring's points at that k (k x total weight)
over the recipe's entries: at equal bytes per entry, the ratio of their sizes.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness.core import charts
from harness.core.cost import Cost
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.servers import Server, fleet_servers
from harness.core.tables import (
    Answer,
    Cell,
    Chart,
    Section,
    Table,
    count,
    literal,
    number,
    pct,
    text,
)
from harness.metrics.base import MetricBase, Reference, RunShape, ScenarioView, Working
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.ring import NO_LAYOUT, RingAlgorithm
from harness.recipes.constructions.generator import GENERATION_BYTES_PER_POINT, points_for

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.algorithms.base import Algorithm

INTERPOLATED = "interpolated"
EXTRAPOLATED = "fit, extrapolated"
#: a random ring of more points than positions cannot exist in 32 bits
BEYOND_32_BITS = "fit, beyond any 32-bit ring"


@dataclass(frozen=True)
class Fleet:
    """`servers` servers named server-0, server-1, ..., weights cycling through `weights`."""
    servers: int
    weights: tuple[float, ...] = (1.0,)

    def server_list(self) -> list[Server]:
        return fleet_servers(self.servers, self.weights)

    @property
    def label(self) -> str:
        if set(self.weights) == {1.0}:
            return f"N = {self.servers:,}, equal weights"
        return f"N = {self.servers:,}, weights " + ":".join(f"{w:g}" for w in self.weights)


@dataclass(frozen=True)
class EquivalenceOptions:
    fleets: tuple[Fleet, ...]
    #: the scenario's recipe is built at each of these (default: the run's own)
    points_per_weight: tuple[int, ...]
    max_points: int
    #: the random-points recipe (ring parameters) and its sweep
    against: dict[str, Any]
    against_points_per_weight: tuple[int, ...]
    against_max_points: int


@dataclass
class CurvePoint:
    """One ring of a sweep: its size and exact balance."""
    points_per_weight: int
    #: before collisions, and the ring's entries after
    points: int
    entries: int
    cv_arcs: float
    peak_to_mean: float
    build_s: float


@dataclass
class EquivalentRow:
    """One ring of the recipe, and the random ring of the same cv_arcs."""
    ring: CurvePoint
    #: random points per unit weight of the same cv_arcs; None where the CV is 0
    random_k: float | None
    #: INTERPOLATED, EXTRAPOLATED or BEYOND_32_BITS
    method: str
    #: the same from the fitted law, for every row
    random_k_fit: float | None
    #: random points at random_k (k x total weight), and their ratio to ring.entries
    random_points: float | None
    memory_ratio: float | None


@dataclass
class FleetEquivalence:
    label: str
    servers: int
    weights: list[float]
    random: list[CurvePoint]
    #: swept points per weight not built: over max_points
    random_not_built: list[int]
    rows: list[EquivalentRow]
    rows_not_built: list[int]
    #: cv_arcs ~ c / sqrt(k), fitted on `random`, and the Beta-share value of c
    fit_c: float | None
    theory_c: float
    #: largest |measured / fitted - 1| over the random rings
    fit_worst_error: float | None


@dataclass
class Equivalence:
    recipe: str
    against: dict[str, Any]
    max_points: int
    against_max_points: int
    fleets: list[FleetEquivalence]


def theory_c(weights: Sequence[float]) -> float:
    """c of cv ~ c / sqrt(k) for random points: sqrt(mean(1/w) - 1/sum(w))."""
    w = np.asarray(weights, dtype=np.float64)
    return math.sqrt(float(np.mean(1 / w) - 1 / w.sum()))


def fit_c(curve: Sequence[CurvePoint]) -> float | None:
    """Least squares in log space with the slope fixed at -1/2: log c = mean(log cv + log k / 2)."""
    usable = [p for p in curve if p.cv_arcs > 0]
    if not usable:
        return None
    return math.exp(sum(math.log(p.cv_arcs) + 0.5 * math.log(p.points_per_weight)
                        for p in usable) / len(usable))


def interpolated_k(curve: Sequence[CurvePoint], target: float) -> float | None:
    """The k of `target` CV on the measured curve, linear in log k against log cv between the
    first two neighbouring points (by k) that bracket it; None outside the measured range."""
    ordered = sorted((p for p in curve if p.cv_arcs > 0), key=lambda p: p.points_per_weight)
    for a, b in itertools.pairwise(ordered):
        high, low = max(a.cv_arcs, b.cv_arcs), min(a.cv_arcs, b.cv_arcs)
        if low <= target <= high:
            if a.cv_arcs == b.cv_arcs:
                return float(a.points_per_weight)
            t = (math.log(target) - math.log(a.cv_arcs)) / (
                math.log(b.cv_arcs) - math.log(a.cv_arcs))
            return math.exp(math.log(a.points_per_weight)
                            + t * (math.log(b.points_per_weight) - math.log(a.points_per_weight)))
    return None


def equivalent(ring: CurvePoint, curve: Sequence[CurvePoint], c: float | None,
               total_weight: float) -> EquivalentRow:
    by_fit = (c / ring.cv_arcs) ** 2 if c is not None and ring.cv_arcs > 0 else None
    by_curve = interpolated_k(curve, ring.cv_arcs) if ring.cv_arcs > 0 else None
    random_k = by_curve if by_curve is not None else by_fit
    method = INTERPOLATED if by_curve is not None else EXTRAPOLATED
    if by_curve is None and by_fit is not None and by_fit * total_weight > 2**32:
        method = BEYOND_32_BITS
    points = None if random_k is None else random_k * total_weight
    return EquivalentRow(ring, random_k, method, by_fit, points,
                         None if points is None else points / ring.entries)


def measure_ring(build: Any, fleet: list[Server], params: dict[str, Any]) -> CurvePoint:
    """Build one ring (held in no layout) and read its exact balance."""
    started = time.perf_counter()
    algorithm: Algorithm = build(fleet, params)
    build_s = time.perf_counter() - started
    shares = algorithm.exact_shares()
    assert shares is not None, "equivalence compares rings, which have exact shares"
    load = shares / np.array([s.weight for s in fleet])
    ring = algorithm.ring
    points = sum(points_for(s.weight, params["points_per_weight"]) for s in fleet)
    return CurvePoint(params["points_per_weight"], points,
                      ring.entries if ring is not None else algorithm.entries,
                      float(load.std() / load.mean()), float(load.max() / load.mean()),
                      round(build_s, 3))


class EquivalenceMetric(MetricBase):
    """The random points per server that match a recipe's balance, and what they cost."""

    cost_fields: ClassVar[str] = "max_points, against.max_points"

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """One ring at a time, of at most the larger cap of points, generated in C and read
        for its arc shares (8 bytes per point beside it)."""
        assert isinstance(options, EquivalenceOptions)
        points = max(options.max_points, options.against_max_points)
        return float((GENERATION_BYTES_PER_POINT + 8) * points)

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """Its bytes (`estimated_bytes`), and the seconds of every ring it builds, one
        after another: on each fleet, the random recipe at each of its points per weight
        and the run's recipe at each of its own, within their caps, each priced by its
        algorithm's build (`Algorithm.estimated_build_seconds`)."""
        found = super().cost(shape, servers, working)
        options = shape.options.get(self.name)
        if not isinstance(options, EquivalenceOptions) or not shape.algorithm:
            return found
        own = {**shape.params, "layout": NO_LAYOUT}
        against = {"construction": "points", **options.against, "layout": NO_LAYOUT}
        recipes = ((shape.algorithm, own, options.points_per_weight
                    or (own.get("points_per_weight", 1),), options.max_points),
                   ("ring", against, options.against_points_per_weight,
                    options.against_max_points))
        seconds = 0.0
        for fleet in options.fleets:
            members = fleet.server_list()
            for name, params, sweep, cap in recipes:
                for k in sweep:
                    if sum(points_for(s.weight, k) for s in members) <= cap:
                        seconds += get_algorithm(name).estimated_build_seconds(
                            members, {**params, "points_per_weight": k})[0]
        built = Cost(seconds=seconds, why_seconds=(
            f"[{self.name}]: every ring of its sweeps built on {len(options.fleets)} "
            "fleet(s) (fleets, points_per_weight, max_points, against)"))
        return found + built

    @staticmethod
    def parse_options(table: Fields) -> EquivalenceOptions:
        """`[equivalence]`: fleets, points_per_weight, max_points, and `[equivalence.against]`
        (ring parameters with their own points_per_weight list and max_points)."""
        fleets = []
        for item in table.take_table_list("fleets"):
            servers = item.take_int("servers", minimum=2, maximum=65_535)
            expected = "a non-empty list of positive numbers (cycled over the servers)"
            weights = item.take_raw("weights", [1.0], expected=expected)
            if (not isinstance(weights, list) or not weights
                    or not all(isinstance(w, int | float) and not isinstance(w, bool)
                               and math.isfinite(w) and w > 0 for w in weights)):
                raise item.error("weights", expected, weights)
            item.finish()
            fleets.append(Fleet(servers, tuple(float(w) for w in weights)))
        if not fleets:
            raise table.error("fleets", "a non-empty list of { servers = N, weights = [...] }",
                              [])
        points = table.take_int_or_list(
            "points_per_weight", [], maximum=65_536,
            shown_default="the recipe's own points_per_weight") if table.has(
            "points_per_weight") else ()
        max_points = table.take_int("max_points", 10**6, minimum=1, maximum=10**9)
        against = table.take_table("against")
        sweep = against.take_int_or_list("points_per_weight", maximum=10**8)
        against_max = against.take_int("max_points", 30_000_000, minimum=1, maximum=10**9)
        params = against.take_rest()
        for k in sweep:  # every point of the sweep is a ring the scenario could build
            fields = Fields(against.file, against.path, {**params, "points_per_weight": k,
                                                         "layout": NO_LAYOUT})
            RingAlgorithm.parse_params(fields)
            fields.finish()
        against.finish()
        table.finish()
        return EquivalenceOptions(tuple(fleets), points, max_points, params, sweep,
                                  against_max)

    name: ClassVar[str] = "equivalence"
    table: ClassVar[str] = "equivalence"
    reference: ClassVar[Reference] = Reference(tables={
        "equivalence": "The random points per server that match the recipe's balance.",
        "equivalence.fleets[]": "One fleet of `equivalence.fleets`.",
        "equivalence.against": "The ring of random points the recipe is matched against.",
    })
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset({"ring"})
    record_type: ClassVar[Any] = Equivalence

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """Every fleet must suit both the recipe and the ring of random points it is
        matched against."""
        for recipe in scenario.recipes():
            # The ring's parameters with their defaults, as the metric builds it.
            against = {**RingAlgorithm.parse_ring_params(Fields(
                top.file, "equivalence.against",
                {**options.against, "points_per_weight": 1}, declares=False)),
                "layout": NO_LAYOUT}
            for i, fleet in enumerate(options.fleets):
                servers = fleet.server_list()
                for name, params in ((recipe.algorithm, recipe.params), ("ring", against)):
                    problem = get_algorithm(name).check_servers(servers, params)
                    if problem:
                        raise ScenarioError(f"{top.file}: equivalence.fleets[{i}] must be "
                                            f"servers that are {problem}")

    def steps(self, plan: RunPlan) -> int:
        return 1

    def measure(self, context: RunContext) -> Equivalence | None:
        options = context.options.get(self.name)
        if not isinstance(options, EquivalenceOptions):
            return None
        own = {**context.algorithm.params, "layout": NO_LAYOUT}
        sweep = options.points_per_weight or (own["points_per_weight"],)
        against = {**options.against, "layout": NO_LAYOUT}
        fleets = []
        for fleet in options.fleets:
            servers = fleet.server_list()
            total_weight = sum(s.weight for s in servers)

            def points(k: int, fleet_servers: list[Server] = servers) -> int:
                return sum(points_for(s.weight, k) for s in fleet_servers)

            random, random_skipped = [], []
            for k in options.against_points_per_weight:
                if points(k) > options.against_max_points:
                    random_skipped.append(k)
                    continue
                context.stage(f"{context.label}: equivalence, {fleet.label}, random k={k}")
                random.append(measure_ring(context.build, servers,
                                           {**against, "points_per_weight": k}))
            c = fit_c(random)
            rows, skipped = [], []
            for k in sweep:
                if points(k) > options.max_points:
                    skipped.append(k)
                    continue
                context.stage(f"{context.label}: equivalence, {fleet.label}, k={k}")
                ring = measure_ring(context.build, servers, {**own, "points_per_weight": k})
                rows.append(equivalent(ring, random, c, total_weight))
            worst = (max(abs(p.cv_arcs * math.sqrt(p.points_per_weight) / c - 1)
                         for p in random) if c is not None and random else None)
            fleets.append(FleetEquivalence(
                fleet.label, fleet.servers, list(fleet.weights), random, random_skipped,
                rows, skipped, c, theory_c([s.weight for s in servers]), worst))
        context.advance(1)
        return Equivalence(context.label, dict(options.against), options.max_points,
                           options.against_max_points, fleets)

    def answers(self, result: Result) -> list[Answer]:
        """Per fleet: the random points per server a ring of the recipe balances like, at
        its largest k within the measured random curve, and the memory that saves."""
        lines = []
        for run in result.runs:
            found: Equivalence | None = run.figure(self.name)
            if found is None:
                continue
            recipe = str(run.params.get("construction", run.algorithm))
            for fleet in found.fleets:
                measured = [r for r in fleet.rows if r.method == INTERPOLATED] or [
                    r for r in fleet.rows if r.random_k is not None and r.memory_ratio]
                if not measured:
                    continue
                row = measured[-1]
                k, random_k = f"{row.ring.points_per_weight:,}", _k_cell(row.random_k).text
                ratio = _ratio_cell(row.memory_ratio).text
                lines.append(Answer(_fleet_title(recipe, fleet), (
                    f"{literal(fleet.label)}: {literal(recipe)} at k = {k} balances like random "
                    f"points at k = {random_k}, which would take {ratio} its entries."),
                    (k, random_k, ratio)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            found: Equivalence | None = run.figure(self.name)
            if found is None:
                continue
            recipe = str(run.params.get("construction", run.algorithm))
            against = literal(", ".join(f"{k} {v}" for k, v in found.against.items()))
            for fleet in found.fleets:
                sections.append(self._fleet_section(recipe, against, found, fleet))
        return sections

    def _fleet_section(self, recipe: str, against: str, found: Equivalence,
                       fleet: FleetEquivalence) -> Section:
        """`recipe` as plain text (the chart's title takes it so); `against` as Markdown."""
        shown = literal(recipe)
        rows = [[count(r.ring.points_per_weight), count(r.ring.entries),
                 pct(r.ring.cv_arcs, 3), number(r.ring.peak_to_mean, 4),
                 _k_cell(r.random_k), text(r.method), _k_cell(r.random_k_fit),
                 _ratio_cell(r.memory_ratio), number(r.ring.build_s, 2)] for r in fleet.rows]
        c_text = (f"c = {fleet.fit_c:.4f} (Beta shares predict {fleet.theory_c:.4f}); the "
                  f"measured random rings lie within {100 * (fleet.fit_worst_error or 0):.1f}% "
                  "of the fit" if fleet.fit_c is not None else "no random ring measured")
        skipped = []
        if fleet.rows_not_built:
            skipped.append(f"{shown} k = " + ", ".join(f"{k:,}" for k in fleet.rows_not_built)
                           + f" not built (over {found.max_points:,} points)")
        if fleet.random_not_built:
            skipped.append("random k = " + ", ".join(f"{k:,}" for k in fleet.random_not_built)
                           + f" not built (over {found.against_max_points:,} points)")
        table = Table.of(
            ["k", "entries", "cv_arcs", "peak-to-mean", "random k, same cv_arcs", "how",
             "random k by the fit", f"memory ratio (random / {shown})", "build s"],
            rows, notes=[
                f"Random points: {against}. Fit cv_arcs = c / sqrt(k): {c_text}. "
                "'interpolated': on the measured random curve, linear in log k against "
                "log cv; 'fit, extrapolated': outside the measured range, from the fit. "
                "Memory ratio: random points at that k (k x total weight) over the "
                f"{shown} ring's entries, at equal bytes per entry."
                + (" " + "; ".join(skipped) + "." if skipped else "")])
        curve = Table.of(
            ["random k", "points", "entries", "cv_arcs", "fit c / sqrt(k)", "peak-to-mean",
             "build s"],
            [[count(p.points_per_weight), count(p.points), count(p.entries),
              pct(p.cv_arcs, 3),
              pct(fleet.fit_c / math.sqrt(p.points_per_weight), 3) if fleet.fit_c else text(""),
              number(p.peak_to_mean, 4), number(p.build_s, 2)] for p in fleet.random])
        return Section(_fleet_title(recipe, fleet), tables=[table, curve],
                       charts=[self._chart(recipe, fleet)])

    @staticmethod
    def _chart(recipe: str, fleet: FleetEquivalence) -> Chart:
        rows: list[dict[str, Any]] = [
            {"k": p.points_per_weight, "series": "random points (measured)", "cv": p.cv_arcs}
            for p in fleet.random]
        rows += [{"k": r.ring.points_per_weight, "series": f"{recipe} (measured)",
                  "cv": r.ring.cv_arcs} for r in fleet.rows if r.ring.cv_arcs > 0]
        if fleet.fit_c is not None:
            ks: list[float] = [p.points_per_weight for p in fleet.random]
            ks += [r.ring.points_per_weight for r in fleet.rows]
            ks += [r.random_k for r in fleet.rows
                   if r.random_k is not None and r.method != BEYOND_32_BITS]
            low, high = math.log10(min(ks)), math.log10(max(ks))
            for i in range(41):
                k = 10 ** (low + (high - low) * i / 40)
                rows.append({"k": k, "series": f"fit {fleet.fit_c:.3f} / sqrt(k)",
                             "cv": fleet.fit_c / math.sqrt(k)})
        return charts.curves(
            f"cv_arcs against points per unit weight: {recipe} and random ({fleet.label})",
            rows, x="k", y="cv", series="series", x_title="points per unit weight k",
            y_title="cv_arcs", points=("random points (measured)", f"{recipe} (measured)"))


def _fleet_title(recipe: str, fleet: FleetEquivalence) -> str:
    return f"{literal(recipe, line_start=True)} against random points: {literal(fleet.label)}"


def _k_cell(value: float | None) -> Cell:
    if value is None:
        return text("")
    return count(round(value)) if value < 1e9 else text(f"{value:.2e}")


def _ratio_cell(value: float | None) -> Cell:
    if value is None:
        return text("")
    return text(f"{value:,.1f}x") if value < 1e7 else text(f"{value:.2e}x")
