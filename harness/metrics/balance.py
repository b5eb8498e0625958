"""Balance: how evenly a ring spreads load, measured (keys, arcs) and predicted (theory).

For servers of weight w_i, load is judged as share_i / w_i, relative to its
mean over servers, so equal weights reduce to plain shares.

- `cv_keys`: population std / mean of keys per server (per unit weight).
- `cv_arcs`: the same over each server's exact share of the ring (the sum of
  the arcs it owns; arc of point i = (position[i-1], position[i]], wrapping).
  No sampling noise.
- `cv_theory`: a server holding k_i of K points owns a Beta(k_i, K-k_i) share,
  whose relative std is sqrt((K-k_i) / (k_i (K+1))); the CV over servers is
  the root mean square of that. For N equal servers with k points each this is
  sqrt((N-1) / (N k + 1)), the formula of "Consistent Hashing from Scratch, and
  Why Cloudflare Deleted 90% of It" (docs/design.md, section 5).
- `cv_floor`: cv_theory with the Poisson noise of counting M keys added in
  quadrature: server i expects M k_i / K keys, relative variance K / (M k_i);
  for equal servers sqrt(cv_theory**2 + N/M).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.ring import Ring
from harness.core.stats import (
    PerWeight,
    arc_shares,
    cv,
    floor_cv,
    is_weighted,
    per_weight,
    theory_cv,
)
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
from harness.metrics.base import MetricBase, answered_runs

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result, Run
    from harness.metrics.context import RunContext, RunPlan, Scope


@dataclass(frozen=True)
class Balance:
    servers: int
    keys: int
    min_keys: int
    max_keys: int
    mean_keys: float
    max_over_mean: float
    cv_keys: float
    #: from exact shares of the key-hash space (None where the algorithm gives none)
    cv_arcs: float | None
    #: from point counts (rings only)
    cv_theory: float | None
    cv_floor: float | None
    #: each server's exact share of the ring (fraction of the hash space)
    arc_shares: tuple[float, ...] | None
    #: each server's weight (None in results written before it was recorded)
    weights: tuple[float, ...] | None = None
    #: keys each server received (None in results written before it was recorded): what
    #: a weighted fleet's figures per unit weight are taken from
    keys_per_server: tuple[int, ...] | None = None

    def per_weight(self) -> PerWeight | None:
        """Keys per unit weight (min, max, mean, peak, hottest), where the counts are known."""
        if self.keys_per_server is None:
            return None
        return per_weight(self.keys_per_server, self.weights or [1.0] * self.servers)

    def as_record(self) -> dict[str, object]:
        return asdict(self)


def measure_balance(
    ring: Ring,
    key_owners: npt.NDArray[np.uint16],
    weights: npt.ArrayLike,
    points_per_server: npt.ArrayLike,
) -> Balance:
    """Balance of `ring` for keys routed to `key_owners`; points counted before collisions."""
    return balance_of_keys(key_owners, weights, arc_shares(ring, len(np.asarray(weights))),
                           points_per_server)


def balance_of_keys(
    key_owners: npt.NDArray[np.uint16],
    weights: npt.ArrayLike,
    shares: npt.NDArray[np.float64] | None,
    points_per_server: npt.ArrayLike | None,
) -> Balance:
    """Balance from owners, with exact shares and theory where the algorithm gives them."""
    weight = np.asarray(weights, dtype=np.float64)
    counts = np.bincount(key_owners, minlength=len(weight))
    load = counts / weight
    theory = floor = None
    if points_per_server is not None:
        theory = theory_cv(points_per_server)
        floor = floor_cv(points_per_server, len(key_owners))
    return Balance(
        servers=len(weight), keys=len(key_owners), min_keys=int(counts.min()),
        max_keys=int(counts.max()), mean_keys=float(counts.mean()),
        max_over_mean=float(load.max() / load.mean()), cv_keys=cv(load),
        cv_arcs=None if shares is None else cv(shares / weight),
        cv_theory=theory, cv_floor=floor,
        arc_shares=None if shares is None else tuple(float(s) for s in shares),
        weights=tuple(float(w) for w in weight),
        keys_per_server=tuple(int(c) for c in counts),
    )


#: why a key sample's figures differ from the exact shares' (which a migration reports)
SAMPLE_NOTE = ("Key sample: counted from the keys routed, so it carries their sampling "
               "noise (cv_floor is cv_theory with that noise added). Exact shares: each "
               "server's share of the hash space, with no sample; a Migration table's "
               "balance is of exact shares, so its peak-to-mean differs from the key "
               "sample's by that noise.")


class BalanceMetric(MetricBase):
    """Keys per server, exact shares, and the theory they are measured against."""

    name: ClassVar[str] = "balance"
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = Balance

    def steps(self, plan: RunPlan) -> int:
        return 0

    def measure(self, context: RunContext) -> Balance:
        algorithm = context.algorithm
        construction = algorithm.construction
        points = (None if construction is None
                  else construction.point_counts(context.servers))
        return balance_of_keys(context.owners, [s.weight for s in context.servers],
                               algorithm.exact_shares(), points)

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the key sample's peak-to-mean, and its CV against theory."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            b: Balance = run.figure(self.name)
            peak, spread = number(b.max_over_mean).text, pct(b.cv_keys).text
            theory = (f" against {pct(b.cv_theory).text} in theory"
                      if b.cv_theory is not None else "")
            lines.append(Answer(
                "Balance", f"{literal(run.label)}: the busiest server holds {peak}x the mean "
                f"(key sample); keys spread with a CV of {spread}{theory}.",
                (peak, spread) + ((pct(b.cv_theory).text,) if b.cv_theory is not None
                                  else ())))
        return lines

    def sections(self, result: Result) -> list[Section]:
        measured = [(run, b) for run in result.runs
                    if (b := run.figure(self.name)) is not None]
        if not measured:
            return []
        if any(is_weighted(b.weights) for _, b in measured):
            table = self._weighted_table(result, measured)
        else:
            table = Table.of(
                ["ring", "min keys", "max keys", "max/mean (key sample)",
                 "cv_keys (key sample)", "cv_arcs (exact shares)", "cv_theory", "cv_floor"],
                [[text(run.label), count(b.min_keys), count(b.max_keys),
                  number(b.max_over_mean), pct(b.cv_keys), *self._cvs(b)]
                 for run, b in measured], notes=[SAMPLE_NOTE])
        return [Section("Balance", tables=[table], charts=self.charts(result))]

    @staticmethod
    def _cvs(b: Balance) -> list[Cell]:
        return [pct(v) if v is not None else text("")
                for v in (b.cv_arcs, b.cv_theory, b.cv_floor)]

    def _weighted_table(self, result: Result, measured: list[tuple[Run, Balance]]) -> Table:
        """Per unit weight first (what the peak is judged on), then the raw counts."""
        rows = []
        for run, b in measured:
            spread = b.per_weight()
            by_weight = ([number(spread.min, 1), number(spread.max, 1),
                          number(spread.mean, 1)] if spread is not None
                         else [text(""), text(""), text("")])
            hottest = (text(server_name(result, spread.hottest, b.servers))
                       if spread is not None else text(""))
            rows.append([text(run.label), *by_weight, number(b.max_over_mean), hottest,
                         count(b.min_keys), count(b.max_keys), pct(b.cv_keys),
                         *self._cvs(b)])
        return Table.of(
            ["ring", "keys/weight min", "keys/weight max", "keys/weight mean",
             "peak-to-mean (key sample)", "hottest server", "min keys (raw)",
             "max keys (raw)", "cv_keys (key sample)", "cv_arcs (exact shares)", "cv_theory",
             "cv_floor"], rows,
            notes=["Weighted servers are judged per unit of weight: a server's keys divided "
                   "by its weight. The hottest server is the one with the most keys per "
                   "unit weight, the one that sets the peak-to-mean; the raw columns are "
                   "the fewest and most keys any server received, whatever its weight.",
                   SAMPLE_NOTE])

    def charts(self, result: Result) -> list[Chart]:
        """CV against points per server (with theory and floor), and each run's shares."""
        measured = [(run, b) for run in result.runs
                    if (b := run.figure(self.name)) is not None]
        found: list[Chart] = []
        swept = [(run.points_per_weight, b) for run, b in measured
                 if run.points_per_weight is not None]
        if len(swept) >= 2:
            rows = [{"k": k, "series": series, "cv": value}
                    for k, b in swept
                    for series, value in (("cv_keys (measured)", b.cv_keys),
                                          ("cv_arcs (measured)", b.cv_arcs),
                                          ("cv_theory", b.cv_theory),
                                          ("cv_floor (theory + key noise)", b.cv_floor))
                    if value is not None]
            found.append(charts.curves(
                "CV of load against points per unit weight", rows, x="k", y="cv",
                series="series", x_title="points per unit weight k", y_title="CV",
                points=("cv_keys (measured)", "cv_arcs (measured)")))
        for run, b in measured:  # one per sweep point: each ring has its own shares
            if b.arc_shares is not None:
                weights = b.weights or tuple(1.0 for _ in b.arc_shares)
                total = sum(weights)
                names = [server_name(result, i, len(b.arc_shares))
                         for i in range(len(b.arc_shares))]
                found.append(charts.shares(
                    f"Load per server: exact share of the ring ({run.label}); ticks: "
                    "fair share by weight",
                    [{"server": name, "share": share, "expected": w / total}
                     for name, share, w in zip(names, b.arc_shares, weights, strict=True)]))
        return found


def server_name(result: Result, index: int, servers: int) -> str:
    """The scenario's name for server `index` of `servers` (its index when the scenario's
    list is of another fleet)."""
    listed = result.scenario.get("servers", [])
    # A tuple while the run holds the result, a list once read back from JSON.
    if (isinstance(listed, list | tuple) and len(listed) == servers
            and isinstance(listed[index], dict)):
        return str(listed[index].get("name", index))
    return str(index)
