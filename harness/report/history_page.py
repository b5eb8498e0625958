"""The history's index page: each figure of each scenario across the runs kept, with the
changes that persisted flagged (`harness.core.steps`).

One section per machine and scenario: a row per figure (the figures `compare` reads, per
sweep point and layout), a column per run (its id and commit), the newest
`SHOWN_RUNS` of them, and the steps found over the whole history; a chart draws
the figures that stepped, each as its change against its first run. Timings (a layout's,
a peer's) step only beyond `TIMING_TOLERANCE` of their level, and only where the new
level clears the noise bands of the runs around it (`harness.core.steps`); every other
figure is deterministic and steps on any lasting change. Entries that cannot be read are named
in a note, not shown. Each entry's figures come from its sidecar (`history_figures`), so
a run rewrites the index without reading the results again; an entry without one is read
once (one at a time, only its figures kept) and its sidecar written.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from harness.core import charts, noise
from harness.core.atomic import locked_directory, write_atomically
from harness.core.errors import ResultFormatError
from harness.core.machine import NOT_A_CHECKOUT
from harness.core.steps import Step, steps
from harness.core.tables import Cell, Report, Section, Table, code, literal, text
from harness.report import html
from harness.report.compare import Figure, render_value, signed_percent
from harness.report.history import entries, machines
from harness.report.history_figures import Kept, kept_figures

SHOWN_RUNS = 12
#: at most this many stepped figures are drawn per scenario (all are in the table)
CHARTED = 8
#: a timing's change counts as a step beyond this fraction of its level: the noise between
#: runs that `compare` allows too
TIMING_TOLERANCE = noise.BETWEEN_RUNS - 1
#: what sidecars written before NOT_A_CHECKOUT hold for a run without a commit
_NO_COMMIT_BEFORE = "no commit"
#: (sweep point, layout, figure) -> (kind, value per run index)
Series = dict[tuple[str, str, str], tuple[Figure, dict[int, float]]]


def _series(kept: list[Kept]) -> Series:
    found: Series = {}
    for index, one in enumerate(kept):
        for key, (figure, value) in one.figures.items():
            found.setdefault(key, (figure, {}))[1][index] = value
    return found


def _bands(kept: list[Kept], key: tuple[str, str, str],
           indexes: list[int]) -> list[tuple[float, float] | None]:
    return [kept[i].bands.get(key) for i in indexes]


def _in_cpu_time(found: list[Step], kept: list[Kept], key: tuple[str, str, str],
                 indexes: list[int]) -> list[Step]:
    """The timing's steps that its CPU time takes too, where every run kept it: a step of
    the wall time alone is the machine's load changing, not the code (as `compare`
    judges)."""
    cpu = [kept[i].cpu.get(key) for i in indexes]
    if not found or any(c is None for c in cpu):
        return found
    held = [c for c in cpu if c is not None]
    cpu_steps = steps([c[0] for c in held], TIMING_TOLERANCE,
                      bands=[(c[1], c[2]) for c in held])
    return [s for s in found if any(c.at == s.at and (c.after > c.before) == (s.after > s.before)
                                    for c in cpu_steps)]


def _describe(step: Step, ids: list[str], figure: Figure) -> str:
    change = (signed_percent(step.relative) if step.relative is not None
              else f"{render_value(step.before, figure.kind)} to "
                   f"{render_value(step.after, figure.kind)}")
    return f"{change} at {ids[step.at]}" + ("" if step.confirmed else " (unconfirmed)")


def short_commit(commit: str) -> str:
    """A run's commit in a column heading: seven characters as git abbreviates it, or in
    words when the run had none."""
    if commit in (NOT_A_CHECKOUT, _NO_COMMIT_BEFORE):
        return NOT_A_CHECKOUT
    return literal(commit[:7])


def _section(machine: str, name: str, kept: list[Kept]) -> Section:
    ids = [one.run_id for one in kept]
    shown = range(max(0, len(kept) - SHOWN_RUNS), len(kept))
    headings = ["ring", "layout", "figure",
                *(f"{ids[i]} ({short_commit(kept[i].commit)})" for i in shown),
                "steps (changes that persisted)"]
    rows = []
    flagged = 0
    stepped: list[dict[str, object]] = []
    charted = 0
    for key, (figure, values) in _series(kept).items():
        label, subject, _ = key
        indexes = sorted(values)
        timing = figure.timing is not None
        found = steps([values[i] for i in indexes],
                      TIMING_TOLERANCE if timing else figure.tolerance,
                      bands=_bands(kept, key, indexes) if timing else None)
        if timing:
            found = _in_cpu_time(found, kept, key, indexes)
        # A step's index is into the runs that hold the figure; name it by run id.
        held_ids = [ids[i] for i in indexes]
        flagged += sum(s.confirmed for s in found)
        first = values[indexes[0]]
        if any(s.confirmed for s in found) and first and charted < CHARTED:
            charted += 1
            series = f"{label} {subject} {figure.label}"
            stepped += [{"run": int(ids[i]), "series": series, "change": values[i] / first - 1}
                        for i in indexes]
        rows.append([text(label), text(subject), text(figure.label),
                     *(Cell(render_value(values[i], figure.kind), values[i]) if i in values
                       else text("") for i in shown),
                     text("; ".join(_describe(s, held_ids, figure) for s in found))])
    note = (f"{len(kept)} runs of {literal(name)} on {literal(machine)}, the newest "
            f"{len(shown)} shown; {flagged} confirmed step(s). A step is a change that the "
            "runs after it confirm; timings count only beyond "
            f"{100 * TIMING_TOLERANCE:.0f}% of their level, and only when the runs of the "
            "new level lie wholly outside the noise of the runs before it (each run's "
            f"{noise.CONFIDENCE:.0%} interval of its median), in their CPU time too where "
            "the runs kept it.")
    found_charts = [charts.curves(
        f"Figures that stepped ({name} on {machine}): change against their first run",
        stepped, x="run", y="change", series="series", x_title="run number",
        y_title="change against the first run", log=False)] if stepped else []
    return Section(f"{literal(name)} on {literal(machine)}",
                   tables=[Table.of(headings, rows, notes=[note])], charts=found_charts)


def history_report(history: Path) -> Report:
    """The index of every machine's runs in `history`."""
    sections = []
    unreadable = []
    for machine in machines(history):
        by_scenario: dict[str, list[Kept]] = defaultdict(list)
        for entry in entries(history, machine):
            try:
                kept = kept_figures(entry)
            except ResultFormatError as exc:
                unreadable.append(f"{code(f'{machine}/{entry.run_id}')} ({literal(str(exc))})")
                continue
            by_scenario[kept.scenario].append(kept)
        sections += [_section(machine, name, kept) for name, kept in sorted(by_scenario.items())]
    intro = ["Every run `python -m harness run` kept, per machine and scenario: each figure "
             "across the runs, with the changes that persisted flagged. Compare any two with "
             "`python -m harness compare previous latest` or by run id."]
    if unreadable:
        intro.append("Entries that could not be read, and are left out: "
                     + "; ".join(unreadable) + ".")
    if not sections:
        intro.append("No runs are kept here yet.")
    return Report("Run history", intro, sections)


def write_index(history: Path) -> Path:
    """Rewrite HISTORY/index.html from every entry, under the history's lock (two runs
    finishing at once write it one after the other, the second with both entries)."""
    target = history / "index.html"
    history.mkdir(parents=True, exist_ok=True)
    with locked_directory(history):
        write_atomically(target, html.report(history_report(history)))
    return target
