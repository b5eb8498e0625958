"""The removals metric ([removals]): servers leaving step by step, and what each step shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.servers import fleet_servers
from harness.core.stats import cv
from harness.metrics.removals.memory import measure_in_subprocess
from harness.metrics.removals.metric import RemovalsMetric, step_figures
from harness.metrics.removals.options import RemovalsOptions, parse_removals
from harness.metrics.removals.records import Removals, RemovalSeries
from harness.metrics.removals.tables import NOT_SUPPORTED
from harness.metrics.removals.walk import (
    State,
    removal_order,
    removal_problem,
    removed_counts,
    walk,
)
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.report import html, markdown
from harness.report.results import load_result, write_result
from harness.report.sections import result_report
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario, parse_scenario
from tests.browser import browser, console_errors

#: algorithms that move only the keys of the servers that leave
MONOTONE = ["ring", "rendezvous", "rendezvous-weighted", "multi-probe"]
KEYS = [f"key-{i}".encode() for i in range(4_000)]


def _walked(algorithm: str, servers: int, order: str, seed: int = 1,
            max_share: float = 0.9, step: float = 0.1) -> list[tuple[State, Any]]:
    """(state, its figures) at every step, as the metric computes them (timings aside)."""
    fleet = fleet_servers(servers, [1], "s{i}")
    params = get_algorithm(algorithm).parse_params(Fields("t", "t", {}))
    sequence = removal_order(servers, order, seed)
    counts = removed_counts(servers, max_share, step)
    start = previous = None
    done = 0
    out = []
    for state in walk(algorithm, fleet, params, sequence, counts):
        hashes = state.algorithm.hash_keys(KEYS)
        figures, owner = step_figures(state, hashes, start, previous,
                                      sequence[done:state.removed], servers, 0.0)
        start = owner if start is None else start
        previous, done = owner, state.removed
        out.append((state, figures))
    return out


def test_orders_are_permutations_of_the_fleet() -> None:
    """fifo is configuration order, lifo its reverse, random a seeded permutation."""
    assert removal_order(5, "fifo", 1) == [0, 1, 2, 3, 4]
    assert removal_order(5, "lifo", 1) == [4, 3, 2, 1, 0]
    drawn = removal_order(50, "random", 7)
    assert sorted(drawn) == list(range(50)) and drawn == removal_order(50, "random", 7)
    assert drawn != removal_order(50, "random", 8)


@pytest.mark.parametrize(("servers", "max_share", "step", "expected"), [
    (10, 0.9, 0.1, list(range(10))),
    (1_000, 0.9, 0.1, list(range(0, 901, 100))),
    (2, 0.9, 0.1, [0, 1]),  # always one server left
    (4, 0.5, 0.1, [0, 1, 2]),  # shares rounding to the same count are one step
    (100, 0.3, 0.15, [0, 15, 30]),
])
def test_removed_counts(servers: int, max_share: float, step: float,
                        expected: list[int]) -> None:
    """Steps remove round(share x N) servers for shares 0, step, ... up to max_share."""
    assert removed_counts(servers, max_share, step) == expected


def test_step_figures_match_a_plain_recomputation() -> None:
    """Moved keys, the minimum and monotonicity at each step equal a recount by server name
    with the plain-Python reference, for rendezvous in a random order."""
    fleet = fleet_servers(30, [1], "s{i}")
    names = [s.name for s in fleet]
    sequence = removal_order(30, "random", 3)
    start_names = previous_names = None
    gone: set[str] = set()
    for state, figures in _walked("rendezvous", 30, "random", seed=3):
        algorithm = state.algorithm
        owners = algorithm.reference_lookup_many(algorithm.hash_keys(KEYS))
        now = [algorithm.servers[o].name for o in owners]
        left = {names[i] for i in sequence[len(gone):state.removed]}
        gone |= left
        start_names = start_names or now
        previous_names = previous_names or now
        moved = [i for i, (a, b) in enumerate(zip(previous_names, now, strict=True)) if a != b]
        from_left = [i for i in moved if previous_names[i] in left]
        assert figures.moved_since_previous == len(moved) / len(KEYS)
        assert figures.minimal_since_previous == sum(n in left for n in previous_names) / len(KEYS)
        assert figures.monotone_since_previous == (len(from_left) / len(moved) if moved else None)
        moved_start = [i for i, (a, b) in enumerate(zip(start_names, now, strict=True)) if a != b]
        assert figures.moved_since_start == len(moved_start) / len(KEYS)
        assert figures.minimal_since_start == sum(n in gone for n in start_names) / len(KEYS)
        counts = [now.count(s.name) for s in algorithm.servers]
        assert figures.cv == pytest.approx(cv(counts), rel=1e-12)
        assert figures.peak_to_mean == pytest.approx(max(counts) / np.mean(counts), rel=1e-12)
        assert figures.live == 30 - state.removed == len(algorithm.servers)
        assert {s.name for s in algorithm.servers} == set(names) - gone
        previous_names = now


@pytest.mark.parametrize("algorithm", MONOTONE)
@pytest.mark.parametrize("order", ["fifo", "lifo", "random"])
def test_consistent_algorithms_move_only_the_keys_of_servers_that_leave(
        algorithm: str, order: str) -> None:
    """Ring, rendezvous (both), multi-probe: monotone exactly 1.0 at every step, and the keys
    moved are exactly the minimum."""
    for _, figures in _walked(algorithm, 20, order)[1:]:
        assert figures.monotone_since_previous == 1.0
        assert figures.monotone_since_start == 1.0
        assert figures.moved_since_previous == figures.minimal_since_previous > 0
        assert figures.moved_since_start == figures.minimal_since_start


def test_jump_follows_lifo_only_and_is_then_monotone() -> None:
    """Jump removes its last bucket only: fifo and random are refused with its reason, and
    lifo moves exactly the keys of the buckets that leave."""
    fleet = fleet_servers(10, [1], "s{i}")
    for order in ("fifo", "random"):
        reason = removal_problem("jump", fleet, {}, removal_order(10, order, 1), 9)
        assert reason is not None and "only the last server" in reason
    assert removal_problem("jump", fleet, {}, removal_order(10, "lifo", 1), 9) is None
    for _, figures in _walked("jump", 10, "lifo")[1:]:
        assert figures.monotone_since_previous == 1.0
        assert figures.moved_since_start == figures.minimal_since_start


#: registered algorithms that can remove only their last server (jump and its kin)
LAST_ONLY = [name for name, cls in ALGORITHMS.items()
             if cls.removal_problem(fleet_servers(3, [1], "s{i}"), "s0") is not None]


@pytest.mark.parametrize("algorithm", LAST_ONLY)
def test_last_bucket_algorithms_follow_lifo_and_are_monotone(algorithm: str) -> None:
    """Every algorithm that removes only its last bucket (jump, and any registered like it)
    refuses fifo with its reason and moves exactly the keys of the buckets that leave in
    lifo order."""
    fleet = fleet_servers(12, [1], "s{i}")
    params = get_algorithm(algorithm).parse_params(Fields("t", "t", {}))
    assert removal_problem(algorithm, fleet, params, removal_order(12, "fifo", 1), 9)
    assert removal_problem(algorithm, fleet, params, removal_order(12, "lifo", 1), 9) is None
    for _, figures in _walked(algorithm, 12, "lifo")[1:]:
        assert figures.monotone_since_previous == 1.0
        assert figures.moved_since_start == figures.minimal_since_start


@pytest.mark.parametrize("order", ["fifo", "random"])
def test_maglev_is_nearly_but_not_exactly_monotone(order: str) -> None:
    """Maglev rebuilds its table from the servers left: every key of a leaving server moves,
    and a few slots change hands between servers that stay (the paper's disruption a little
    above the minimum): on 20 servers with M = 65,537, 96% to 99.9% of the moved keys come
    from a server that left, and the extra keys moved are under 1% of all keys a step."""
    steps = [figures for _, figures in _walked("maglev", 20, order)[1:]]
    assert all(f.moved_since_previous >= f.minimal_since_previous for f in steps)
    assert all(f.moved_since_previous - f.minimal_since_previous < 0.01 for f in steps)
    assert all(0.95 < (f.monotone_since_previous or 0.0) < 1.0 for f in steps)


@settings(max_examples=25, deadline=None)
@given(servers=st.integers(2, 40), order=st.sampled_from(["fifo", "lifo", "random"]),
       seed=st.integers(0, 2**32), algorithm=st.sampled_from(["ring", "rendezvous"]),
       step=st.sampled_from([0.05, 0.3, 0.9]))
def test_monotone_for_any_fleet_order_and_step(servers: int, order: str, seed: int,
                                               algorithm: str, step: float) -> None:
    """For any fleet size, order, seed and step, ring and rendezvous move exactly the keys
    of the servers that left, and balance is over the live servers only."""
    for state, figures in _walked(algorithm, servers, order, seed, 0.9, step):
        assert figures.live == servers - state.removed >= 1
        assert figures.moved_since_start == figures.minimal_since_start
        assert figures.monotone_since_start in (None, 1.0)


@pytest.mark.parametrize(("table", "message"), [
    ({"servers": 1}, "removals.servers must be an integer from 2"),
    ({"orders": []}, "removals.orders must be a non-empty list of distinct orders"),
    ({"orders": ["fifo", "fifo"]}, "removals.orders must be a non-empty list of distinct"),
    ({"orders": ["sideways"]}, "removals.orders must be a list of names from fifo, lifo"),
    ({"max_share": 1}, "removals.max_share must be a number from 0.01 to 0.99 (got 1, "),
    ({"max_share": 0.2, "step": 0.5}, "removals.step must be at most max_share (0.2)"),
    ({"step": 0}, "removals.step must be a number from 0.001 to 0.99"),
    ({"memory": "yes"}, "removals.memory must be true or false"),
    ({"algorithms": ["nope"]}, "removals.algorithms[0].name must be one of"),
    ({"algorithms": ["jump", "jump"]}, "removals.algorithms must be distinct recipes"),
    ({"typo": 1}, "unknown key 'removals.typo'"),
])
def test_bad_removals_tables_are_refused_in_one_line(table: dict[str, Any],
                                                     message: str) -> None:
    """Each bad field is one line naming the file and field, before any work."""
    with pytest.raises(ScenarioError, match=r"^s\.toml: ") as caught:
        parse_removals(Fields("s.toml", "removals", table))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_defaults_cover_every_registered_algorithm_once() -> None:
    """Without a list, every registered algorithm takes part, the ring in one layout."""
    options = parse_removals(Fields("s.toml", "removals", {}))
    names = [r.algorithm for r in options.recipes]
    assert sorted(set(names)) == sorted(names)
    assert "jump" in names and "maglev" in names and options.counts[-1] == 90


def test_estimates_grow_with_the_table() -> None:
    """The cost model: bytes grow with keys and servers, seconds with servers and steps."""
    metric = RemovalsMetric()

    def options(**fields: Any) -> RemovalsOptions:
        return parse_removals(Fields("s.toml", "removals",
                                     {"algorithms": ["rendezvous"], **fields}))

    small, large = options(keys=1_000), options(keys=1_000_000)
    assert 0 < metric.estimated_bytes(small, []) < metric.estimated_bytes(large, [])
    assert (metric.estimated_bytes(options(servers=100), [])
            < metric.estimated_bytes(options(servers=10_000), []))
    # memray's fresh process (an interpreter of tens of MiB) counts only when it runs
    assert (metric.estimated_bytes(options(memory=False), []) + 40 * 2**20
            < metric.estimated_bytes(options(), []))
    few, why = metric.estimated_seconds(options(servers=100), [])
    many, _ = metric.estimated_seconds(options(servers=10_000, step=0.01), [])
    assert 0 < few < many and "rendezvous scores all 100 servers" in why


SCENARIO = """
name = "removals-test"
[servers]
count = 3
[keys]
count = 100
[measure]
metrics = []
layouts = []
[removals]
servers = 12
keys = 3_000
algorithms = ["ring", "jump"]
max_share = 0.5
step = 0.25
repeats = 1
scalar_keys = 50
batch_keys = 500
memory = {memory}
"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Removals, Path]:
    """A small run with memray, written and read back."""
    folder = tmp_path_factory.mktemp("removals")
    path = folder / "removals-test.toml"
    path.write_text(SCENARIO.format(memory="true"))
    result = run_scenario(load_scenario(path), show_progress=False)
    out = write_result(result, folder / "out")["json"]
    read = load_result(out)
    removals = read.runs[0].figure("removals")
    assert isinstance(removals, Removals)
    return removals, out


def _series(removals: Removals, label: str, order: str) -> RemovalSeries:
    return next(s for s in removals.series if s.label.startswith(label) and s.order == order)


def test_a_run_records_every_step_and_reads_back(measured: tuple[Removals, Path]) -> None:
    """Every supported series has a step per count with timings and memray bytes; jump's
    fifo and random are not supported, with its reason; the record survives JSON."""
    removals, _ = measured
    assert len(removals.series) == 6
    for order in ("fifo", "random"):
        assert "only the last server" in (_series(removals, "jump", order).unsupported or "")
    for series in removals.series:
        if series.unsupported is not None:
            assert not series.steps
            continue
        assert [s.removed for s in series.steps] == [0, 3, 6]
        assert series.removed_by == "rebuilt" and series.parity_keys == 200
        for step in series.steps:
            assert step.scalar_ns is not None and step.scalar_ns.median > 0
            assert step.batch_ns is not None and step.structure_bytes is not None
            assert step.monotone_since_start in (None, 1.0)


def test_ring_memory_falls_with_its_points(measured: tuple[Removals, Path]) -> None:
    """memray sees the ring's layout shrink with the servers: its own account (8 bytes per
    point in numpy-aligned, the ring's default layout) plus array headers, at every step."""
    removals, _ = measured
    for step in _series(removals, "ring", "fifo").steps:
        assert step.structure_bytes is not None
        assert step.nbytes == 8 * step.entries
        assert step.nbytes <= step.structure_bytes < step.nbytes + 4_096
        assert step.entries == 160 * step.live


def test_report_has_the_tables_and_charts(measured: tuple[Removals, Path],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The section shows each series, "not supported" for jump's refused orders, and five
    charts (scalar ns, batch ns, memory, CV, peak-to-mean) with one line per series; show
    reads the file."""
    removals, out = measured
    result = load_result(out)
    sections = [s for s in result_report(result).sections if s.title.startswith("Removals")]
    assert len(sections) == 1
    section = sections[0]
    assert len(section.charts) == 5
    lines = {row["series"] for row in section.charts[0].spec["data"]["values"]}
    assert lines == {s.name for s in removals.series if s.unsupported is None}
    text = markdown.report(result_report(result))
    assert NOT_SUPPORTED in text and "jump can remove only the last server" in text
    assert main(["show", str(out)]) == 0
    assert "Removals" in capsys.readouterr().out


def test_without_memory_the_account_of_the_algorithm_is_shown(tmp_path: Path) -> None:
    """memory = false leaves memray's bytes out; the table shows nbytes, marked as such."""
    path = tmp_path / "removals-test.toml"
    path.write_text(SCENARIO.format(memory="false"))
    result = run_scenario(load_scenario(path), show_progress=False)
    removals = result.runs[0].figure("removals")
    assert all(step.structure_bytes is None for s in removals.series for step in s.steps)
    assert "(nbytes)" in markdown.report(result_report(result))


@pytest.mark.tools("chromium")
def test_the_page_draws_every_chart_in_a_browser(measured: tuple[Removals, Path]) -> None:
    """The HTML page loads in headless chromium with no console error and draws the five
    removals charts (the scenario measures nothing else that charts)."""
    _, out = measured
    with browser() as driver:
        driver.get(out.with_suffix(".html").as_uri())
        driver.set_script_timeout(60)
        drawn = driver.execute_async_script(
            "const done = arguments[0];"
            "window.chartsReady.then(() => done(window.chartsDrawn), e => done(-1));")
        assert drawn == len(driver.find_elements("css selector", "div.chart")) == 5
        assert len(driver.find_elements("css selector", "div.chart svg")) == 5
        assert console_errors(driver) == []


def test_hostile_server_names_are_shown_as_text() -> None:
    """Server names come from a user's template and reach the page through an algorithm's
    refusal (jump names the server it cannot remove): escaped in Markdown and in HTML."""
    hostile = "<img src=x onerror=alert(1)>**{i}**"
    document = {"servers": {"count": 3}, "keys": {"count": 10},
                "measure": {"metrics": [], "layouts": []},
                "removals": {"servers": 4, "keys": 200, "algorithms": ["jump"],
                             "name": hostile, "step": 0.5, "repeats": 1, "memory": False}}
    result = run_scenario(parse_scenario(document, "hostile.toml"), show_progress=False)
    page = markdown.report(result_report(result))
    assert "jump can remove only the last server" in page
    assert "<img" not in page.replace("\\<", "") and "**3**" not in page
    rendered = html.report(result_report(result))
    assert "<img src=x" not in rendered and "&lt;img src=x onerror=alert(1)&gt;" in rendered


def test_memory_per_server_is_the_same_at_the_first_step(tmp_path: Path) -> None:
    """memray measures the algorithm alone at every step, the first included (not the walk's
    list of live indexes beside it): jump's bytes per live server hold steady as servers
    leave."""
    sequence = removal_order(1_000, "lifo", 1)
    held = measure_in_subprocess(tmp_path / "spec.json", "jump",
                                 fleet_servers(1_000, [1], "server-{i}"), {}, sequence,
                                 [0, 100, 500])
    per_server = [held[0] / 1_000, held[1] / 900, held[2] / 500]
    assert max(per_server) < 1.25 * min(per_server), per_server
