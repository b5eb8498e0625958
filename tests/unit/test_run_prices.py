"""The prices of a run's work beyond its builds (benchmarks/run_rates.py measured them): a
ring's lookups by the layout that answers them, the memory and callgrind probes, and
`[migration]`'s replay. That the prices bound the committed runs is
tests/unit/test_shipped_run_times.py's; here, that each follows what sets it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.servers import fleet_servers
from harness.metrics.base import RunShape
from harness.metrics.counts import CountsMetric
from harness.metrics.memory import PROBE_SECONDS, MemoryMetric
from harness.metrics.migration.metric import MigrationMetric, MigrationOptions
from harness.metrics.throughput import ThroughputMetric
from harness.recipes.algorithms import get_algorithm
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.costs import (
    C_FLAT_LOOKUPS,
    INDEXED_LOOKUPS,
    NUMPY_FLAT_LOOKUPS,
    OBJECT_LOOKUPS,
    RATE_ENTRIES,
    LookupRates,
    layout_cost,
    lookup_rates,
)
from harness.run.estimate import SCALAR_CALL_SECONDS, run_cost
from harness.run.scenario import load_scenario

RATES = [OBJECT_LOOKUPS, INDEXED_LOOKUPS, C_FLAT_LOOKUPS, NUMPY_FLAT_LOOKUPS]


@pytest.mark.parametrize("rates", RATES)
def test_lookup_rates_are_the_measured_prices_at_their_sizes_and_grow_between(
        rates: LookupRates) -> None:
    for i, size in enumerate(RATE_ENTRIES):
        assert rates.batch(size) == pytest.approx(rates.batch_at[i])
        assert rates.scalar(size) == pytest.approx(rates.scalar_at[i])
    # held below the smallest size (a ring in cache), carried on above the largest
    assert rates.batch(3) == rates.batch_at[0]
    sizes = [2**bits for bits in range(8, 31)]
    for read in (rates.batch, rates.scalar):
        values = [read(size) for size in sizes]
        assert values == sorted(values)
        assert read(2**30) > read(2**24)


def test_each_layout_is_priced_by_what_it_is_made_of() -> None:
    assert lookup_rates("tuples") is OBJECT_LOOKUPS
    assert lookup_rates("bucketed") is INDEXED_LOOKUPS
    assert lookup_rates("cffi-packed") is C_FLAT_LOOKUPS
    assert lookup_rates("numpy-aligned") is NUMPY_FLAT_LOOKUPS
    for name, layout in LAYOUTS.items():
        cost = layout_cost(name)
        assert cost.lookups is lookup_rates(name)
        assert cost.scalar_in_c == (layout.c_functions is not None)


def _ring_shape(layouts: list[str], entries: int = 1_000_000, keys: int = 200_000,
                repeats: int = 3) -> RunShape:
    return RunShape(entries=entries, keys=keys, key_hash_bytes=4,
                    ring_array_bytes=6.0 * entries, reference_bytes=14.0 * entries,
                    layouts=tuple(layout_cost(name) for name in layouts), form_bytes=0.0,
                    scalar_keys=5_000, peer_bytes=0.0, operations=0, repeats=repeats,
                    forms=len(layouts))


SERVERS = fleet_servers(10, (1.0,), "10.0.{i}.1:80")


def test_throughput_prices_its_rounds_per_layout() -> None:
    metric = ThroughputMetric()
    one = metric.cost(_ring_shape(["cffi-packed"]), SERVERS)
    two = metric.cost(_ring_shape(["cffi-packed", "numpy-aligned"]), SERVERS)
    more_rounds = metric.cost(_ring_shape(["cffi-packed"], repeats=7), SERVERS)
    larger = metric.cost(_ring_shape(["cffi-packed"], entries=16_000_000), SERVERS)
    assert 0 < one.seconds < two.seconds
    # 8 rounds against 4
    assert more_rounds.seconds == pytest.approx(2 * one.seconds)
    assert larger.seconds > one.seconds
    assert "4 rounds of 200,000 keys" in one.why_seconds
    # an algorithm's rounds are its own estimate's (no layouts here)
    assert metric.cost(_ring_shape([]), SERVERS).seconds == 0


def test_a_probe_process_per_form_and_peer() -> None:
    metric = MemoryMetric()
    shape = _ring_shape(["cffi-packed", "bucketed"])
    two = metric.cost(shape, SERVERS).seconds
    three = metric.cost(replace(shape, peers=1), SERVERS).seconds
    assert two >= 2 * PROBE_SECONDS
    assert three == pytest.approx(1.5 * two)
    assert metric.cost(replace(shape, entries=10 * shape.entries), SERVERS).seconds > two


def test_callgrind_prices_a_python_scalar_lookup_above_a_c_one() -> None:
    metric = CountsMetric()
    in_c = metric.cost(_ring_shape(["cffi-packed"]), SERVERS).seconds
    in_python = metric.cost(_ring_shape(["numpy-packed"]), SERVERS).seconds
    both = metric.cost(_ring_shape(["cffi-packed", "numpy-packed"]), SERVERS).seconds
    assert 0 < in_c < in_python
    assert both == pytest.approx(in_c + in_python)


def test_the_migration_replay_grows_with_its_requests_and_objects() -> None:
    metric = MigrationMetric()

    def seconds(warmup: int = 2_000_000, per_stage: int = 1_000_000,
                universe: int = 1_000_000) -> float:
        options = MigrationOptions(to={"points_per_weight": 16}, warmup_requests=warmup,
                                   requests_per_stage=per_stage, universe=universe)
        return metric.estimated_seconds(options, SERVERS)[0]

    base = seconds()
    assert base > 0
    assert seconds(warmup=4_000_000) > base
    assert seconds(per_stage=2_000_000) > base
    assert seconds(universe=2_000_000) > base
    why = metric.estimated_seconds(MigrationOptions(to={"points_per_weight": 16}),
                                   SERVERS)[1]
    assert "requests replayed three ways" in why


def test_a_ring_prices_its_lookups_by_its_own_layout() -> None:
    ring = get_algorithm("ring")
    params = {"construction": "points", "points_per_weight": 100_000, "hash": "blake2b-32"}

    def seconds(layout: str, **keys: int) -> float:
        counts = {"reference_keys": 0, "fast_keys": 0, "plain_keys": 0, **keys}
        return ring.estimated_seconds(SERVERS, {**params, "layout": layout}, **counts)[0]

    assert seconds("bucketed") == 0
    assert seconds("bucketed", fast_keys=1_000) < seconds("numpy-aligned", fast_keys=1_000)
    assert seconds("bucketed", reference_keys=1_000) == \
        seconds("numpy-aligned", reference_keys=1_000) > 0
    assert seconds("bucketed", plain_keys=1_000) > seconds("bucketed", fast_keys=1_000)


SLOW_THROUGHPUT = """name = "slow-throughput"
[servers]
count = 100
[generator]
points_per_weight = 10_000
[keys]
count = 2_000_000
[measure]
layouts = ["tuples", "numpy-aligned"]
metrics = ["throughput"]
repeats = 200
scalar_keys = 1_000_000
"""


def test_a_run_of_too_many_timed_rounds_is_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """201 rounds of 2,000,000 keys in tuples (about 55 minutes at its price; the timing
    rounds were free before): exit 2, one line naming the rounds and the fields that set
    them, nothing written."""
    (tmp_path / "slow.toml").write_text(SLOW_THROUGHPUT)
    code = main(["run", str(tmp_path / "slow.toml"), "--no-history",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--max-minutes 10" in err
    assert "[throughput]: 201 rounds of 2,000,000 keys" in err
    assert "(measure.repeats, keys.count, measure.scalar_keys)" in err
    assert not (tmp_path / "out").exists()


def _algorithm_seconds(tmp_path: Path, metrics: list[str], operations: int,
                       repeats: int = 3) -> float:
    """The run's seconds of a Maglev of 65,537 slots on 10 servers, 50,000 keys."""
    path = tmp_path / "maglev.toml"
    ops = "".join(f'[[operations]]\nkind = "remove"\nserver = "server-{i}"\n'
                  for i in range(operations))
    path.write_text(f"""name = "maglev-lookups"
[servers]
count = 10
[algorithm]
name = "maglev"
table_size = 65_537
[keys]
count = 50_000
[measure]
metrics = {metrics!r}
repeats = {repeats}
{ops}""".replace("'", '"'), encoding="utf-8")
    return run_cost(load_scenario(path)).seconds


def test_an_algorithm_prices_the_lookups_its_run_makes(tmp_path: Path) -> None:
    """Parity routes every key once a sweep point (not once per operation); movement routes
    them again by the reference of each operation's fleet; throughput's rounds and their
    scalar calls grow with measure.repeats."""
    plain = _algorithm_seconds(tmp_path, ["balance"], 0)
    assert _algorithm_seconds(tmp_path, ["balance"], 2) == pytest.approx(plain)
    assert _algorithm_seconds(tmp_path, ["balance", "movement"], 2) > plain
    timed = _algorithm_seconds(tmp_path, ["throughput"], 0)
    assert _algorithm_seconds(tmp_path, ["throughput"], 0, repeats=9) - timed >= \
        6 * min(5_000, 50_000) * SCALAR_CALL_SECONDS


@pytest.mark.parametrize(("name", "params", "fill"), [
    ("maglev", {"table_size": 1_000_003}, 1.5 * 3e-6 * 1_000_003),
    ("dx", {"capacity": 1_048_576}, 1.5 * 0.2e-6 * 1_048_576)])
def test_a_client_build_is_not_charged_the_plain_references(
        name: str, params: dict[str, int], fill: float) -> None:
    """A `[clients]` recipe or a claimed `routes_like` routes by the C form alone: the
    plain-Python reference's table or flags (Maglev 3 us a slot, DxHash 0.2 us, each with
    its margin of 1.5) are charged only when a key is looked up by a reference."""
    algorithm = get_algorithm(name)
    fleet = fleet_servers(100, (1.0,), "s-{i}")

    def seconds(**keys: int) -> float:
        return algorithm.estimated_seconds(fleet, params, **{
            "reference_keys": 0, "fast_keys": 0, "plain_keys": 0, **keys})[0]

    client = seconds(fast_keys=1_000)
    assert 0 < client < fill <= seconds(reference_keys=1_000, fast_keys=1_000)
    assert seconds(fast_keys=100_000) > client
