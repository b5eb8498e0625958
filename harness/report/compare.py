"""Two results side by side: each shared (run, subject) figure with its change.

Both results are read through `harness.core.model`, so results of different
format versions compare alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.model import Result, Run, Subject
from harness.core.tables import Cell, Report, Section, Table, code, literal, text

Getter = Callable[[Any], float | None]


def _figure(metric: str, field: str) -> Callable[[Run | Subject], float | None]:
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


def _policy(index: int) -> Callable[[Run], float | None]:
    """The busiest server's peak-to-mean under one hot-keys policy, in the record's order."""
    def get(run: Run) -> float | None:
        policies = getattr(run.figure("hot_keys"), "policies", None)
        return float(policies[index].peak_to_mean) if policies else None

    return get


RUN_FIGURES: list[tuple[str, Callable[[Run], float | None]]] = [
    ("entries", lambda run: float(run.ring.entries) if run.ring else None),
    ("collisions", _figure("collisions", "collisions")),
    ("cv_keys", _figure("balance", "cv_keys")),
    ("cv_arcs", _figure("balance", "cv_arcs")),
    ("keys_losing_a_copy_fraction",
     _within("replication", "failure", "keys_losing_a_copy_fraction")),
    ("re_replication_sources", _within("replication", "failure", "sources")),
    ("busiest_source_share", _within("replication", "failure", "busiest_source_share")),
    ("join_copies_moved_fraction", _within("replication", "join", "copies_moved_fraction")),
    ("hot_keys_primary_peak_to_mean", _policy(0)),
    ("hot_keys_replicas_peak_to_mean", _policy(1)),
    ("hot_keys_split_peak_to_mean", _policy(2)),
    ("hot_keys_cache_peak_to_mean", _policy(3)),
]
SUBJECT_FIGURES: list[tuple[str, Callable[[Subject], float | None]]] = [
    ("bytes_per_entry", _figure("memory", "bytes_per_entry")),
    ("structure_bytes", _figure("memory", "structure_bytes")),
    ("lookup_peak_bytes", _figure("memory", "lookup_peak_bytes")),
    ("scalar_ns", _figure("throughput", "scalar_ns")),
    ("batch_ns", _figure("throughput", "batch_ns")),
]


def sibling(layout: str) -> str:
    """A 64-bit layout is compared with its 32-bit sibling (numpy-packed-64 ~ numpy-packed)."""
    return layout.removesuffix("-64")


def _number(value: float) -> str:
    """Counts with thousands separators; measured fractions and times to 6 digits."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def _change(a: float, b: float) -> str:
    if a == b:
        return "="
    return f"{100 * (b - a) / a:+.1f}%" if a else "new"


def _row(run: str, subject: str, label: str, a: float, b: float) -> list[Cell]:
    return [text(run), text(subject), text(label), Cell(_number(a), a), Cell(_number(b), b),
            text(_change(a, b))]


def comparison_report(a: Result, b: Result, a_name: str, b_name: str) -> Report:
    """Every figure both results hold, with B's change against A."""
    rows = []
    b_runs = {run.label: run for run in b.runs}
    for run_a in a.runs:
        run_b = b_runs.get(run_a.label)
        if run_b is None:
            continue
        for label, get_run in RUN_FIGURES:
            va, vb = get_run(run_a), get_run(run_b)
            if va is not None and vb is not None:
                rows.append(_row(run_a.label, "(ring)", label, va, vb))
        b_subjects = {sibling(s.name): s for s in run_b.subjects}
        for subject_a in run_a.subjects:
            subject_b = b_subjects.get(sibling(subject_a.name))
            if subject_b is None:
                continue
            name = subject_a.name
            if subject_b.name != name:
                name += f" / {subject_b.name}"
            for label, get_subject in SUBJECT_FIGURES:
                va, vb = get_subject(subject_a), get_subject(subject_b)
                if va is not None and vb is not None:
                    rows.append(_row(run_a.label, name, label, va, vb))
    intro = ["\n".join(f"{which}: {code(name)} ({literal(result.started_at)}, "
                       f"commit {code(str(result.git_commit))})"
                       for which, name, result in (("A", a_name, a), ("B", b_name, b)))]
    if not rows:
        return Report("Comparison", [*intro, "The two results share no sweep point and layout."])
    table = Table.of(["ring", "layout", "figure", "A", "B", "B vs A"], rows)
    return Report("Comparison", intro, [Section("", tables=[table])])
