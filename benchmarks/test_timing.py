"""Timings: build, scalar lookup and batch lookup of every layout, each paired with a reference,
and the one-random-access floor of a batch lookup, paired with the batch reference.

Every timed round of a layout is preceded by one round of the operation's
reference computation (harness.apps.benchgate.references), timed in pytest-benchmark's
untimed `setup` hook. The gate cuts both series into samples of
`rounds_per_sample` consecutive rounds and divides their fastest rounds: those
ratios are what it compares with the baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from time import perf_counter

from conftest import SkipByPlan, Workload
from pytest_benchmark.fixture import BenchmarkFixture

from harness.apps.benchgate import references
from harness.apps.benchgate.plan import BUILD_ROUND_ENTRIES, BenchPlan, RingSize, round_scale
from harness.metrics.instruments.floor import RandomAccess, batch_ns
from harness.recipes.layouts import Layout

#: calls per round of the random-access floor and of its reference. One call reads the
#: batch's keys in about 10 us, a fifth of it fixed call overhead: rounds that short
#: moved its ratio 2x between unchanged runs. Both sides repeat alike, so the ratio
#: keeps its meaning (floor time per key over search time per key).
FLOOR_REPEATS = 16

WorkloadFor = Callable[[int, RingSize], Workload]
FitsBudget = Callable[[str, RingSize], bool]


def run_paired(
    benchmark: BenchmarkFixture,
    plan: BenchPlan,
    target: Callable[[], object],
    reference: references.Reference,
    benchmark_id: str,
    scale: int = 1,
) -> None:
    """Time `target` for the plan's rounds, each right after one timed reference round.
    `scale` says how many times the reference's work one `target` does; the gate
    divides by it."""
    reference_seconds: list[float] = []

    def time_reference() -> None:
        start = perf_counter()
        reference()
        reference_seconds.append(perf_counter() - start)

    benchmark.pedantic(  # type: ignore[no-untyped-call]  # pytest-benchmark ships no types
        target, setup=time_reference, rounds=plan.rounds, warmup_rounds=plan.warmup_rounds
    )
    benchmark.extra_info["id"] = benchmark_id
    benchmark.extra_info["rounds_per_sample"] = plan.rounds_per_sample
    benchmark.extra_info["round_scale"] = scale
    # setup also ran before the warm-up rounds; keep the references of the timed ones.
    benchmark.extra_info["reference_seconds"] = reference_seconds[-plan.rounds :]


def _layout_and_workload(
    registry: Mapping[str, type[Layout]],
    layout_name: str,
    ring_size: RingSize,
    workload_for: WorkloadFor,
    fits_budget: FitsBudget,
    skip_by_plan: SkipByPlan,
) -> tuple[type[Layout], Workload]:
    if not fits_budget(layout_name, ring_size):
        skip_by_plan(layout_name, ring_size, "over the memory budget")
    cls = registry[layout_name]
    return cls, workload_for(cls.hash_bits, ring_size)


def test_build(
    benchmark: BenchmarkFixture,
    plan: BenchPlan,
    registry: Mapping[str, type[Layout]],
    layout_name: str,
    ring_size: RingSize,
    workload_for: WorkloadFor,
    fits_budget: FitsBudget,
    skip_by_plan: SkipByPlan,
) -> None:
    """Time building the layout from the ring's positions and owners (repeated on small rings)."""
    cls, work = _layout_and_workload(registry, layout_name, ring_size, workload_for, fits_budget,
                                      skip_by_plan)
    positions, owners = work.ring.positions, work.ring.owners
    repeats = range(max(1, BUILD_ROUND_ENTRIES // work.ring.entries))
    nbytes = cls.build(positions, owners).nbytes
    reference = references.build_reference(positions, owners, nbytes, index_bits=cls.index_bits,
                                           object_entries=cls.object_entries)

    def builds() -> None:
        for _ in repeats:
            cls.build(positions, owners)

    def reference_builds() -> None:
        for _ in repeats:
            reference()

    run_paired(benchmark, plan, builds, reference_builds, f"build/{layout_name}/{ring_size.label}")


def test_scalar_lookup(
    benchmark: BenchmarkFixture,
    plan: BenchPlan,
    registry: Mapping[str, type[Layout]],
    layout_name: str,
    ring_size: RingSize,
    workload_for: WorkloadFor,
    fits_budget: FitsBudget,
    skip_by_plan: SkipByPlan,
) -> None:
    """Time a Python loop of `lookup(h)` over precomputed key hashes."""
    cls, work = _layout_and_workload(registry, layout_name, ring_size, workload_for, fits_budget,
                                      skip_by_plan)
    lookup = cls.build(work.ring.positions, work.ring.owners).lookup
    keys = work.scalar_keys

    def loop() -> None:
        for key in keys:
            lookup(key)

    run_paired(
        benchmark,
        plan,
        loop,
        references.scalar_reference(work.ring.positions, keys,
                                    searches_in_c=getattr(cls, "c_functions", None) is not None),
        f"scalar/{layout_name}/{ring_size.label}",
    )


def test_batch_lookup(
    benchmark: BenchmarkFixture,
    plan: BenchPlan,
    registry: Mapping[str, type[Layout]],
    layout_name: str,
    ring_size: RingSize,
    workload_for: WorkloadFor,
    fits_budget: FitsBudget,
    skip_by_plan: SkipByPlan,
) -> None:
    """Time one `lookup_many` over the key array; a layout too quick to time steadily over
    the plan's keys looks up more of them (plan.round_scale; the gate compares per key)."""
    cls, work = _layout_and_workload(registry, layout_name, ring_size, workload_for, fits_budget,
                                      skip_by_plan)
    lookup_many = cls.build(work.ring.positions, work.ring.owners).lookup_many
    reference_keys = work.batch_keys
    fastest_ns_per_key = min(batch_ns(lookup_many, reference_keys, repeats=20))
    scale = round_scale(fastest_ns_per_key * len(reference_keys) * 1e-9)
    keys = work.keys[: len(reference_keys) * scale]
    run_paired(
        benchmark,
        plan,
        lambda: lookup_many(keys),
        references.batch_reference(work.ring.positions, reference_keys),
        f"batch/{layout_name}/{ring_size.label}",
        scale=scale,
    )


def test_random_access(
    benchmark: BenchmarkFixture,
    plan: BenchPlan,
    floor_ring: RingSize,
    workload_for: WorkloadFor,
) -> None:
    """Time one independent random read per key into an array of the ring's size: the
    memory floor of a batch lookup (harness.metrics.instruments.floor). A layout's batch
    ratio divided by this one says how many times that floor it costs. Only on rings too
    big for the L2 cache (BenchPlan.floor_rings)."""
    work = workload_for(32, floor_ring)
    floor = RandomAccess(work.ring.entries)
    keys = work.batch_keys
    reference = references.batch_reference(work.ring.positions, keys)
    repeats = range(FLOOR_REPEATS)

    def reads() -> None:
        for _ in repeats:
            floor.lookup_many(keys)

    def reference_searches() -> None:
        for _ in repeats:
            reference()

    run_paired(benchmark, plan, reads, reference_searches,
               f"batch/random-access/{floor_ring.label}")
