"""The figures a gate judges, read from a result document (its JSON, as a dict).

Small accessors over what a run already records, so that the gate reads results of any
format-2 run without a model of its own: per sweep point (`runs[].label`), each subject
(a layout, a peer) and the point's ring. A figure a result does not hold is absent from
what these return, and the gate reports it as unknown, never as 0.

- ns_per_key: a peer's `figures.foreign.batch_ns` over its `reference_ns` (our
  reference, timed in the same rounds); a layout's `figures.throughput.batch_ns` over
  `random_access_ns` (the random-access floor, same rounds), shown but not judged;
- structure_bytes, bytes_per_entry, peak_build_bytes: `figures.memory` of a layout or a
  peer (a peer without it: the bytes it reports, and those over its entries);
- agreement: a peer's `agreement` (with the recipe it claims, or the scenario's ring);
- cv: the sweep point's `figures.balance.cv_keys`;
- moved: `figures.movement[].ring_moved_fraction`, and a peer's `figures.foreign.moves[]`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Observed:
    """One figure of one subject in one run: its value, and the range its rounds gave."""

    subject: str
    figure: str
    value: float
    low: float | None = None
    high: float | None = None
    #: a timing over a reference that routes the same keys in the same rounds (a peer's);
    #: False for a layout's, over the random-access floor, which is too small and too
    #: noisy a divisor to judge a change by across runs (shown, not judged)
    referenced: bool = True

    @property
    def key(self) -> tuple[str, str]:
        return self.subject, self.figure


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _timing_ratio(timed: object, reference: object) -> tuple[float, float, float] | None:
    """(median, min, max) of a timing over its reference's median; None if either is
    missing or the reference is not positive."""
    if not isinstance(timed, Mapping) or not isinstance(reference, Mapping):
        return None
    base = _number(reference.get("median"))
    values = [_number(timed.get(k)) for k in ("median", "min", "max")]
    if base is None or base <= 0 or any(v is None for v in values):
        return None
    median, low, high = (v / base for v in values if v is not None)
    return median, low, high


def _memory(subject: str, memory: object) -> Iterator[Observed]:
    if not isinstance(memory, Mapping):
        return
    for figure, field in (("structure_bytes", "structure_bytes"),
                          ("bytes_per_entry", "bytes_per_entry"),
                          ("peak_build_bytes", "build_peak_bytes")):
        value = _number(memory.get(field))
        if value is not None:
            yield Observed(subject, figure, value)


def _subject(label: str, record: Mapping[str, Any]) -> Iterator[Observed]:
    name = f"{label}/{record.get('name')}"
    figures = record.get("figures") or {}
    memory = figures.get("memory")
    yield from _memory(name, memory)
    if record.get("kind") == "peer":
        foreign = figures.get("foreign")
        if isinstance(foreign, Mapping):
            ratio = _timing_ratio(foreign.get("batch_ns"), foreign.get("reference_ns"))
            if ratio is not None:
                yield Observed(name, "ns_per_key", *ratio)
            for move in foreign.get("moves") or []:
                if not isinstance(move, Mapping):
                    continue
                fraction = _number(move.get("moved_fraction"))
                if fraction is not None:
                    yield Observed(f"{name} {move.get('operation')} {move.get('server')}",
                                   "moved", fraction)
        if not isinstance(memory, Mapping):
            nbytes, entries = _number(record.get("nbytes")), _number(record.get("entries"))
            if nbytes:
                yield Observed(name, "structure_bytes", nbytes)
                if entries:
                    yield Observed(name, "bytes_per_entry", nbytes / entries)
        agreement = _number(record.get("agreement"))
        if agreement is not None:
            yield Observed(name, "agreement", agreement)
    else:
        throughput = figures.get("throughput")
        if isinstance(throughput, Mapping):
            ratio = _timing_ratio(throughput.get("batch_ns"), throughput.get("random_access_ns"))
            if ratio is not None:
                yield Observed(name, "ns_per_key", *ratio, referenced=False)


def result_figures(document: Mapping[str, Any]) -> dict[tuple[str, str], Observed]:
    """Every figure the gate knows of, in a result document, by (subject, figure)."""
    found: dict[tuple[str, str], Observed] = {}
    for run in document.get("runs") or []:
        if not isinstance(run, Mapping):
            continue
        label = str(run.get("label"))
        for record in run.get("subjects") or []:
            if isinstance(record, Mapping):
                found.update((o.key, o) for o in _subject(label, record))
        figures = run.get("figures") or {}
        balance = figures.get("balance")
        cv = _number(balance.get("cv_keys")) if isinstance(balance, Mapping) else None
        if cv is not None:
            found[(f"{label}/ring", "cv")] = Observed(f"{label}/ring", "cv", cv)
        for move in figures.get("movement") or []:
            if not isinstance(move, Mapping):
                continue
            fraction = _number(move.get("ring_moved_fraction"))
            if fraction is not None:
                subject = f"{label}/ring {move.get('operation')} {move.get('server')}"
                found[(subject, "moved")] = Observed(subject, "moved", fraction)
    return found


def machine_cpu(document: Mapping[str, Any]) -> str | None:
    """The CPU name the result records (None: not recorded)."""
    machine = document.get("machine")
    cpu = machine.get("cpu") if isinstance(machine, Mapping) else None
    return cpu if isinstance(cpu, str) and cpu else None
