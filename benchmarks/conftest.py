"""Fixtures and options of the benchmark suite that `tox -e bench` runs and the gate reads.

Options:
- `--bench-mode full|short|smoke` picks a plan (harness.apps.benchgate.plan);
- `--bench-layouts module:attribute` picks the layout registry to measure
  (default harness.recipes.layouts:LAYOUTS; the gate's tests pass registries with an
  injected regression).

Benchmarks that a plan leaves out on purpose (a layout over the memory budget on the
big ring, a layout the counts gate does not judge) are skipped through `skip_by_plan`,
which names them in the report's `skipped`: the gate does not count them as missing.

Deterministic figures (bytes, collisions, cv_arcs, routing digests) are not
timings, so pytest-benchmark has no place for them: the figure tests record
them here and `pytest_benchmark_update_json` adds them to the JSON report.

A counts plan (`--bench-mode=counts`) runs test_counts.py alone, and a timing
plan everything else. A counts run times nothing, and pytest-benchmark writes
no report without timings, so this conftest writes its `--benchmark-json`
file itself, in the same shape, with an empty list of timings.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NoReturn

import numpy as np
import numpy.typing as npt
import pytest

from harness.apps.benchgate.allocator import pin_malloc_thresholds
from harness.apps.benchgate.plan import BIG_RING_BUDGET_BYTES, BenchPlan, RingSize, get_plan
from harness.core.errors import HarnessError
from harness.core.ring import Ring
from harness.core.servers import numbered_servers
from harness.metrics.callgrind import valgrind_version
from harness.recipes.constructions.generator import generate_ring
from harness.recipes.layouts import Layout

#: the hash that places points for layouts of each width (fnv1a-fmix32 hashes in C: fast)
HASH_FOR_BITS = {32: "fnv1a-fmix32", 64: "blake2b-64"}

FIGURES = pytest.StashKey[dict[str, object]]()
#: what this run leaves out on purpose, as "layout/ring" -> why (see `skip_by_plan`)
SKIPPED = pytest.StashKey[dict[str, str]]()
#: the suite module that a counts plan runs (and a timing plan leaves out)
COUNTS_MODULE = "test_counts.py"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ring-bench")
    group.addoption("--bench-mode", default="full", help="plan: full, short (CI) or smoke")
    group.addoption(
        "--bench-layouts",
        default="harness.recipes.layouts:LAYOUTS",
        help="layout registry to measure, as module:attribute",
    )


def load_registry(spec: str) -> Mapping[str, type[Layout]]:
    """The registry named by `module:attribute`."""
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise HarnessError(f"--bench-layouts must be module:attribute (got {spec!r})")
    registry: Mapping[str, type[Layout]] = getattr(importlib.import_module(module_name), attribute)
    return registry


def pytest_configure(config: pytest.Config) -> None:
    config.stash[FIGURES] = {}
    config.stash[SKIPPED] = {}
    # Before anything is timed: builds must not depend on what earlier tests freed.
    pin_malloc_thresholds()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    if "layout_name" in metafunc.fixturenames:
        metafunc.parametrize("layout_name", list(load_registry(config.getoption("bench_layouts"))))
    if "ring_size" in metafunc.fixturenames:
        rings = get_plan(config.getoption("bench_mode")).rings
        metafunc.parametrize("ring_size", rings, ids=[r.label for r in rings])
    if "floor_ring" in metafunc.fixturenames:
        floor_rings = get_plan(config.getoption("bench_mode")).floor_rings
        metafunc.parametrize("floor_ring", floor_rings, ids=[r.label for r in floor_rings])
    if "bits" in metafunc.fixturenames:
        registry = load_registry(config.getoption("bench_layouts"))
        metafunc.parametrize("bits", sorted({cls.hash_bits for cls in registry.values()}))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    counting = get_plan(config.getoption("bench_mode")).measures == "counts"
    keep = [item for item in items if (item.path.name == COUNTS_MODULE) == counting]
    config.hook.pytest_deselected(items=[item for item in items if item not in keep])
    items[:] = keep


def _ring_bench(config: pytest.Config) -> dict[str, object]:
    section: dict[str, object] = {
        "mode": config.getoption("bench_mode"),
        "layouts": config.getoption("bench_layouts"),
        "figures": config.stash[FIGURES],
        # The gate fails on a benchmark of the baseline that the run did not measure,
        # unless the run says here that its plan leaves that layout and ring out.
        "skipped": dict(sorted(config.stash[SKIPPED].items())),
    }
    if get_plan(config.getoption("bench_mode")).measures == "counts":
        # Counts depend on the simulator's version too; the gate adds it to the environment.
        section["environment"] = {"valgrind": valgrind_version()}
    return section


def pytest_benchmark_update_json(
    config: pytest.Config, benchmarks: object, output_json: dict[str, object]
) -> None:
    output_json["ring_bench"] = _ring_bench(config)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    report: Path | None = config.getoption("benchmark_json", None)
    if report is None or get_plan(config.getoption("bench_mode")).measures != "counts":
        return
    from pytest_benchmark.plugin import pytest_benchmark_generate_machine_info

    machine_info = pytest_benchmark_generate_machine_info()  # type: ignore[no-untyped-call]  # pytest-benchmark ships no types
    report.write_text(json.dumps({"machine_info": machine_info, "benchmarks": [],
                                  "ring_bench": _ring_bench(config)}, indent=1))


@pytest.fixture(scope="session")
def plan(pytestconfig: pytest.Config) -> BenchPlan:
    return get_plan(pytestconfig.getoption("bench_mode"))


@pytest.fixture(scope="session")
def registry(pytestconfig: pytest.Config) -> Mapping[str, type[Layout]]:
    return load_registry(pytestconfig.getoption("bench_layouts"))


@pytest.fixture(scope="session")
def figures(pytestconfig: pytest.Config) -> dict[str, object]:
    return pytestconfig.stash[FIGURES]


@dataclass(frozen=True)
class Workload:
    """A ring and the keys looked up on it, in the dtype of its positions."""

    ring: Ring
    #: the parity check's keys; batch lookups time the first `batch_keys` of them
    keys: npt.NDArray[np.unsignedinteger]
    batch_keys: npt.NDArray[np.unsignedinteger]
    scalar_keys: list[int]


@cache
def make_ring(bits: int, size: RingSize) -> Ring:
    """Rings are deterministic and slow to hash (seconds at 4M points): make each once."""
    return generate_ring(
        numbered_servers(size.servers), size.points_per_server, HASH_FOR_BITS[bits]
    )


@pytest.fixture(scope="session")
def workload_for(plan: BenchPlan) -> Callable[[int, RingSize], Workload]:
    @cache
    def workload(bits: int, size: RingSize) -> Workload:
        ring = make_ring(bits, size)
        dtype = ring.positions.dtype
        keys = np.random.default_rng(plan.seed).integers(
            0, 2**bits, size=plan.parity_keys, dtype=dtype, endpoint=False
        )
        return Workload(ring, keys, keys[: plan.batch_keys], keys[: plan.scalar_keys].tolist())

    return workload


SkipByPlan = Callable[[str, RingSize, str], NoReturn]


@pytest.fixture(scope="session")
def skip_by_plan(pytestconfig: pytest.Config) -> SkipByPlan:
    """Skip this test's layout on this ring for a reason of the plan, and record that in
    the report, so that the gate does not count what it would have measured as missing."""

    def skip(layout_name: str, size: RingSize, reason: str) -> NoReturn:
        pytestconfig.stash[SKIPPED][f"{layout_name}/{size.label}"] = reason
        pytest.skip(f"{layout_name} on the {size.label} ring: {reason}")

    return skip


@pytest.fixture(scope="session")
def fits_budget(registry: Mapping[str, type[Layout]]) -> Callable[[str, RingSize], bool]:
    """Whether a layout's structure for a ring of `size` stays within the memory budget,
    projected from its bytes per entry on a small ring (building it big would answer too late)."""

    @cache
    def bytes_per_entry(name: str) -> float:
        cls = registry[name]
        ring = make_ring(cls.hash_bits, RingSize("probe", servers=10, points_per_server=1000))
        layout = cls.build(ring.positions, ring.owners)
        return layout.nbytes / layout.entries

    def fits(name: str, size: RingSize) -> bool:
        return bytes_per_entry(name) * size.points <= BIG_RING_BUDGET_BYTES

    return fits
