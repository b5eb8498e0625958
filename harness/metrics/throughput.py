"""Lookup throughput: nanoseconds per key, scalar and batch, over repeated rounds.

- `scalar_ns`: a Python loop calling `lookup(h)` over precomputed hashes (what
  a request path that routes one key at a time pays).
- `batch_ns`: one `lookup_many(hashes)` over the workload's key array.

Rounds of all layouts are interleaved (`harness.metrics.instruments.timing`), with
the memory floor (`harness.metrics.instruments.floor`) timed in the same rounds.
Compare layouts as ratios of one run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from harness.core import charts
from harness.core.calibration import Calibration
from harness.core.cost import Cost
from harness.core.tables import Answer, Cell, Section, Table, literal, ratio, text
from harness.metrics.base import MetricBase, RunShape, Working, answered_runs
from harness.metrics.calibration_tables import calibration_table
from harness.metrics.instruments.floor import FLOOR, Floor
from harness.metrics.instruments.targets import Leaders, and_list, leaders, leaders_note
from harness.metrics.instruments.timing import (
    Lookups,
    Timing,
    base_form,
    timed_rounds,
    timing_cell,
)
from harness.recipes.layouts.bucketed_tuning import CALIBRATION_BYTES, Tunable
from harness.recipes.layouts.costs import FLOOR_SECONDS_PER_KEY, lookup_cost

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result, Run
    from harness.core.servers import Server
    from harness.metrics.context import RunContext, RunPlan, Scope


@dataclass
class Throughput:
    scalar_ns: Timing
    #: None for peers, which have no batch lookup
    batch_ns: Timing | None = None
    #: one independent random read per key into an array of as many entries, timed in the
    #: same rounds (harness.metrics.instruments.floor): the memory floor of a batch lookup
    random_access_ns: Timing | None = None
    #: batch_ns over random_access_ns round by round: median and spread of the ratio
    #: (None in results written before it was recorded)
    floor_ratio: Timing | None = None
    #: how the batch lookup was tuned for this machine before it was timed (bucketed)
    calibration: Calibration | None = None


def _tunable(form: object) -> Tunable | None:
    """The form, or the layout a ring's form holds, when its batch lookup is tuned by
    measurement (the bucketed layout)."""
    for candidate in (form, getattr(form, "layout", None)):
        if isinstance(candidate, Tunable):
            return candidate
    return None


def _floor_ratio_cell(timing: Throughput) -> Cell:
    """The per-round ratio to the floor with its spread; the ratio of the medians in
    results written before the per-round ratio was recorded."""
    if timing.floor_ratio is not None:
        spread = timing.floor_ratio
        return Cell(f"{spread.median:.2f}x ({spread.min:.2f}-{spread.max:.2f})", spread.median)
    if timing.random_access_ns is not None and timing.batch_ns is not None:
        return ratio(timing.batch_ns.median, timing.random_access_ns.median)
    return text("")


def _leading(found: Leaders, shown: list[str], floor: str) -> str:
    """The answer's words for the batch lookup that leads (`shown`: the leaders' medians
    as the table shows them), against the floor where it was timed (`floor`)."""
    against = f", {floor} one random access (the floor)" if floor else ""
    if found.runner_up is None:
        return f"its one batch lookup, {literal(found.base)}, takes {shown[0]} ns per key{against}"
    if found.clear:
        return (f"the fastest batch lookup, {literal(found.base)}, clear of the others by its "
                f"interval, takes {shown[0]} ns per key{against}")
    lowest = (f"; the lowest median, {literal(found.base)}'s, is {floor} one random access "
              f"(the floor)" if floor else "")
    return (f"no batch lookup is clear of the others: the leaders, "
            f"{and_list([literal(n) for n in found.names])}, are within noise of each other "
            f"({and_list(shown)} ns per key){lowest}")


#: a scalar key held as a list item: the pointer and its int object
SCALAR_KEY_BYTES = 48


class ThroughputMetric(MetricBase):
    """ns per key of every form (and peer), scalar and batch, in interleaved rounds."""
    name: ClassVar[str] = "throughput"
    scope: ClassVar[Scope] = "subject"
    needs: ClassVar[frozenset[str]] = frozenset({"forms"})
    record_type: ClassVar[Any] = Throughput

    def steps(self, plan: RunPlan) -> int:
        return plan.settings.repeats + 1

    def working(self, shape: RunShape) -> Working:
        """The floor's array (4 bytes an entry), a batch lookup's temporaries, each
        form's scalar keys as a list of Python ints (about 40 bytes a key), and a tuned
        form's calibration keys and routes."""
        return Working(4.0 * shape.entries + shape.largest_lookup_bytes()
                       + SCALAR_KEY_BYTES * shape.scalar_keys * (len(shape.layouts) + 2)
                       + CALIBRATION_BYTES)

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """Its working bytes, and the seconds of its rounds over a ring's layouts (the
        first, untimed, included): every key in a batch and `scalar_keys` one by one in
        each layout, priced by the layout's lookup rates, with the memory floor beside
        them. An algorithm's rounds are priced by its own `estimated_seconds`
        (`harness.run.estimate`)."""
        rounds = shape.repeats + 1
        lookups = lookup_cost(shape.layouts, shape.entries, rounds * shape.keys,
                              rounds * shape.scalar_keys,
                              f"[{self.name}]: {rounds} rounds of {shape.keys:,} keys in a "
                              f"batch and {shape.scalar_keys:,} one by one in each of "
                              f"measure.layouts, {shape.entries:,} entries (measure.repeats, "
                              "keys.count, measure.scalar_keys)")
        floor = (rounds * shape.keys * FLOOR_SECONDS_PER_KEY) if shape.layouts else 0.0
        return super().cost(shape, servers, working) + replace(
            lookups, seconds=lookups.seconds + floor)

    def measure(self, context: RunContext) -> dict[str, Throughput]:
        calibrations: dict[str, Calibration] = {}
        for name, form in context.forms.items():
            if (tunable := _tunable(form)) is not None:
                context.stage(f"{context.label}: tuning {name}'s batch lookup")
                calibrations[name] = tunable.calibrate()
        context.stage(f"{context.label}: timing lookups")
        entries = max((form.entries for form in context.forms.values()), default=1)
        timed: dict[str, Lookups] = {**context.forms, FLOOR: Floor(entries)}
        rounds = timed_rounds(
            timed, context.key_hashes, context.settings.repeats,
            context.settings.scalar_keys, lambda: context.advance(1),
            peers={name: peer.lookup_key for name, peer in context.peers.items()},
            key_names=context.key_names,
        )
        timings = rounds.timings()
        floor = timings.pop(FLOOR)["batch_ns"]
        return {name: Throughput(
                    t["scalar_ns"], t.get("batch_ns"),
                    floor if name in context.forms else None,
                    rounds.batch_ratio(name, FLOOR) if name in context.forms else None,
                    calibrations.get(name))
                for name, t in timings.items()}

    def _timed(self, run: Run) -> list[tuple[str, Throughput]]:
        return [(s.name, t) for s in run.of_kind("layout") + run.of_kind("algorithm")
                if (t := s.figure(self.name)) is not None and t.batch_ns is not None]

    @staticmethod
    def _title(run: Run) -> str:
        entries = run.ring.entries if run.ring else run.subjects[0].entries
        return f"Lookup time ({literal(run.label)}, {entries:,} entries)"

    @staticmethod
    def _batch_leaders(timed: list[tuple[str, Throughput]]) -> Leaders:
        return leaders([(name, t.batch_ns) for name, t in timed if t.batch_ns is not None])

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the fastest batch lookup (or the leaders, tied within noise),
        against the memory floor."""
        lines = []
        for run in answered_runs([r for r in result.runs if self._timed(r)]):
            timed = dict(self._timed(run))
            found = self._batch_leaders(list(timed.items()))
            shown = [timing_cell(timing).text.split(" (")[0] for name in found.names
                     if (timing := timed[name].batch_ns) is not None]
            floor = _floor_ratio_cell(timed[found.base]).text.split(" (")[0]
            lines.append(Answer(self._title(run),
                                f"{literal(run.label)}: {_leading(found, shown, floor)}.",
                                (*shown, floor) if floor else tuple(shown)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            timed = self._timed(run)
            if not timed:
                continue
            base_name = base_form(run)
            base = dict(timed).get(base_name, timed[0][1])
            rows = [[text(name), timing_cell(t.scalar_ns),
                     ratio(t.scalar_ns.median, base.scalar_ns.median),
                     timing_cell(t.batch_ns),
                     ratio(t.batch_ns.median, base.batch_ns.median if base.batch_ns else 0),
                     _floor_ratio_cell(t)]
                    for name, t in timed if t.batch_ns is not None]
            floor = next((t.random_access_ns for _, t in timed
                          if t.random_access_ns is not None), None)
            notes = [f"One random access (the memory floor of a batch lookup: one independent "
                     f"4-byte read per key into an array of the ring's size), timed in the "
                     f"same rounds: {timing_cell(floor).text} ns per key."] if floor else []
            leading = leaders_note("batch lookup", self._batch_leaders(timed), literal,
                                   "ns per key")
            if leading is not None:
                notes.append(leading)
            if any(t.floor_ratio is not None for _, t in timed):
                notes.append("batch / one random access: the median of the per-round "
                             "ratios (each round times the form and the floor back to "
                             "back), with their min-max.")
            tuned = [calibration_table(name, t.calibration) for name, t in timed
                     if t.calibration is not None]
            entries = run.ring.entries if run.ring else run.subjects[0].entries
            bars = [{"layout": name, "path": path, "ns": timing.median,
                     "label": f"{timing.median:,.1f} ns "
                              f"({timing.median / base_timing.median:.2f}x)"}
                    for name, t in timed
                    for path, timing, base_timing in (("batch", t.batch_ns, base.batch_ns),
                                                      ("scalar", t.scalar_ns, base.scalar_ns))
                    if timing is not None and base_timing is not None]
            # Peers (scalar only: they look keys up one by one, by name) beside our forms.
            bars += [{"layout": f"{peer.name} (peer)", "path": "scalar",
                      "ns": t.scalar_ns.median, "label": f"{t.scalar_ns.median:,.1f} ns (peer)"}
                     for peer in run.of_kind("peer")
                     if (t := peer.figure(self.name)) is not None]
            chart = charts.grouped_bars(
                f"ns per key, batch and scalar ({run.label}; ratio to {base_name})", bars,
                category="layout", group="path", value="ns", value_title="ns per key (median)",
                label="label")
            sections.append(Section(self._title(run), tables=[
                Table.of(["layout", "scalar_ns median (min-max)",
                          f"scalar vs {literal(base_name)}", "batch_ns median (min-max)",
                          f"batch vs {literal(base_name)}",
                          "batch / one random access"], rows, notes=notes).trimmed()],
                charts=[chart]))
            if tuned:
                sections.append(Section(f"Tuning ({literal(run.label)}, {entries:,} entries)",
                                        tables=tuned, note=True))
        return sections
