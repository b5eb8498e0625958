"""Two results side by side: each shared (run, subject) figure with its change.

Runs are paired by sweep point (the same label) where the two results share
one; otherwise by recipe: the same algorithm and construction, so that a ring
of 160 points per unit weight compares with the same fleet at 16 (the row
says `k=160 → k=16`). Both results are read through `harness.core.model`, so
results of different format versions compare alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from harness.core.model import Result, Run, Subject
from harness.core.tables import (
    Cell,
    Report,
    Section,
    Table,
    code,
    count,
    literal,
    number,
    pct,
    text,
)
from harness.report.sections import commit_markdown

#: how a figure reads: a count (thousands separators), a fraction (a percentage, its
#: change in percentage points), a ratio such as peak-to-mean (three decimals, as the
#: result tables show it) or a measured number (six significant digits)
Kind = Literal["count", "fraction", "ratio", "number"]


@dataclass(frozen=True)
class Figure:
    label: str
    kind: Kind
    get: Callable[[Any], float | None]


def _field(metric: str, field: str) -> Callable[[Run | Subject], float | None]:
    def get(owner: Run | Subject) -> float | None:
        record = owner.figure(metric)
        value = getattr(record, field, None) if record is not None else None
        if value is not None and hasattr(value, "median"):
            value = value.median
        return None if value is None else float(value)

    return get


def _within(metric: str, part: str, field: str) -> Callable[[Run], float | None]:
    """A figure of one part of a run's record (replication's failure, its join)."""
    def get(run: Run) -> float | None:
        value = getattr(getattr(run.figure(metric), part, None), field, None)
        return None if value is None else float(value)

    return get


def _load(field: str) -> Callable[[Run], float | None]:
    def get(run: Run) -> float | None:
        load = run.figure("load")
        return None if load is None else float(getattr(load, field))

    return get


def _policy(index: int) -> Callable[[Run], float | None]:
    """The busiest server's peak-to-mean under one hot-keys policy, in the record's order."""
    def get(run: Run) -> float | None:
        policies = getattr(run.figure("hot_keys"), "policies", None)
        return float(policies[index].peak_to_mean) if policies else None

    return get


RUN_FIGURES: list[Figure] = [
    Figure("entries", "count", lambda run: float(run.ring.entries) if run.ring else None),
    Figure("collisions", "count", _field("collisions", "collisions")),
    Figure("cv_keys", "fraction", _field("balance", "cv_keys")),
    Figure("cv_arcs", "fraction", _field("balance", "cv_arcs")),
    Figure("cv_theory", "fraction", _field("balance", "cv_theory")),
    Figure("peak-to-mean (keys per unit weight)", "ratio",
           _field("balance", "max_over_mean")),
    Figure("load cv", "fraction", _load("cv")),
    Figure("load peak-to-mean", "ratio", _load("max_over_mean")),
    Figure("load hottest share", "fraction", _load("hottest_share")),
    Figure("migration: keys moved", "fraction", _field("migration", "moved_fraction")),
    Figure("migration: requests moved", "fraction",
           _field("migration", "moved_requests_fraction")),
    Figure("migration: new ring's cv_arcs", "fraction", _field("migration", "cv_arcs_after")),
    Figure("migration: new ring's peak-to-mean", "ratio",
           _field("migration", "peak_to_mean_after")),
    Figure("migration: bytes before", "count", _field("migration", "bytes_before")),
    Figure("migration: bytes after", "count", _field("migration", "bytes_after")),
    Figure("migration: peak origin rate, staged", "number",
           _field("migration", "staged_peak_rate")),
    Figure("migration: peak origin rate, all at once", "number",
           _field("migration", "all_at_once_peak_rate")),
    Figure("replication: keys losing a copy", "fraction",
           _within("replication", "failure", "keys_losing_a_copy_fraction")),
    Figure("replication: re-replication sources", "count",
           _within("replication", "failure", "sources")),
    Figure("replication: busiest source's share", "fraction",
           _within("replication", "failure", "busiest_source_share")),
    Figure("replication: copies moved by a join", "fraction",
           _within("replication", "join", "copies_moved_fraction")),
    Figure("hot keys: primary peak-to-mean", "ratio", _policy(0)),
    Figure("hot keys: replicas peak-to-mean", "ratio", _policy(1)),
    Figure("hot keys: split peak-to-mean", "ratio", _policy(2)),
    Figure("hot keys: front cache peak-to-mean", "ratio", _policy(3)),
]
SUBJECT_FIGURES: list[Figure] = [
    Figure("bytes_per_entry", "number", _field("memory", "bytes_per_entry")),
    Figure("structure_bytes", "count", _field("memory", "structure_bytes")),
    Figure("lookup_peak_bytes", "count", _field("memory", "lookup_peak_bytes")),
    Figure("scalar_ns", "number", _field("throughput", "scalar_ns")),
    Figure("batch_ns", "number", _field("throughput", "batch_ns")),
]


def sibling(layout: str) -> str:
    """A 64-bit layout is compared with its 32-bit sibling (numpy-packed-64 ~ numpy-packed)."""
    return layout.removesuffix("-64")


def render_value(value: float, kind: Kind) -> str:
    """A figure as the comparison shows it."""
    return _shown(value, kind).text


def _shown(value: float, kind: Kind) -> Cell:
    if kind == "fraction":
        return pct(value)
    if kind == "ratio":
        return number(value)
    if kind == "count" or (value == int(value) and abs(value) < 1e15):
        return count(int(value)) if value == int(value) else Cell(f"{value:,.6g}", value)
    return Cell(f"{value:,.6g}", value)


def _change(a: float, b: float, kind: Kind) -> str:
    """B against A: relative, and for a percentage also in percentage points."""
    if a == b:
        return "="
    relative = f"{100 * (b - a) / a:+.1f}%" if a else "new"
    if kind == "fraction":
        return f"{100 * (b - a):+.2f} pp ({relative})"
    return relative


def _movement_rows(run_a: Run, run_b: Run, ring: str) -> Iterator[list[Cell]]:
    """The moved fractions of each operation both runs measured (matched by operation)."""
    moves_b = {(m.operation, m.server): m for m in run_b.figure("movement") or []}
    for move_a in run_a.figure("movement") or []:
        move_b = moves_b.get((move_a.operation, move_a.server))
        if move_b is None:
            continue
        what = f"{move_a.operation} {move_a.server}"
        for label, field in (("ring moved", "ring_moved_fraction"),
                             ("mod-N moved", "mod_n_moved_fraction")):
            yield _row(ring, "(ring)", f"movement, {what}: {label}", "fraction",
                       getattr(move_a, field), getattr(move_b, field))


def _row(run: str, subject: str, label: str, kind: Kind, a: float, b: float) -> list[Cell]:
    return [text(run), text(subject), text(label), _shown(a, kind), _shown(b, kind),
            text(_change(a, b, kind))]


def _recipe(run: Run) -> tuple[str, str]:
    return run.algorithm, str(run.params.get("construction", ""))


def paired_runs(a: Result, b: Result) -> list[tuple[Run, Run]]:
    """Runs of A and B measured alike: by sweep point where the results share one, else by
    recipe (algorithm and construction), each B run used once, the closest parameters
    first; two results of one run each and one recipe pair whatever their points."""
    b_by_label = {run.label: run for run in b.runs}
    shared = [(run, b_by_label[run.label]) for run in a.runs if run.label in b_by_label]
    if shared:
        return shared
    pairs = []
    unused = list(b.runs)
    for run_a in a.runs:
        alike = [run for run in unused if _recipe(run) == _recipe(run_a)]
        if not alike:
            continue
        closest = max(alike, key=lambda run: sum(
            run.params.get(k) == v for k, v in run_a.params.items()))
        unused.remove(closest)
        pairs.append((run_a, closest))
    return pairs


def comparison_report(a: Result, b: Result, a_name: str, b_name: str) -> Report:
    """Every figure both results hold, with B's change against A."""
    rows = []
    for run_a, run_b in paired_runs(a, b):
        ring = (run_a.label if run_a.label == run_b.label
                else f"{run_a.label} → {run_b.label}")
        for figure in RUN_FIGURES:
            va, vb = figure.get(run_a), figure.get(run_b)
            if va is not None and vb is not None:
                rows.append(_row(ring, "(ring)", figure.label, figure.kind, va, vb))
        rows.extend(_movement_rows(run_a, run_b, ring))
        b_subjects = {sibling(s.name): s for s in run_b.subjects}
        for subject_a in run_a.subjects:
            subject_b = b_subjects.get(sibling(subject_a.name))
            if subject_b is None:
                continue
            name = subject_a.name
            if subject_b.name != name:
                name += f" / {subject_b.name}"
            for figure in SUBJECT_FIGURES:
                va, vb = figure.get(subject_a), figure.get(subject_b)
                if va is not None and vb is not None:
                    rows.append(_row(ring, name, figure.label, figure.kind, va, vb))
    intro = ["\n".join(f"{which}: {code(name)} ({literal(result.started_at)}, "
                       f"commit {commit_markdown(result.git_commit)})"
                       for which, name, result in (("A", a_name, a), ("B", b_name, b)))]
    if not rows:
        return Report("Comparison", [
            *intro, "The two results share no sweep point and no recipe (algorithm and "
            "construction) to pair their runs by."])
    table = Table.of(["ring", "layout", "figure", "A", "B", "B vs A"], rows,
                     notes=["Percentages change by percentage points (pp), with the relative "
                            "change beside them; every other figure by its relative change. "
                            "Runs at different sweep points are labelled A → B."])
    return Report("Comparison", intro, [Section("", tables=[table])])
