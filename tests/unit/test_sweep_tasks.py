"""Sweep points as tasks (`harness.run.sweep`): the same figures whatever the executor and
the worker count, a kept point not run again, the timing tables kept in sequence here and
refused on a cluster, and a point too large for a worker refused before any work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.core.cost import Cost
from harness.core.errors import ScenarioError
from harness.core.executor import ExecutorChoice
from harness.run import sweep
from harness.run.estimate import check_memory, run_cost, worker_cost
from harness.run.runner import TaskPlace, run_scenario
from harness.run.scenario import load_scenario
from harness.run.sweep import sweep_workers, why_in_sequence

SCENARIO = (Path(__file__).parents[1] / "fixtures" / "sweep-reduced.toml").read_text()

#: what differs from run to run by nature: clocks, the worker's resident set, where it ran
NOT_DETERMINISTIC = ("started_at", "duration_s", "wall_s", "peak_rss_bytes", "machine",
                     "git_commit", "executor", "estimated_peak_bytes")


def without_clocks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_clocks(v) for k, v in value.items() if k not in NOT_DETERMINISTIC}
    if isinstance(value, list):
        return [without_clocks(v) for v in value]
    return value


def _run(tmp_path: Path, name: str, *executor: str) -> dict[str, Any]:
    out = tmp_path / name
    assert main(["run", str(tmp_path / "sweep.toml"), "--no-history", "--out", str(out),
                 "--task-dir", str(tmp_path / f"tasks-{name}"), *executor]) == 0
    result: dict[str, Any] = json.loads((out / "sweep-reduced.json").read_text())
    return result


def test_points_are_bit_identical_in_sequence_and_on_any_executor(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sweep.toml").write_text(SCENARIO)
    scenario = load_scenario(tmp_path / "sweep.toml")
    assert why_in_sequence(scenario) is None
    in_sequence = json.loads(json.dumps(run_scenario(scenario, show_progress=False).to_json()))
    # Without --executor the points run in this process, as they always have.
    default = _run(tmp_path, "default", "--workers", "2")
    assert default["executor"] is None
    one = _run(tmp_path, "one", "--executor", "local", "--workers", "1")
    # more workers asked than points: the pool, and what the result says of it, is 3
    many = _run(tmp_path, "many", "--executor", "local", "--workers", "64")
    assert many["executor"].startswith("sweep points as tasks on local process pool of 3 ")
    two = _run(tmp_path, "two", "--executor", "local", "--workers", "2")
    capsys.readouterr()
    dask = _run(tmp_path, "dask", "--executor", "dask", "--workers", "2")
    assert "Dask dashboard: http://127.0.0.1:" in capsys.readouterr().err
    assert [run["label"] for run in two["runs"]] == [r.label for r in scenario.recipes()]
    assert two["executor"].startswith("sweep points as tasks on local process pool of 2")
    assert in_sequence["executor"] is None
    expected = json.dumps(without_clocks(in_sequence), sort_keys=True)
    for result in (default, one, many, two, dask):
        assert json.dumps(without_clocks(result), sort_keys=True) == expected
    # each point's record carries its own worker's figures, not the parent's
    assert all(run["peak_rss_bytes"] > 0 for run in two["runs"])


def test_kept_points_are_read_back_not_run_again(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sweep.toml").write_text(SCENARIO)
    scenario = load_scenario(tmp_path / "sweep.toml")
    place = TaskPlace(ExecutorChoice("local", workers=1), tmp_path / "tasks", sweep=True)
    first = run_scenario(scenario, show_progress=False, tasks=place)
    kept = sorted((tmp_path / "tasks").rglob("point-*.json"))
    assert len(kept) == 3
    # An interrupted run: one point lost, one kept file not a point: both computed again,
    # the third read back.
    kept[0].unlink()
    kept[1].write_text('{"label": "not a sweep point"}')
    ran: list[int] = []

    def counting(choice: ExecutorChoice, function: Any, tasks: Any, done: Any) -> None:
        ran.extend(task.index for task in tasks)
        for i, task in enumerate(tasks):
            done(i, function(task))

    monkeypatch.setattr(sweep, "run_tasks", counting)
    again = run_scenario(scenario, show_progress=False, tasks=place)
    # the larger point sent first (the fixture's points grow with their index: 8, 40, 100)
    assert len(ran) == 2
    assert ran == sorted(ran, reverse=True)
    # and a kept file that does not parse
    kept[2].write_text("{not json")
    third = run_scenario(scenario, show_progress=False, tasks=place)
    assert len(ran) == 3
    for result in (again, third):
        assert (json.dumps(without_clocks(result.to_json()), sort_keys=True)
                == json.dumps(without_clocks(first.to_json()), sort_keys=True))


def test_timing_tables_stay_in_sequence_and_are_refused_on_a_cluster(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    timed = SCENARIO.replace('"movement"]', '"movement", "throughput"]')
    (tmp_path / "timed.toml").write_text(timed)
    scenario = load_scenario(tmp_path / "timed.toml")
    assert why_in_sequence(scenario) == ("measure.metrics 'throughput' measures this machine "
                                         "(its timings, counts or memory)")
    assert sweep_workers(scenario, 2) == 1
    # a table timing its own work, sizing it by this machine's memory, stays in sequence
    process = load_scenario(Path(__file__).parents[2] / "scenarios" / "process-cloudflare.toml")
    assert why_in_sequence(process) == ("[process] times its rings' builds and sizes its "
                                        "sample by this machine's free memory")
    code = main(["run", str(tmp_path / "timed.toml"), "--no-history", "--out",
                 str(tmp_path / "out"), "--executor", "dask"])
    err = capsys.readouterr().err
    assert code == 2
    assert "'throughput' is refused under --executor dask" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_estimate_prices_a_point_per_worker_and_shares_the_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sweep.toml").write_text(SCENARIO)
    scenario = load_scenario(tmp_path / "sweep.toml")
    from harness.run import estimate as estimate_module
    # Each point's lookups priced at 10 s, so that the shares are plain to read.
    monkeypatch.setattr(estimate_module, "routing_cost",
                        lambda *_a, **_k: Cost(seconds=10.0, why_seconds="lookups"))
    # their layouts' parity lookups and builds at nothing
    monkeypatch.setattr(estimate_module, "layout_lookup_cost", lambda *_a, **_k: Cost())
    monkeypatch.setattr(estimate_module, "build_seconds", lambda *_a, **_k: (0.0, ""))
    monkeypatch.setattr(estimate_module, "layout_build_cost", lambda *_a, **_k: Cost())
    alone, one, pooled, wide = (run_cost(scenario), run_cost(scenario, workers=1),
                                run_cost(scenario, workers=2), run_cost(scenario, workers=8))
    assert alone.seconds == pytest.approx(30.0)
    assert one.seconds == pytest.approx(30.0)
    # two workers share the three points' seconds; eight are three at once, each point
    # taking its own 10 s (never less than the longest point)
    assert pooled.seconds == pytest.approx(15.0)
    assert wide.seconds == pytest.approx(10.0)
    assert pooled.why_seconds == "lookups, shared by 2 workers"
    # each worker holds a point, its keys and its interpreter: more bytes at once
    point = worker_cost(scenario)
    # even one worker is a process of its own beside this one
    assert one.peak == pytest.approx(point.peak + estimate_module.RUN_IMPORT_BYTES)
    assert pooled.peak == pytest.approx(2 * point.peak + estimate_module.RUN_IMPORT_BYTES)
    assert wide.peak == pytest.approx(3 * point.peak + estimate_module.RUN_IMPORT_BYTES)
    assert pooled.peak > alone.peak
    assert sweep_workers(scenario, 8) == 3


def test_a_point_larger_than_a_worker_is_refused_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sweep.toml").write_text(SCENARIO)
    scenario = load_scenario(tmp_path / "sweep.toml")
    point = worker_cost(scenario)
    from harness.run import estimate as estimate_module
    # room for one point, not for two at once
    monkeypatch.setattr(estimate_module, "available_memory_bytes",
                        lambda: int(point.peak * 1.5))
    with pytest.raises(ScenarioError, match=r"a sweep point needs about .* MiB per task, "
                                            r"more than a worker's share"):
        check_memory([scenario], workers=2)


def test_the_report_says_where_the_points_ran_and_escapes_the_scheduler(
        tmp_path: Path) -> None:
    from harness.report.sections import resources_section

    (tmp_path / "sweep.toml").write_text(SCENARIO)
    scenario = load_scenario(tmp_path / "sweep.toml")
    place = TaskPlace(ExecutorChoice("local", workers=1), None, sweep=True)
    result = run_scenario(scenario, show_progress=False, tasks=place)
    assert result.executor is not None
    notes = resources_section(result).tables[0].notes
    assert notes[0].startswith("Ran as tasks: sweep points as tasks on local process pool")
    assert "memory figures are each structure's own bytes" in notes[0]
    # a scheduler's address is the user's text: its markup is shown, not acted on
    result.executor = "sweep points as tasks on Dask scheduler tcp://*evil*<b>:1"
    assert "\\*evil\\*\\<b>" in resources_section(result).tables[0].notes[0]


def hold_a_folder(folder: str) -> None:
    """A task that holds a temporary folder until it is stopped."""
    import tempfile
    import time

    with tempfile.TemporaryDirectory(dir=folder):
        time.sleep(120)


STOPPED_RUN = """
import signal, sys
from harness.core.executor import ExecutorChoice, run_tasks
from tests.unit.test_sweep_tasks import hold_a_folder

def stop(*_):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, stop)
run_tasks(ExecutorChoice("local", workers=2), hold_a_folder, [sys.argv[1]] * 3,
          lambda i, a: None)
"""


def test_a_stopped_pool_stops_its_tasks_and_they_remove_their_folders(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    held = tmp_path / "held"
    held.mkdir()
    run = subprocess.Popen([sys.executable, "-c", STOPPED_RUN, str(held)],
                           cwd=Path(__file__).parents[2], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(list(held.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(list(held.iterdir())) == 2  # both workers are in their task
        run.send_signal(signal.SIGTERM)
        # not waited for: the tasks would hold on for two minutes
        assert run.wait(timeout=60) != 0
    finally:
        run.kill()
    assert list(held.iterdir()) == []
