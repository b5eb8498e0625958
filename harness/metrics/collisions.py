"""Collisions: points that land on a position already taken (the birthday problem).

For n points hashed uniformly into S = 2**bits slots, the expected number of
occupied slots is S (1 - (1 - 1/S)**n), so the expected number of dropped
points is n - S (1 - (1 - 1/S)**n), about n**2 / (2 S).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from harness.core import charts
from harness.core.model import Result
from harness.core.stats import expected_collisions
from harness.core.tables import Answer, Section, Table, count, literal, significant, text
from harness.metrics.base import MetricBase, answered_runs
from harness.metrics.context import RunContext, RunPlan, Scope


@dataclass
class Collisions:
    #: points dropped because their position was already taken
    collisions: int
    #: the birthday expectation for as many uniform hashes
    collisions_expected: float


class CollisionsMetric(MetricBase):
    """Points that collided while building the ring, against the birthday expectation."""

    name: ClassVar[str] = "collisions"
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset({"ring"})
    record_type: ClassVar[Any] = Collisions

    def steps(self, plan: RunPlan) -> int:
        return 0

    def measure(self, context: RunContext) -> Collisions | None:
        ring = context.algorithm.ring
        if ring is None:
            return None
        points = ring.entries + ring.collisions
        return Collisions(ring.collisions, expected_collisions(points, ring.bits))

    def answers(self, result: Result) -> list[Answer]:
        """Runs whose ring lost points to collisions: how many, against the birthday bound
        (a ring that lost none is not news, and its row says so)."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)
                                  and r.figure(self.name).collisions]):
            c: Collisions = run.figure(self.name)
            lost, expected = count(c.collisions).text, significant(c.collisions_expected).text
            lines.append(Answer("Collisions", f"{literal(run.label)}: {lost} points collided "
                                f"and were dropped, against {expected} expected (the "
                                "birthday bound).", (lost, expected)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        rows = [[text(run.label), count(run.ring.points if run.ring else 0),
                 count(run.ring.entries if run.ring else 0),
                 count(c.collisions), significant(c.collisions_expected)]
                for run in result.runs if (c := run.figure(self.name)) is not None]
        if not rows:
            return []
        curve = [{"points": run.ring.points, "series": series, "collisions": value}
                 for run in result.runs
                 if (c := run.figure(self.name)) is not None and run.ring is not None
                 for series, value in (("measured", c.collisions),
                                       ("birthday expectation", c.collisions_expected))]
        found = [charts.curves(
            "Collisions against points, with the birthday expectation", curve, x="points",
            y="collisions", series="series", x_title="points", y_title="points dropped",
            points=("measured",), y_scale="symlog")] if len(rows) >= 2 and curve else []
        return [Section("Collisions", tables=[Table.of(
            ["ring", "points", "entries", "collisions", "collisions_expected"], rows)],
            charts=found)]
