"""Two worker processes, one per side, asked for samples in turn (A B, then B A, ...).

Why this shape (docs/guide/ab-gate.md has the measurements): both workers stay alive for
the whole run, each holding its side's rings and layouts, and are asked for one sample of
one benchmark at a time, so the two samples of a pair are taken milliseconds apart. What a
shared machine does to a timing (another tenant's burst, a frequency step, a neighbour
filling the L3 cache) mostly lasts longer than that and hits both samples of a pair alike;
a pair's ratio cancels it. Alternating which side goes first, pass after pass, cancels
what going first or second does (a cold cache after the other side ran). Starting a
process per block of rounds, as pyperf does, would spread the two sides seconds apart
and pay a suite's set-up (seconds) each time.

Sampling stops per benchmark once its interval is tight enough for the wanted
sensitivity (`SamplingPlan.sensitivity`), or at `max_pairs`, or when the time budget is
spent: quick, steady benchmarks stop after `min_pairs`, and the noisy ones get the rest.
The stopping rule looks at the interval's width only, never at the ratio itself, so it
does not bias the verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from harness.apps.benchgate.results import UnusableDataError

WORKER_SCRIPT = Path(__file__).with_name("ab_worker.py")
#: a worker runs its side's whole suite before answering: seconds, a minute on a busy machine
START_TIMEOUT_S = 900
#: one sample is a few calls of a few milliseconds
SAMPLE_TIMEOUT_S = 120


@dataclass(frozen=True)
class Side:
    """How to start one side's worker: its interpreter, its suite and its environment."""

    name: str
    suite: Path
    environment: dict[str, str]
    python: str = sys.executable


@dataclass(frozen=True)
class SamplingPlan:
    #: timed calls per sample (after one untimed): a sample is the fastest of them
    rounds: int = 4
    #: every benchmark gets these before any stops: enough for a bootstrap to mean something,
    #: few enough that on a loaded machine the budget is left for the noisy benchmarks
    min_pairs: int = 8
    max_pairs: int = 60
    #: stop sampling a benchmark once its minimum detectable effect is at most this (for a
    #: build, once its interval is as narrow as a lookup's would need to be: sampling_need)
    sensitivity: float = 1.10
    #: wall-clock budget for sampling (set-up excluded); every benchmark gets min_pairs. On a
    #: quiet machine every interval is tight long before it; under a load of 11-14 on two
    #: cores a request waits tens of milliseconds for a core, the first 8 pairs took ~50 s,
    #: and 60 s left the 1M-ring C batch lookups at 10 pairs (detectable 1.19-1.26x). The
    #: short gate slows as much there (160 s against 27 s quiet), so the budget can grow.
    max_seconds: float = 90.0
    #: passes between two looks at the intervals (a look bootstraps every open benchmark)
    check_every: int = 4


@dataclass
class SideInfo:
    benchmarks: dict[str, int]
    ring_bench: dict[str, Any]
    harness: str


@dataclass
class Samples:
    """Per benchmark, the (base, candidate) seconds per key of each pair, in order."""

    pairs: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    seconds: float = 0.0


class Worker:
    def __init__(self, side: Side, mode: str, log: IO[bytes]) -> None:
        self.side = side
        self.process = subprocess.Popen(
            [side.python, "-P", str(WORKER_SCRIPT), str(side.suite), mode],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            env=side.environment, cwd=side.suite, text=True, encoding="utf-8",
            process_group=0)

    def receive(self, timeout: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not ready:
            raise UnusableDataError(f"the {self.side.name} worker gave no answer in {timeout} s")
        if not line:
            raise UnusableDataError(
                f"the {self.side.name} worker stopped (exit {self.process.wait()})")
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise UnusableDataError(f"the {self.side.name} worker sent {line[:80]!r}")
        if "error" in message:
            raise UnusableDataError(f"the {self.side.name} side: {message['error']}")
        return message

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def hello(self) -> SideInfo:
        message = self.receive(START_TIMEOUT_S)
        benchmarks = {str(b["id"]): int(b["scale"]) for b in message.get("benchmarks", [])}
        if not benchmarks:
            raise UnusableDataError(f"the {self.side.name} side's suite defines no timings")
        return SideInfo(benchmarks, dict(message.get("ring_bench") or {}),
                        str(message.get("harness", "")))

    def sample(self, benchmark: str, rounds: int) -> float:
        self.send({"sample": benchmark, "rounds": rounds})
        return float(self.receive(SAMPLE_TIMEOUT_S)["seconds"])

    def close(self, abandon: bool = False) -> None:
        """Ask the worker to quit (30 s), else kill it. `abandon` (the run is stopping: a
        signal, a refusal): kill its process group at once; a worker still setting up its
        suite would not read the request before minutes."""
        if abandon:
            self.kill()
        if self.process.poll() is None:
            try:
                self.send({"quit": True})
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()

    def kill(self) -> None:
        """The worker and whatever it started (its own process group), killed and reaped."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


class Sampler(Protocol):
    """What `sample` asks of each side: one sample of a benchmark, in seconds (a `Worker`;
    the gate of any implementation, harness.apps.gate, holds two foreign peers instead)."""

    def sample(self, benchmark: str, rounds: int) -> float: ...


def sample(base: Sampler, candidate: Sampler, scales: dict[str, tuple[int, int]],
           plan: SamplingPlan, detectable: Callable[[str, list[tuple[float, float]]], float],
           ) -> Samples:
    """Pairs of samples of every benchmark in `scales` (id -> the two sides' round scales),
    base first on even passes and candidate first on odd ones, until each benchmark's
    `detectable(id, pairs)` reaches the plan's sensitivity, its max_pairs, or the budget
    runs out (after min_pairs)."""
    samples = Samples({benchmark: [] for benchmark in scales})
    started = time.monotonic()
    open_benchmarks = list(scales)
    passes = 0
    while open_benchmarks:
        for benchmark in open_benchmarks:
            base_scale, candidate_scale = scales[benchmark]
            if passes % 2 == 0:
                then = base.sample(benchmark, plan.rounds)
                now = candidate.sample(benchmark, plan.rounds)
            else:
                now = candidate.sample(benchmark, plan.rounds)
                then = base.sample(benchmark, plan.rounds)
            samples.pairs[benchmark].append((then / base_scale, now / candidate_scale))
        passes += 1
        if passes < plan.min_pairs:
            continue
        if time.monotonic() - started > plan.max_seconds or passes >= plan.max_pairs:
            break
        if (passes - plan.min_pairs) % plan.check_every == 0:
            open_benchmarks = [b for b in open_benchmarks
                               if detectable(b, samples.pairs[b]) > plan.sensitivity]
    samples.seconds = time.monotonic() - started
    return samples


def base_environment(source: Path) -> dict[str, str]:
    """The environment of the base's worker: its exported tree first on the path, nothing
    of the candidate's (PYTHONPATH replaced), hash seed fixed as in tox's bench env."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return {**environment, "PYTHONPATH": str(source), "PYTHONHASHSEED": "0"}


def candidate_environment() -> dict[str, str]:
    return {**os.environ, "PYTHONHASHSEED": "0"}
