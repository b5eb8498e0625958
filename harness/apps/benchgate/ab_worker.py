"""One side of an A/B gate run: a process that holds one side's benchmarks and times them
on request (`harness.apps.benchgate.ab_session` drives two of them, one per side).

Run as a script, never imported by the driver: `python -P ab_worker.py SUITE MODE`. It
imports nothing of ring-harness itself, so the `harness` that the suite in SUITE imports
is the one on that interpreter's path: the base's build on one side, the candidate's on
the other. (`-P`: neither the script's folder nor the current one is put on the path.)

It runs that side's own suite (`pytest SUITE --bench-mode=MODE`) with pytest-benchmark's
`pedantic` replaced by one that keeps each benchmark's timed call and its reference
round instead of timing them, so each side measures exactly what its suite defines. The
suite's figure tests run as usual, and their figures (the suite's `ring_bench` section)
are sent to the driver with the list of benchmarks.

Protocol: one JSON object per line. stdout is the driver's channel alone (the suite's
own output is moved to stderr). First the worker sends
`{"benchmarks": [{"id": ..., "scale": ...}, ...], "ring_bench": {...}, "harness": path}`
or `{"error": "..."}`; then it answers each `{"sample": id, "rounds": n}` with
`{"seconds": s}` (the fastest of n timed calls, after one untimed call that brings the
benchmark's data back into the caches; with `"reference": true` also the fastest of the
suite's reference rounds, timed before each call, as `reference_seconds`: how the
design was chosen), and stops on `{"quit": true}` or end of input.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable
from time import perf_counter
from typing import Any, TextIO


class Captured:
    """What the suite asked pytest-benchmark to time: the call, and the fixture whose
    `extra_info` the suite fills in after `pedantic` returns (id, round_scale)."""

    def __init__(self, fixture: Any, target: Callable[[], object],
                 setup: Callable[[], object] | None) -> None:
        self.fixture = fixture
        self.target = target
        #: the suite runs (and times) the benchmark's reference round in pytest-benchmark's
        #: setup hook, before every timed round
        self.setup = setup

    @property
    def benchmark_id(self) -> str:
        return str(self.fixture.extra_info.get("id", self.fixture.name))

    @property
    def scale(self) -> int:
        scale = self.fixture.extra_info.get("round_scale", 1)
        return scale if isinstance(scale, int) and scale >= 1 else 1


class SuiteCollector:
    """A pytest plugin: keeps the suite's `ring_bench` section (figures, plan skips)."""

    def __init__(self) -> None:
        self.ring_bench: dict[str, Any] = {}

    def pytest_sessionfinish(self, session: Any) -> None:
        output: dict[str, Any] = {}
        hook = session.config.hook
        if hasattr(hook, "pytest_benchmark_update_json"):
            hook.pytest_benchmark_update_json(config=session.config, benchmarks=[],
                                              output_json=output)
        section = output.get("ring_bench")
        self.ring_bench = section if isinstance(section, dict) else {}


def load_suite(suite: str, mode: str) -> tuple[dict[str, Captured], dict[str, Any], int]:
    """Run the suite with timing replaced by capture: its benchmarks, `ring_bench` section
    and pytest's exit status."""
    import pytest
    from pytest_benchmark import fixture as benchmark_fixture

    captured: list[Captured] = []

    def pedantic(self: Any, target: Callable[..., object], args: tuple[Any, ...] = (),
                 kwargs: dict[str, Any] | None = None, setup: Callable[[], object] | None = None,
                 **_timing: Any) -> None:
        self._mode = "captured by the A/B gate"
        call_args, call_kwargs = args, kwargs or {}
        captured.append(Captured(self, lambda: target(*call_args, **call_kwargs), setup))

    benchmark_fixture.BenchmarkFixture.pedantic = pedantic  # type: ignore[method-assign,assignment]  # capture, not time
    collector = SuiteCollector()
    status = pytest.main([suite, "-q", "-p", "no:cacheprovider", f"--bench-mode={mode}"],
                         plugins=[collector])
    return {c.benchmark_id: c for c in captured}, collector.ring_bench, int(status)


def time_sample(benchmark: Captured, rounds: int, reference: bool) -> dict[str, float]:
    """The fastest of `rounds` timed calls, after one untimed one, with the collector off
    (a collection landing in one round would be timed as that benchmark's); with
    `reference`, each round follows one timed round of the suite's reference too."""
    target, setup = benchmark.target, benchmark.setup if reference else None
    target()
    fastest = fastest_reference = float("inf")
    gc.disable()
    try:
        for _ in range(rounds):
            if setup is not None:
                start = perf_counter()
                setup()
                fastest_reference = min(fastest_reference, perf_counter() - start)
            start = perf_counter()
            target()
            fastest = min(fastest, perf_counter() - start)
    finally:
        gc.enable()
    answer = {"seconds": fastest}
    if setup is not None:
        answer["reference_seconds"] = fastest_reference
    return answer


def send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message) + "\n")
    channel.flush()


def serve(channel: TextIO, benchmarks: dict[str, Captured]) -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("quit"):
            return
        benchmark = benchmarks.get(request.get("sample"))
        if benchmark is None:
            send(channel, {"error": f"no benchmark {request.get('sample')!r} on this side"})
            continue
        send(channel, time_sample(benchmark, int(request.get("rounds", 1)),
                                  bool(request.get("reference"))))


def main() -> int:
    suite, mode = sys.argv[1], sys.argv[2]
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    try:
        benchmarks, ring_bench, status = load_suite(suite, mode)
        # which harness the suite imported: the driver checks it is this side's own
        harness_path = str(getattr(sys.modules.get("harness"), "__file__", ""))
    except Exception as exc:  # anything the base's suite raises is reported, not shown raw
        send(channel, {"error": f"{type(exc).__name__}: {exc}"})
        return 1
    if status != 0:
        send(channel, {"error": f"its benchmark suite failed (pytest exit {status})"})
        return 1
    send(channel, {"benchmarks": [{"id": b.benchmark_id, "scale": b.scale}
                                  for b in benchmarks.values()],
                   "ring_bench": ring_bench, "harness": harness_path})
    gc.collect()
    serve(channel, benchmarks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
