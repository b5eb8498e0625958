"""Two results side by side: each shared (run, subject) figure with its change.

Runs are paired by sweep point (the same label) where the two results share
one; otherwise by recipe: the same algorithm and construction, so that a ring
of 160 points per unit weight compares with the same fleet at 16 (the row
says `k=160 → k=16`). Both results are read through `harness.core.model`, so
results of different format versions compare alike.

Timings are judged against their noise (`harness.core.noise`): each carries the ratio of
B's median to A's with an interval from the rounds both runs recorded (or, for results
kept without their rounds, from their min-max spreads), and a difference whose interval
does not lie wholly beyond the noise between runs reads "within noise", never as a
change. A sweep point or a subject that only one side holds is named; a figure one side
does not report reads "unknown", never 0.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from harness.core import noise
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


#: rounds each side needs for its timing to be judged: with n rounds a side, all of one
#: run's rounds fall above all of the other's by chance alone with probability
#: 2 / C(2n, n), 2.9% at 4 rounds and 0.8% at 5, so fewer cannot be judged at 99%
MIN_ROUNDS = 5
#: what a figure one side does not report reads as
UNKNOWN = "unknown"


class Rounds(Protocol):
    """A timing as results keep it (`harness.metrics.instruments.timing.Timing`)."""

    @property
    def median(self) -> float: ...
    @property
    def min(self) -> float: ...
    @property
    def max(self) -> float: ...
    @property
    def rounds(self) -> int: ...
    @property
    def samples(self) -> tuple[float, ...] | None: ...


@dataclass(frozen=True)
class Figure:
    label: str
    kind: Kind
    get: Callable[[Any], float | None]
    #: a timing's rounds, whose noise judges its change (None: a deterministic figure)
    timing: Callable[[Any], Rounds | None] | None = None
    #: what the same rounds timed beside it, one sample a round (`judge_timing`), and its
    #: name
    reference: Callable[[Any], Rounds | None] | None = None
    reference_name: str = ""
    #: a measured figure that is no timing (a resident set read from the kernel) steps in
    #: the history only beyond this fraction of its level; deterministic figures: 0
    tolerance: float = 0.0


def _field(metric: str, field: str) -> Callable[[Run | Subject], float | None]:
    def get(owner: Run | Subject) -> float | None:
        record = owner.figure(metric)
        value = getattr(record, field, None) if record is not None else None
        if value is not None and hasattr(value, "median"):
            value = value.median
        return None if value is None else float(value)

    return get


def _rounds(metric: str, field: str) -> Callable[[Subject], Rounds | None]:
    def get(subject: Subject) -> Rounds | None:
        rounds: Rounds | None = getattr(subject.figure(metric), field, None)
        return rounds

    return get


def _timing(label: str, metric: str, field: str, reference: str | None = None,
            reference_name: str = "") -> Figure:
    return Figure(label, "number", _field(metric, field), _rounds(metric, field),
                  _rounds(metric, reference) if reference else None, reference_name)


#: the in-run reference a foreign peer's timing is judged against too
OUR_ROUTE = "our route"


@dataclass(frozen=True)
class _PerRound:
    """A per-round ratio (a foreign peer's time over our reference's in the same rounds)
    as a timing: its median and spread, and its rounds."""

    median: float
    min: float
    max: float
    rounds: int
    samples: tuple[float, ...] | None


def _vs_reference(subject: Subject) -> _PerRound | None:
    record = subject.figure("foreign")
    if record is None or not record.reference_ns.median:
        return None
    mine, ours = record.batch_ns.samples, record.reference_ns.samples
    if mine and ours and len(mine) == len(ours) and all(ours):
        ratios = tuple(m / o for m, o in zip(mine, ours, strict=True))
        return _PerRound(statistics.median(ratios), min(ratios), max(ratios), len(ratios),
                         ratios)
    value = record.batch_ns.median / record.reference_ns.median
    return _PerRound(value, value, value, 1, None)


def _reported(field: str) -> Callable[[Subject], float | None]:
    """A foreign peer's figure that it may not report: 0 there means unknown."""
    def get(subject: Subject) -> float | None:
        value = getattr(subject.figure("foreign"), field, None)
        return float(value) if value else None

    return get


def _pss_growth(subject: Subject) -> float | None:
    record = subject.figure("foreign")
    before = getattr(record, "pss_before_build", None)
    after = getattr(record, "pss_after_build", None)
    return None if before is None or after is None else float(after - before)


def _peer_points(subject: Subject) -> float | None:
    """A peer's points: 0 is what a peer that does not say reads as (no ring has none)."""
    return float(subject.entries) if subject.kind == "peer" and subject.entries > 0 else None


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
    _timing("scalar_ns", "throughput", "scalar_ns"),
    _timing("batch_ns", "throughput", "batch_ns"),
    # Peers, built-in and foreign: what they route like and what they hold.
    Figure("peer: points", "count", _peer_points),
    Figure("peer: same owner as our ring", "fraction",
           lambda subject: subject.agreement if subject.kind == "peer" else None),
    Figure("foreign: agreement with its claimed recipe", "fraction",
           _field("foreign", "agreement")),
    _timing("foreign: batch ns/key, timed by us", "foreign", "batch_ns", "reference_ns",
            OUR_ROUTE),
    _timing("foreign: ns/key by its own clock", "foreign", "self_timed_ns"),
    Figure("foreign: batch time vs our route (per round)", "ratio",
           lambda subject: getattr(_vs_reference(subject), "median", None), _vs_reference),
    Figure("foreign: bytes it reports", "count", _reported("reported_bytes")),
    # PSS moves by a few pages between runs of the same peer (what the kernel shares).
    Figure("foreign: PSS growth at BUILD", "count", _pss_growth, tolerance=0.10),
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


def signed_percent(fraction: float) -> str:
    """A relative change as a signed percentage; never "+0.0%": a change too small for one
    decimal shows two significant digits (+0.0012%)."""
    shown = f"{100 * fraction:+.1f}%"
    if fraction and float(shown[:-1]) == 0:
        shown = f"{100 * fraction:+.2g}%"
    return shown


def _change(a: float, b: float, kind: Kind) -> str:
    """B against A: relative, and for a percentage also in percentage points."""
    if a == b:
        return "="
    relative = signed_percent((b - a) / a) if a else "new"
    if kind == "fraction":
        return f"{100 * (b - a):+.2f} pp ({relative})"
    return relative


@dataclass(frozen=True)
class Judged:
    """A timing's change against its noise: the interval of B over A; the same against
    the reference both runs timed in the same rounds, and of their CPU times, where they
    have them; and the verdict (None for all when a side has fewer than MIN_ROUNDS
    rounds)."""

    interval: noise.Interval | None
    verdict: noise.Verdict | None
    against_reference: noise.Interval | None = None
    cpu: noise.Interval | None = None
    #: why there is no verdict, in words
    why: str = ""


def _per_round(timing: Rounds | None, reference: Rounds | None) -> list[float] | None:
    """A timing's rounds over its reference's, round by round, where both kept them."""
    if timing is None or reference is None or not timing.samples or not reference.samples \
            or len(timing.samples) != len(reference.samples) \
            or len(timing.samples) < MIN_ROUNDS or not all(reference.samples):
        return None
    return [mine / theirs for mine, theirs in zip(timing.samples, reference.samples,
                                                  strict=True)]


def _cpu_ratio(a: Rounds, b: Rounds) -> noise.Interval | None:
    """B's CPU time over A's, where both kept MIN_ROUNDS rounds of it (all above 0)."""
    cpu_a: tuple[float, ...] | None = getattr(a, "cpu_samples", None)
    cpu_b: tuple[float, ...] | None = getattr(b, "cpu_samples", None)
    if not cpu_a or not cpu_b or min(len(cpu_a), len(cpu_b)) < MIN_ROUNDS:
        return None
    try:
        return noise.ratio_of_medians(cpu_a, cpu_b)
    except ValueError:  # a round shorter than the CPU clock's tick reads 0: no ratio
        return None


def judge_timing(a: Rounds, b: Rounds, reference_a: Rounds | None = None,
                 reference_b: Rounds | None = None) -> Judged:
    """B's timing against A's when both have MIN_ROUNDS rounds or more (else unknown): from
    both sides' rounds where the results kept them, else from their min-max spreads.

    A load that slowed the whole machine between the two runs shows in their wall times
    but not in what each round cost the CPU, nor (a foreign peer) in its time over our
    route's in the same rounds, which it slowed alike. So where the runs kept CPU times
    (else a reference), a finding needs them to have moved beyond the noise the same way
    too."""
    if a.rounds < MIN_ROUNDS or b.rounds < MIN_ROUNDS:
        return Judged(None, None, why=f"under {MIN_ROUNDS} rounds")
    try:
        if a.samples and b.samples and min(len(a.samples), len(b.samples)) >= MIN_ROUNDS:
            interval = noise.ratio_of_medians(a.samples, b.samples)
        else:
            interval = noise.spread_ratio(a.median, a.min, a.max, b.median, b.min, b.max)
        relative_a, relative_b = _per_round(a, reference_a), _per_round(b, reference_b)
        against = (noise.ratio_of_medians(relative_a, relative_b)
                   if relative_a and relative_b else None)
    except ValueError:  # a round of zero or less, or more rounds than a run takes
        return Judged(None, None, why="rounds that no run records")
    cpu = _cpu_ratio(a, b)
    verdict = noise.judge(interval)
    # The CPU time where both kept it (it owes nothing to the load), else the reference.
    # Not both: a reference routed in plain Python has wild rounds on a busy machine, and
    # would veto what the CPU time shows plainly.
    other = cpu if cpu is not None else against
    if other is not None and noise.judge(other) != verdict:
        verdict = "within noise"
    return Judged(interval, verdict, against, cpu)


def interval_text(interval: noise.Interval) -> str:
    spreads = ", spreads only" if interval.basis == "spread" else ""
    return f"{interval.ratio:.2f}x ({interval.low:.2f}-{interval.high:.2f}{spreads})"


@dataclass
class Comparison:
    """The comparison's rows, and its timing verdicts counted as they are added."""

    rows: list[list[Cell]]
    findings: list[str]
    within_noise: int = 0
    noise_unknown: int = 0
    #: timings compared with an interval, changed or not
    judged: int = 0

    def add(self, ring: str, subject: str, figure: Figure, owner_a: Any,
            owner_b: Any) -> None:
        va, vb = figure.get(owner_a), figure.get(owner_b)
        if va is None and vb is None:
            return
        cells = [text(ring), text(subject), text(figure.label)]
        if va is None or vb is None:
            self.rows.append([*cells, _shown_or_unknown(va, figure.kind),
                              _shown_or_unknown(vb, figure.kind), text(""), text(UNKNOWN)])
            return
        cells += [_shown(va, figure.kind), _shown(vb, figure.kind)]
        rounds_a = figure.timing(owner_a) if figure.timing else None
        rounds_b = figure.timing(owner_b) if figure.timing else None
        if rounds_a is None or rounds_b is None:
            self.rows.append([*cells, text(""), text(_change(va, vb, figure.kind))])
            return
        reference = figure.reference
        judged = judge_timing(rounds_a, rounds_b,
                              reference(owner_a) if reference else None,
                              reference(owner_b) if reference else None)
        change = _change(va, vb, figure.kind)
        if judged.interval is None:
            self.noise_unknown += change != "="
            shown = change if change == "=" else f"{change} (noise unknown: {judged.why})"
            self.rows.append([*cells, text(""), text(shown)])
            return
        self.judged += 1
        shown = interval_text(judged.interval)
        if judged.against_reference is not None:
            shown += (f"; against {figure.reference_name} in its rounds "
                      f"{interval_text(judged.against_reference)}")
        if judged.cpu is not None:
            shown += f"; CPU time {interval_text(judged.cpu)}"
        interval = Cell(shown, judged.interval.ratio)
        if judged.verdict == "within noise":
            self.within_noise += change != "="
            self.rows.append([*cells, interval, text("=" if change == "=" else "within noise")])
            return
        finding = f"{change} {judged.verdict}"
        if judged.cpu is not None:  # what the code did, where the load moved the wall time
            finding += f" (CPU time {signed_percent(judged.cpu.ratio - 1)})"
        self.findings.append(f"{ring}, {subject}, {figure.label}: {finding} "
                             f"({interval_text(judged.interval)})")
        self.rows.append([*cells, interval, text(finding)])


def _shown_or_unknown(value: float | None, kind: Kind) -> Cell:
    return text(UNKNOWN) if value is None else _shown(value, kind)


def _movement_rows(run_a: Run, run_b: Run, ring: str, rows: Comparison) -> None:
    """The moved fractions of each operation either run measured (matched by operation;
    one measured on one side only reads unknown on the other)."""
    moves_a = {(m.operation, m.server): m for m in run_a.figure("movement") or []}
    moves_b = {(m.operation, m.server): m for m in run_b.figure("movement") or []}
    for key in [*moves_a, *(k for k in moves_b if k not in moves_a)]:
        what = f"{key[0]} {key[1]}"
        for label, field in (("ring moved", "ring_moved_fraction"),
                             ("mod-N moved", "mod_n_moved_fraction")):
            figure = Figure(f"movement, {what}: {label}", "fraction",
                            functools.partial(_moved, key=key, field=field))
            rows.add(ring, "(ring)", figure, moves_a, moves_b)


def _moved(moves: dict[tuple[str, str], Any], *, key: tuple[str, str],
           field: str) -> float | None:
    move = moves.get(key)
    return None if move is None else float(getattr(move, field))


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


def _one_side(a: Result, b: Result, pairs: list[tuple[Run, Run]]) -> list[str]:
    """Sentences naming the sweep points and subjects only one side holds."""
    said = []
    paired_a = {id(run) for run, _ in pairs}
    paired_b = {id(run) for _, run in pairs}
    for which, result, paired in (("A", a, paired_a), ("B", b, paired_b)):
        alone = [code(run.label) for run in result.runs if id(run) not in paired]
        if alone:
            said.append(f"Sweep point(s) only in {which}, not compared: {', '.join(alone)}.")
    for run_a, run_b in pairs:
        names_a = {sibling(s.name) for s in run_a.subjects}
        names_b = {sibling(s.name) for s in run_b.subjects}
        for which, run, others in (("A", run_a, names_b), ("B", run_b, names_a)):
            alone = [code(s.name) for s in run.subjects if sibling(s.name) not in others]
            if alone:
                said.append(f"Only in {which} at {literal(run.label)}: {', '.join(alone)}.")
    return said


def compared(pairs: list[tuple[Run, Run]]) -> Comparison:
    """Every figure either result holds, with B's change against A; timings judged against
    their noise."""
    rows = Comparison([], [])
    for run_a, run_b in pairs:
        ring = (run_a.label if run_a.label == run_b.label
                else f"{run_a.label} → {run_b.label}")
        for figure in RUN_FIGURES:
            rows.add(ring, "(ring)", figure, run_a, run_b)
        _movement_rows(run_a, run_b, ring, rows)
        b_subjects = {sibling(s.name): s for s in run_b.subjects}
        for subject_a in run_a.subjects:
            subject_b = b_subjects.get(sibling(subject_a.name))
            if subject_b is None:
                continue
            name = subject_a.name
            if subject_b.name != name:
                name += f" / {subject_b.name}"
            for figure in SUBJECT_FIGURES:
                rows.add(ring, name, figure, subject_a, subject_b)
    return rows


def comparison_report(a: Result, b: Result, a_name: str, b_name: str) -> Report:
    """The comparison as a report: the verdict on timings, what one side alone holds, and
    the table."""
    pairs = paired_runs(a, b)
    rows = compared(pairs)
    intro = ["\n".join(f"{which}: {code(name)} ({literal(result.started_at)}, "
                       f"commit {commit_markdown(result.git_commit)})"
                       for which, name, result in (("A", a_name, a), ("B", b_name, b)))]
    one_side = _one_side(a, b, pairs)
    if not rows.rows:
        return Report("Comparison", [
            *intro, "The two results share no sweep point and no recipe (algorithm and "
            "construction) to pair their runs by.", *one_side])
    intro.append(_verdict(rows))
    intro += one_side
    table = Table.of(["ring", "layout", "figure", "A", "B", "B/A, 99% interval",
                      "B vs A"], rows.rows,
                     notes=["Percentages change by percentage points (pp), with the relative "
                            "change beside them; every other figure by its relative change. "
                            "Runs at different sweep points are labelled A → B.",
                            "Timings: the ratio of B's median to A's with its "
                            f"{noise.CONFIDENCE:.0%} bootstrap interval over both runs' "
                            "rounds (from their min-max spreads where a result kept no "
                            "rounds). A change is a finding only when the whole interval "
                            f"lies beyond {noise.BETWEEN_RUNS:.2f}x either way (what two runs "
                            "of unchanged code differ by); otherwise it reads \"within "
                            "noise\". A figure one side does not report reads "
                            f"\"{UNKNOWN}\"."])
    return Report("Comparison", intro, [Section("", tables=[table])])


def _verdict(rows: Comparison) -> str:
    """The timings in one sentence: the findings named, the rest counted."""
    parts = []
    if rows.findings:
        parts.append(f"**Timing differences beyond the noise: {len(rows.findings)}**: "
                     + "; ".join(literal(f) for f in rows.findings) + ".")
    else:
        parts.append("**No timing difference beyond the noise.**")
    if rows.within_noise:
        parts.append(f"{rows.within_noise} timing change(s) within the noise.")
    if rows.noise_unknown:
        parts.append(f"{rows.noise_unknown} timing change(s) whose noise is unknown "
                     "(see their rows).")
    return " ".join(parts)
