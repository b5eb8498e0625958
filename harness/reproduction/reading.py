"""Reading figures out of result documents (as written by `python -m harness run`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

#: the reproduction's scenarios; each writes results/reproduce/NAME.json
SCENARIO_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "reproduce"
#: result documents by scenario name
Results = Mapping[str, dict[str, Any]]


def run_of(results: Results, scenario: str, k: int | None = None) -> dict[str, Any]:
    """The sweep point of `scenario` at k points per weight (or its only one)."""
    if scenario not in results:
        raise HarnessError(
            f"no result for scenario {scenario!r}; run `python -m harness reproduce`")
    runs = results[scenario]["runs"]
    matching = [r for r in runs if k is None or r["points_per_weight"] == k]
    if len(matching) != 1:
        raise HarnessError(f"result {scenario!r} has no single run at k={k}")
    return dict(matching[0])


def balance(results: Results, scenario: str, k: int | None = None) -> dict[str, Any]:
    return dict(run_of(results, scenario, k)["balance"])


def layout(results: Results, scenario: str, k: int | None, name: str) -> dict[str, Any]:
    records = run_of(results, scenario, k)["layouts"]
    return dict(next(r for r in records if r["layout"] == name))


def movement(results: Results, scenario: str) -> dict[str, Any]:
    """The first (in these scenarios: only) operation's movement record."""
    return dict(run_of(results, scenario)["movement"][0])


def kib_per_server(results: Results, scenario: str, k: int, name: str) -> float:
    """Allocator-measured bytes of a layout, per server, in KiB."""
    run = run_of(results, scenario, k)
    structure_bytes = float(layout(results, scenario, k, name)["structure_bytes"])
    return structure_bytes / int(run["ring"]["servers"]) / 1024


def packing_saving(results: Results, scenario: str, family: str) -> float:
    """Percent of allocator bytes saved by `family`-packed against `family`-aligned."""
    aligned = layout(results, scenario, None, f"{family}-aligned")["structure_bytes"]
    packed = layout(results, scenario, None, f"{family}-packed")["structure_bytes"]
    return 100 * (1 - float(packed) / float(aligned))
