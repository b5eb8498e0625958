"""The removals metric's report: a summary per algorithm and order, every step, and charts of
lookup ns, memory and balance against the share of servers removed.

Every cell comes from the typed records (`harness.metrics.removals.records`); an order an
algorithm cannot follow reads "not supported", its reason in the notes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.core import charts
from harness.core.tables import (
    Answer,
    Cell,
    Chart,
    Section,
    Table,
    count,
    kib,
    literal,
    pct,
    text,
)
from harness.metrics.instruments.timing import Timing, timing_cell
from harness.metrics.removals.records import Removals, RemovalSeries, RemovalStep

if TYPE_CHECKING:
    from harness.core.model import Result

NOT_SUPPORTED = "not supported"


def _timing(timing: Timing | None) -> Cell:
    return Cell("") if timing is None else timing_cell(timing)


def _bytes(step: RemovalStep) -> Cell:
    """memray's bytes where measured, else the algorithm's own account (marked)."""
    if step.structure_bytes is None:
        return Cell(f"{kib(step.nbytes).text} (nbytes)", step.nbytes)
    return kib(step.structure_bytes)


def _monotone(share: float | None) -> Cell:
    return Cell("no key moved") if share is None else pct(share)


def _moved(moved: float, minimal: float) -> Cell:
    return Cell(f"{100 * moved:.2f}% (min {100 * minimal:.2f}%)", moved)


def _summary_row(series: RemovalSeries) -> list[Cell]:
    if series.unsupported is not None or not series.steps:
        return [text(series.label), text(series.order), *(Cell(NOT_SUPPORTED)
                                                          for _ in range(7))]
    first, last = series.steps[0], series.steps[-1]
    return [text(series.label), text(series.order), text(series.removed_by or ""),
            _moved(last.moved_since_start, last.minimal_since_start),
            _monotone(last.monotone_since_start),
            Cell(f"{100 * first.cv:.2f}% -> {100 * last.cv:.2f}%", last.cv),
            Cell(f"{first.peak_to_mean:.3f} -> {last.peak_to_mean:.3f}", last.peak_to_mean),
            Cell(f"{_timing(first.scalar_ns).text} -> {_timing(last.scalar_ns).text}",
                 last.scalar_ns.median if last.scalar_ns else None),
            Cell(f"{_bytes(first).text} -> {_bytes(last).text}", last.structure_bytes)]


def _step_row(series: RemovalSeries, step: RemovalStep) -> list[Cell]:
    return [text(series.name), Cell(f"{step.removed:,} ({100 * step.share_removed:.0f}%)",
                                    step.share_removed),
            count(step.live), _timing(step.scalar_ns), _timing(step.batch_ns), _bytes(step),
            Cell(f"{100 * step.cv:.2f}% (noise {100 * step.noise_cv:.2f}%)", step.cv),
            Cell(f"{step.peak_to_mean:.3f}", step.peak_to_mean),
            _moved(step.moved_since_previous, step.minimal_since_previous),
            _moved(step.moved_since_start, step.minimal_since_start),
            _monotone(step.monotone_since_previous), _monotone(step.monotone_since_start)]


def _charts(removals: Removals, where: str) -> list[Chart]:
    measured = [s for s in removals.series if s.unsupported is None]
    figures: list[tuple[str, Callable[[RemovalStep], float | None]]] = [
        ("scalar lookup ns per key", lambda st: st.scalar_ns.median if st.scalar_ns else None),
        ("batch lookup ns per key", lambda st: st.batch_ns.median if st.batch_ns else None),
        ("bytes held (memray)", lambda st: st.structure_bytes),
        ("CV of keys per live server", lambda st: st.cv),
        ("peak-to-mean keys per live server", lambda st: st.peak_to_mean),
    ]
    drawn = []
    for title, value_of in figures:
        rows = [{"share removed": step.share_removed, "value": value, "series": s.name}
                for s in measured for step in s.steps if (value := value_of(step)) is not None]
        if rows:
            drawn.append(charts.curves(
                f"{title[0].upper()}{title[1:]} against the share of servers removed ({where})",
                rows, x="share removed", y="value", series="series",
                x_title="share of servers removed", y_title=title, log=False))
    return drawn


def removals_sections(result: Result, metric: str) -> list[Section]:
    sections = []
    for run in result.runs:
        removals: Removals | None = run.figure(metric)
        if removals is None:
            continue
        where = f"N={removals.servers:,}"
        # A recipe's label and its reason come from the algorithm (a plugin's too): literal.
        notes = [literal(f"{s.name}: {NOT_SUPPORTED}: {s.unsupported}", line_start=True)
                 for s in removals.series if s.unsupported is not None]
        reached = max((step.share_removed for s in removals.series for step in s.steps),
                      default=0.0)
        summary = Table.of(
            ["algorithm", "order", "servers leave", "keys moved since start",
             "monotone", "CV of keys", "peak-to-mean", "scalar ns", "memory"],
            [_summary_row(s) for s in removals.series],
            notes=[f"From the whole fleet of {removals.servers:,} servers to "
                   f"{100 * reached:.0f}% removed; {removals.keys:,} "
                   "uniform keys. \"min\" is the least any algorithm moves: the keys of the "
                   "servers that left. \"monotone\" is the share of moved keys whose server "
                   "left.", *notes])
        steps = Table.of(
            ["algorithm (order)", "removed", "live", "scalar ns", "batch ns", "memory",
             "CV of keys", "peak-to-mean", "moved since previous", "moved since start",
             "monotone (previous)", "monotone (start)"],
            [_step_row(s, step) for s in removals.series for step in s.steps])
        first = ", ".join(f"{order} {removed[:5]}"
                          for order, removed in removals.first_removed.items())
        sections.append(Section(
            f"Removals ({literal(run.label)}, {where})",
            paragraphs=[f"Servers removed by steps of {100 * removals.step:g}% of the fleet, "
                        f"up to {100 * removals.max_share:g}%. First fleet indexes to leave: "
                        f"{literal(first)}."],
            tables=[summary, steps], charts=_charts(removals, where)))
    return sections


def removals_answers(result: Result, metric: str) -> list[Answer]:
    """Per run: the series that moved the fewest keys over all its removals, against the
    least any algorithm moves."""
    lines = []
    for run in result.runs:
        removals: Removals | None = run.figure(metric)
        if removals is None:
            continue
        measured = [s for s in removals.series if s.unsupported is None and s.steps]
        if not measured:
            continue
        best = min(measured, key=lambda s: s.steps[-1].moved_since_start)
        moved = _summary_row(best)[3].text
        ties = [s for s in measured if _summary_row(s)[3].text == moved]
        by = (f"{literal(best.label)} ({literal(best.order)} order)" if len(ties) == 1 else
              f"{len(ties)} of the {len(measured)} series, such as {literal(best.label)} "
              f"({literal(best.order)} order)")
        lines.append(Answer(
            f"Removals ({literal(run.label)}, N={removals.servers:,})",
            f"{literal(run.label)}: the fewest keys moved by the end, {moved}, by {by}.",
            (moved,)))
    return lines
