"""Reading one run of the benchmark suite (its pytest-benchmark JSON) into what the gate compares.

- `ratios`: per benchmark id, one per sample of `rounds_per_sample`
  consecutive rounds: the layout's fastest round over the reference's fastest
  round (pytest-benchmark's `stats.data`, `extra_info.reference_seconds`).
  The fastest round is the one the scheduler did not interrupt (plan.py);
- `figures`: the deterministic figures the suite recorded;
- `environment`: what must match for timings to be comparable at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

Figure = int | float | str


@dataclass(frozen=True)
class BenchRun:
    mode: str
    environment: dict[str, str]
    ratios: dict[str, list[float]]
    figures: dict[str, Figure]


def environment_of(machine_info: dict[str, Any]) -> dict[str, str]:
    """The facts a timing ratio depends on. Not the host name: CI runners get a new one
    on every run, and the same CPU model in a fresh container times alike."""
    cpu = machine_info.get("cpu", {})
    version = str(machine_info.get("python_version", "?"))
    return {
        "python": f"{machine_info.get('python_implementation', '?')} "
        + ".".join(version.split(".")[:2]),
        "machine": str(machine_info.get("machine", "?")),
        "cpu": str(cpu.get("brand_raw", "?")),
        "cpu_count": str(cpu.get("count", "?")),
    }


def read_run(path: Path) -> BenchRun:
    """Parse a `--benchmark-json` file written by the suite in `benchmarks/`."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{path}: cannot read the benchmark results ({exc})") from exc
    suite = document.get("ring_bench")
    if not isinstance(suite, dict):
        raise HarnessError(
            f"{path}: no 'ring_bench' section; expected the JSON of `pytest benchmarks "
            "--benchmark-json=...` (the suite's conftest adds it)"
        )
    ratios: dict[str, list[float]] = {}
    for bench in document.get("benchmarks", []):
        extra = bench["extra_info"]
        times = bench["stats"]["data"]
        references = extra["reference_seconds"]
        if len(times) != len(references):
            raise HarnessError(
                f"{path}: {extra['id']} has {len(times)} timed rounds but "
                f"{len(references)} reference rounds"
            )
        size = int(extra["rounds_per_sample"])
        ratios[extra["id"]] = [
            min(times[i : i + size]) / min(references[i : i + size])
            for i in range(0, len(times) - size + 1, size)
        ]
    return BenchRun(
        mode=str(suite["mode"]),
        environment=environment_of(document.get("machine_info", {})),
        ratios=ratios,
        figures=dict(suite["figures"]),
    )
