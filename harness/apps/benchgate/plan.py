"""What the benchmark suite measures in each mode: ring sizes, rounds and key counts.

Modes are named presets, so a baseline recorded in one mode is only ever
compared with a run of the same mode (the figures and ratios depend on them).
A plan either times the suite (`measures = "time"`: pytest-benchmark rounds,
compared as ratios) or counts it (`"counts"`: each layout's builds and lookups
run once under callgrind, compared as exact instruction and miss counts).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.errors import UnknownNameError


@dataclass(frozen=True)
class RingSize:
    """One ring of the plan: `servers` x `points_per_server` points before collisions."""

    label: str
    servers: int
    points_per_server: int

    @property
    def points(self) -> int:
        return self.servers * self.points_per_server


#: rings with at least this many points outgrow a 2 MiB L2 cache (4 bytes per position)
MEMORY_BOUND_POINTS = 1_000_000

#: a batch lookup whose call over the plan's keys finishes faster than this looks up
#: more keys per call, so that the work, not the call, is what is timed: the bucketed
#: layout over the 16k ring reads 4,000 keys in ~15 us, two thirds of it Python call
#: overhead, and its ratio moved 0.062 -> 0.093 between unchanged runs (and 1.6-2.5x
#: within minutes while other guests loaded the host); over 16 times the keys it moved
#: 1.3x. The search-based layouts take ~0.4 ms and keep the plan's keys.
MIN_ROUND_SECONDS = 100e-6
#: scales come in powers of this, so a small drift in a call's speed between runs seldom
#: changes the scale (which would move the overhead's share a little)
ROUND_SCALE_STEP = 4
MAX_ROUND_SCALE = 16


def round_scale(seconds_per_call: float) -> int:
    """How many times the plan's batch keys a timed call should look up, for an operation
    that takes `seconds_per_call` over them: 1, 4 or 16, the fewest that reach
    MIN_ROUND_SECONDS. The reference keeps the plan's keys; the gate divides the round's
    time by the scale (results.py), so ratios stay per key."""
    scale = 1
    while scale * seconds_per_call < MIN_ROUND_SECONDS and scale < MAX_ROUND_SCALE:
        scale *= ROUND_SCALE_STEP
    return scale


@dataclass(frozen=True)
class BenchPlan:
    name: str
    rings: tuple[RingSize, ...]
    #: samples per benchmark that the gate's significance test sees
    samples: int
    #: short timed rounds per sample; the sample is the fastest of them (see below)
    rounds_per_sample: int
    warmup_rounds: int
    #: keys per round of the scalar lookup loop
    scalar_keys: int
    #: keys per round of one lookup_many call
    batch_keys: int
    #: keys checked for routing parity (not timed)
    parity_keys: int = 100_000
    #: seed of the key workload, so routing digests are reproducible
    seed: int = 20260501
    #: "time" (timings and deterministic figures) or "counts" (callgrind's counts only)
    measures: str = "time"

    def __post_init__(self) -> None:
        # A quick batch looks up to MAX_ROUND_SCALE times the batch keys, drawn from the
        # parity keys (round_scale).
        if self.measures == "time" and self.parity_keys < self.batch_keys * MAX_ROUND_SCALE:
            raise ValueError(
                f"plan {self.name}: parity_keys ({self.parity_keys}) must be at least "
                f"{MAX_ROUND_SCALE} x batch_keys ({self.batch_keys})"
            )

    @property
    def floor_rings(self) -> tuple[RingSize, ...]:
        """The rings the random-access floor is timed on: those too big for the L2 cache.
        On a ring that fits (the 16k ring's positions take 64 KiB) the floor times call
        overhead, not memory, and its ratio moved 1.5x between unchanged runs."""
        return tuple(ring for ring in self.rings if ring.points >= MEMORY_BOUND_POINTS)

    @property
    def rounds(self) -> int:
        return self.samples * self.rounds_per_sample


# Why samples of several short rounds: on a shared machine the scheduler takes the CPU
# away for whole time slices (4 ms here), which adds 4 ms to whatever round it lands in.
# Rounds well under a slice (0.1-0.5 ms, hence the few keys) are mostly untouched, and the
# fastest round of a sample is an undisturbed one; the reference gets the same treatment.
# 16,000 points x 6-8 bytes (96-128 KiB) sit in L2 (1 MiB per core here); 4,000,000
# points (24-32 MiB) fill the shared L3 and miss it, so lookups pay memory latency.
SMALL = RingSize("16k", servers=100, points_per_server=160)
BIG = RingSize("4M", servers=1000, points_per_server=4000)
# CI's big ring: still eight times L2 (6-8 MiB), generated in about a second.
BIG_SHORT = RingSize("1M", servers=250, points_per_server=4000)

PLANS: dict[str, BenchPlan] = {
    plan.name: plan
    for plan in (
        BenchPlan(
            "full",
            (SMALL, BIG),
            samples=25,
            rounds_per_sample=10,
            warmup_rounds=4,
            scalar_keys=200,
            batch_keys=4_000,
        ),
        BenchPlan(
            "short",
            (SMALL, BIG_SHORT),
            samples=15,
            rounds_per_sample=8,
            warmup_rounds=3,
            scalar_keys=200,
            batch_keys=4_000,
        ),
        # The suite's builds and lookups on the short plan's rings, counted under callgrind;
        # one counted pass each, since counts do not vary. More keys than the timed rounds:
        # start-up moves a few heap objects (and a few tens of misses) from run to run, which
        # over 200 scalar keys moved a whole-call miss figure by 1.5%; over 2,000, by far less.
        BenchPlan(
            "counts",
            (SMALL, BIG_SHORT),
            samples=1,
            rounds_per_sample=1,
            warmup_rounds=0,
            scalar_keys=2_000,
            batch_keys=20_000,
            measures="counts",
        ),
        # For the gate's own tests of the counts mode: the small ring only.
        BenchPlan(
            "counts-smoke",
            (SMALL,),
            samples=1,
            rounds_per_sample=1,
            warmup_rounds=0,
            scalar_keys=2_000,
            batch_keys=20_000,
            measures="counts",
        ),
        # For the gate's own tests: the small ring only, a few seconds per run.
        BenchPlan(
            "smoke",
            (SMALL,),
            samples=10,
            rounds_per_sample=5,
            warmup_rounds=3,
            scalar_keys=200,
            batch_keys=4_000,
        ),
    )
}

#: a layout whose small ring projects past this many bytes on a big ring is timed on the
#: small ring only (tuples: ~100 bytes x 4M entries would take 400 MB and a minute to build)
BIG_RING_BUDGET_BYTES = 64 * 2**20


#: a build round builds the layout repeatedly until it has handled this many entries:
#: one build of a 16k ring takes ~20 us, where allocator and timer jitter is as large as
#: a 1.5x change; repeated to ~0.3 ms, it is as steady as the lookup rounds
BUILD_ROUND_ENTRIES = 250_000


def get_plan(name: str) -> BenchPlan:
    """The plan called `name`, or an error that lists the valid names."""
    try:
        return PLANS[name]
    except KeyError:
        raise UnknownNameError("benchmark mode", name, list(PLANS)) from None
