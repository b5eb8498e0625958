"""Reading figures out of typed results (as written by `python -m harness run`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.core.errors import HarnessError
from harness.core.invocation import HARNESS
from harness.core.model import Result, RingInfo, Run
from harness.metrics.balance import Balance
from harness.metrics.memory import Memory
from harness.metrics.movement import Movement

#: results by scenario name
Results = Mapping[str, Result]


class MissingResult(HarnessError):
    """A figure reads a scenario whose result the report was not given (`--only`)."""


def run_of(results: Results, scenario: str, k: int | None = None) -> Run:
    """The sweep point of `scenario` at k points per weight (or its only one)."""
    if scenario not in results:
        raise MissingResult(
            f"no result for scenario {scenario!r}; run `{HARNESS.name()} reproduce`")
    matching = [r for r in results[scenario].runs if k is None or r.points_per_weight == k]
    if len(matching) != 1:
        raise HarnessError(f"result {scenario!r} has no single run at k={k}")
    return matching[0]


def _required(value: object, what: str, scenario: str) -> object:
    if value is None:
        raise HarnessError(f"result {scenario!r} has no {what}; re-run it with that metric")
    return value


def ring_info(results: Results, scenario: str, k: int | None = None) -> RingInfo:
    ring = _required(run_of(results, scenario, k).ring, "ring", scenario)
    assert isinstance(ring, RingInfo)
    return ring


@dataclass(frozen=True)
class RingBalance:
    """A ring's balance, with the figures only rings have (exact shares, theory) present."""

    servers: int
    keys: int
    min_keys: int
    max_keys: int
    cv_keys: float
    cv_arcs: float
    cv_theory: float
    cv_floor: float
    arc_shares: tuple[float, ...]


def balance(results: Results, scenario: str, k: int | None = None) -> RingBalance:
    record = _required(run_of(results, scenario, k).figure("balance"), "balance", scenario)
    assert isinstance(record, Balance)
    if (record.cv_arcs is None or record.cv_theory is None or record.cv_floor is None
            or record.arc_shares is None):
        raise HarnessError(f"result {scenario!r}: balance without exact shares; not a ring")
    return RingBalance(record.servers, record.keys, record.min_keys, record.max_keys,
                       record.cv_keys, record.cv_arcs, record.cv_theory, record.cv_floor,
                       record.arc_shares)


def memory_of(results: Results, scenario: str, k: int | None, name: str) -> Memory:
    subject = run_of(results, scenario, k).subject(name)
    record = _required(subject.figure("memory"), f"memory of {name}", scenario)
    assert isinstance(record, Memory)
    return record


def movement(results: Results, scenario: str) -> Movement:
    """The first (in these scenarios: only) operation's movement record."""
    records = _required(run_of(results, scenario).figure("movement"), "movement", scenario)
    assert isinstance(records, list)
    first = records[0]
    assert isinstance(first, Movement)
    return first


def kib_per_server(results: Results, scenario: str, k: int, name: str) -> float:
    """Allocator-measured bytes of a layout, per server, in KiB."""
    structure_bytes = float(memory_of(results, scenario, k, name).structure_bytes)
    return structure_bytes / ring_info(results, scenario, k).servers / 1024


def packing_saving(results: Results, scenario: str, family: str) -> float:
    """Percent of allocator bytes saved by `family`-packed against `family`-aligned."""
    aligned = memory_of(results, scenario, None, f"{family}-aligned").structure_bytes
    packed = memory_of(results, scenario, None, f"{family}-packed").structure_bytes
    return 100 * (1 - float(packed) / float(aligned))
