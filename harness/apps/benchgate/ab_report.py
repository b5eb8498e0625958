"""The A/B gate's report: one table model, printed as Markdown and written as Markdown
and HTML (harness.report renders it; every name from a suite goes in through `literal`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.apps.benchgate.ab_decide import (
    BUILD_THRESHOLD,
    CONFIDENCE,
    MEMORY_BOUND_THRESHOLD,
    THRESHOLD,
    PairedVerdict,
)
from harness.apps.benchgate.decide import FigureVerdict
from harness.core.atomic import write_atomically
from harness.core.tables import Cell, Report, Section, Table, literal
from harness.report import html, markdown

REPORT_NAME = "ab-gate"

RULE = (
    f"Each row: the candidate's time over the base's, per key, as the median of pairs of "
    f"samples taken back to back (base and candidate alternating which goes first). "
    f"**Interval**: {CONFIDENCE:.0%} bootstrap interval of that median. **Regression** "
    f"when the interval's lower end is above {THRESHOLD}x ({BUILD_THRESHOLD}x for builds; "
    f"{MEMORY_BOUND_THRESHOLD}x on rings bigger than the L2 cache, where two processes of "
    f"the same code differ by up to 15%). "
    f"**Detectable**: the smallest slowdown this run could have flagged (the threshold "
    f"times the interval's lower half-width); more pairs or rounds make it smaller.")


@dataclass(frozen=True)
class ABOutcome:
    revision: str
    commit: str
    mode: str
    timings: list[PairedVerdict]
    figures: list[FigureVerdict]
    #: only on one side, or left out by a side's plan: (what, names)
    unmatched: list[tuple[str, list[str]]]
    regressions: list[str]
    sampling_seconds: float
    metadata: list[tuple[str, str]]


def timing_table(verdicts: Sequence[PairedVerdict]) -> Table:
    rows = []
    for v in sorted(verdicts, key=lambda v: (not v.regressed, v.benchmark)):
        scales = "" if v.scales[0] == v.scales[1] else f" (scales {v.scales[0]}, {v.scales[1]})"
        rows.append([
            Cell(literal(v.benchmark) + scales, v.benchmark),
            Cell(f"{v.interval.ratio:.3f}x", v.interval.ratio),
            Cell(f"{v.interval.low:.3f} to {v.interval.high:.3f}", v.interval.low),
            Cell(f"{v.detectable:.3f}x", v.detectable),
            Cell(str(v.pairs), v.pairs),
            Cell("**REGRESSION**" if v.regressed else v.verdict, v.verdict),
        ])
    return Table.of(["benchmark", "ratio", "interval", "detectable", "pairs", "verdict"], rows)


def figure_table(verdicts: Sequence[FigureVerdict]) -> Table:
    rows = [[literal(v.figure), literal(str(v.baseline)), literal(str(v.current)),
             "**REGRESSION**" if v.regressed else v.verdict] for v in verdicts]
    return Table.of(["figure", "base", "candidate", "verdict"], rows)


def build_report(outcome: ABOutcome) -> Report:
    verdict = (f"FAIL: {len(outcome.regressions)} regression(s): "
               + ", ".join(literal(r) for r in outcome.regressions)
               if outcome.regressions else
               f"PASS: {len(outcome.timings)} timings and the figures of both sides agree")
    sections = [Section("Timings", paragraphs=[RULE], tables=[timing_table(outcome.timings)])]
    changed = [v for v in outcome.figures if v.regressed or v.baseline != v.current]
    if changed:
        sections.append(Section("Figures that differ", tables=[figure_table(changed)]))
    for what, names in outcome.unmatched:
        if names:
            sections.append(Section(what, paragraphs=[", ".join(literal(n) for n in names)]))
    return Report(
        title=f"A/B timing gate against {literal(outcome.revision)}",
        intro=[f"**{verdict}**"],
        sections=sections,
        metadata=[(k, literal(v)) for k, v in outcome.metadata],
    )


def write_report(report: Report, folder: Path) -> list[Path]:
    paths = [folder / f"{REPORT_NAME}.md", folder / f"{REPORT_NAME}.html"]
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(paths[0], markdown.report(report))
    write_atomically(paths[1], html.report(report))
    return paths
