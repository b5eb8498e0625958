"""Reading one run of the benchmark suite (its pytest-benchmark JSON) into what the gate compares.

- `ratios`: per benchmark id, one per sample of `rounds_per_sample`
  consecutive rounds: the layout's fastest round over the reference's fastest
  round (pytest-benchmark's `stats.data`, `extra_info.reference_seconds`).
  The fastest round is the one the scheduler did not interrupt (plan.py). A
  round that did several times the reference's work (`extra_info.round_scale`,
  default 1: a quick batch over more keys) is divided by it, so the ratio is
  per key whatever the scale;
- `figures`: the deterministic figures the suite recorded;
- `environment`: what must match for timings to be comparable at all (a counts
  run adds the valgrind version it was counted with);
- `skipped`: the layouts and rings ("layout/ring") the run's plan left out on purpose,
  each with its reason (over the memory budget, not judged by counts), so that what
  they would have measured is not missing from the run (decide.py: `unmatched`).

Everything is checked on the way in: a file the gate cannot judge (no timings,
no figures, NaN, times that are not positive, too few samples, a mode the suite
does not define) raises `UnusableDataError`, which the gate reports as exit 2,
never as a pass or a regression.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.apps.benchgate.plan import PLANS, get_plan
from harness.core.errors import HarnessError
from harness.core.safe_read import bounded_int, read_regular_file

Figure = int | float | str

#: a results file of the full suite is well under 10 MB; anything far larger is not one
RESULTS_LIMIT_BYTES = 256 * 2**20


class UnusableDataError(HarnessError):
    """A results or baseline document the gate cannot judge: the gate exits 2."""


def smallest_p_value(samples_now: int, samples_then: int) -> float:
    """The smallest p-value a one-sided Mann-Whitney U test can give for these sample
    counts: every ordering of the pooled samples is equally likely under the null
    hypothesis, and the most extreme one is one of C(n + m, n)."""
    return 1 / math.comb(samples_now + samples_then, samples_now)


def minimum_samples(alpha: float) -> int:
    """The fewest samples per side (equal counts) with which a regression can reach p < alpha."""
    samples = 1
    while smallest_p_value(samples, samples) >= alpha:
        samples += 1
    return samples


@dataclass(frozen=True)
class BenchRun:
    mode: str
    environment: dict[str, str]
    ratios: dict[str, list[float]]
    figures: dict[str, Figure]
    #: "layout/ring" -> why the plan left it out of this run (a baseline has none)
    skipped: dict[str, str] = field(default_factory=dict)


def environment_of(machine_info: dict[str, Any]) -> dict[str, str]:
    """The facts a timing ratio depends on. Not the host name: CI runners get a new one
    on every run, and the same CPU model in a fresh container times alike."""
    cpu = machine_info.get("cpu", {})
    if not isinstance(cpu, dict):
        cpu = {}
    version = str(machine_info.get("python_version", "?"))
    return {
        "python": f"{machine_info.get('python_implementation', '?')} "
        + ".".join(version.split(".")[:2]),
        "machine": str(machine_info.get("machine", "?")),
        "cpu": str(cpu.get("brand_raw", "?")),
        "cpu_count": str(cpu.get("count", "?")),
    }


def check_mode(mode: object, where: str) -> str:
    """`mode` if it names one of the suite's plans; it becomes a file name in the baseline
    directory, so nothing else (a path, `..`) may pass."""
    if not isinstance(mode, str) or mode not in PLANS:
        raise UnusableDataError(
            f"{where}: mode must be one of the suite's modes ({', '.join(PLANS)}) "
            f"(got {_short(mode)})"
        )
    return mode


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def positive_times(value: object, where: str) -> list[float]:
    """A non-empty list of finite, positive numbers (seconds or ratios)."""
    if not isinstance(value, list) or not value:
        raise UnusableDataError(
            f"{where} must be a non-empty list of numbers (got {_short(value)})"
        )
    for item in value:
        if (
            isinstance(item, bool)
            or not isinstance(item, int | float)
            or not math.isfinite(item)
            or item <= 0
        ):
            raise UnusableDataError(
                f"{where} must hold finite positive numbers (got {_short(item)})"
            )
    return [float(item) for item in value]


def check_figures(value: object, where: str) -> dict[str, Figure]:
    """A non-empty mapping of figure names to finite numbers or strings."""
    if not isinstance(value, dict) or not value:
        raise UnusableDataError(
            f"{where} must be a non-empty object of figures (got {_short(value)})"
        )
    for name, figure in value.items():
        number = isinstance(figure, int | float) and not isinstance(figure, bool)
        if not (isinstance(figure, str) or (number and math.isfinite(figure))):
            raise UnusableDataError(
                f"{where}.{name} must be a finite number or a string (got {_short(figure)})"
            )
    return dict(value)


def check_skipped(value: object, where: str) -> dict[str, str]:
    """An object of "layout/ring" names to reasons (strings); absent in older reports."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UnusableDataError(f"{where} must be an object (got {_short(value)})")
    for name, reason in value.items():
        if name.count("/") != 1 or "" in name.split("/") or not isinstance(reason, str):
            raise UnusableDataError(
                f"{where}: expected \"layout/ring\": reason (got {_short(name)}: "
                f"{_short(reason)})"
            )
    return dict(value)


def _field(container: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = container.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise UnusableDataError(
            f"{where}.{key} must be a {kind.__name__} (got {_short(value)})"
        )
    return value


def _ratios_of(bench: object, where: str, min_samples: int) -> tuple[str, list[float]]:
    if not isinstance(bench, dict):
        raise UnusableDataError(f"{where} must be an object (got {_short(bench)})")
    extra = _field(bench, "extra_info", dict, where)
    stats = _field(bench, "stats", dict, where)
    benchmark = _field(extra, "id", str, f"{where}.extra_info")
    where = f"benchmark {benchmark}"
    times = positive_times(stats.get("data"), f"{where}: stats.data")
    references = positive_times(extra.get("reference_seconds"), f"{where}: reference_seconds")
    if len(times) != len(references):
        raise UnusableDataError(
            f"{where} has {len(times)} timed rounds but {len(references)} reference rounds"
        )
    size = _field(extra, "rounds_per_sample", int, where)
    if size < 1:
        raise UnusableDataError(f"{where}: rounds_per_sample must be at least 1 (got {size})")
    scale = extra.get("round_scale", 1)
    if not isinstance(scale, int) or isinstance(scale, bool) or scale < 1:
        raise UnusableDataError(
            f"{where}: round_scale must be a whole number of at least 1 (got {_short(scale)})"
        )
    ratios = [
        min(times[i : i + size]) / scale / min(references[i : i + size])
        for i in range(0, len(times) - size + 1, size)
    ]
    if len(ratios) < min_samples:
        raise UnusableDataError(
            f"{where}: {len(ratios)} samples ({len(times)} rounds of {size}); at least "
            f"{min_samples} are needed to judge a change"
        )
    if not all(math.isfinite(r) and r > 0 for r in ratios):
        raise UnusableDataError(f"{where}: a time ratio out of range (times {times[:3]}...)")
    return benchmark, ratios


def read_run(path: Path, min_samples: int) -> BenchRun:
    """Parse a `--benchmark-json` file written by the suite in `benchmarks/`; every
    benchmark needs `min_samples` samples."""
    data = read_regular_file(path, RESULTS_LIMIT_BYTES, "benchmark results", UnusableDataError)
    try:
        document = json.loads(data, parse_int=bounded_int)
    except (ValueError, RecursionError) as exc:
        raise UnusableDataError(f"{path}: not JSON ({str(exc)[:100]})") from None
    if not isinstance(document, dict):
        raise UnusableDataError(
            f"{path}: expected a JSON object (got {type(document).__name__})"
        )
    suite = document.get("ring_bench")
    if not isinstance(suite, dict):
        raise UnusableDataError(
            f"{path}: no 'ring_bench' section; expected the JSON of `pytest benchmarks "
            "--benchmark-json=...` (the suite's conftest adds it)"
        )
    mode = check_mode(suite.get("mode"), f"{path}: ring_bench.mode")
    benchmarks = document.get("benchmarks")
    # A counts plan times nothing: its figures are all there is.
    timed = get_plan(mode).measures == "time"
    if not isinstance(benchmarks, list) or (timed and not benchmarks):
        raise UnusableDataError(
            f"{path}: benchmarks must be a non-empty list of timings (got {_short(benchmarks)})"
        )
    ratios: dict[str, list[float]] = {}
    for index, bench in enumerate(benchmarks):
        benchmark, samples = _ratios_of(bench, f"{path}: benchmarks[{index}]", min_samples)
        if benchmark in ratios:
            raise UnusableDataError(f"{path}: benchmark {benchmark} appears twice")
        ratios[benchmark] = samples
    machine_info = document.get("machine_info", {})
    environment = environment_of(machine_info if isinstance(machine_info, dict) else {})
    extra = suite.get("environment", {})
    if isinstance(extra, dict):
        environment.update({str(key): str(value) for key, value in extra.items()})
    return BenchRun(
        mode=mode,
        environment=environment,
        ratios=ratios,
        figures=check_figures(suite.get("figures"), f"{path}: ring_bench.figures"),
        skipped=check_skipped(suite.get("skipped"), f"{path}: ring_bench.skipped"),
    )
