"""[fleet] and [rollout]: the timeline, one data centre's task, the fleet's figures, the
task store, and the validation of both tables."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.cache_model import lru_misses_reference
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.task_store import TaskStore, c_build_id
from harness.metrics.fleet.metric import distinct_tasks, draw_servers, fold, plan
from harness.metrics.fleet.options import parse_fleet, parse_rollout
from harness.metrics.fleet.schedule import timeline
from harness.metrics.fleet.task import DcTask, run_task
from harness.metrics.migration.metric import zipf_stream

OLD = {"construction": "points", "hash": "blake2b-32", "points_per_weight": 40,
       "point_name": "{server}:{j}"}

FLEET = {"data_centres": 5, "sizes": {"values": [3, 6], "shares": [1, 1]},
         "weights": {"values": [1, 2], "shares": [1, 1]},
         "capabilities": {"pci": 0.5}, "universe": 3_000, "cache_objects": 50,
         "requests_per_window": 500, "warmup_requests": 2_000}
ROLLOUT = {"to": {"points_per_weight": 4}, "stages": [0.25, 1.0],
           "waves": [{"name": "canary", "count": 1}, {"name": "rest", "share": 1.0}]}

SCENARIO = """
name = "fleet-test"
description = "a tiny fleet"
[servers]
count = 3
[generator]
points_per_weight = 40
[keys]
count = 500
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
[fleet]
data_centres = 4
sizes = { values = [3, 5], shares = [1, 1] }
weights = { values = [1, 2], shares = [1, 1] }
capabilities = { pci = 0.5 }
universe = 2_000
cache_objects = 40
requests_per_window = 400
warmup_requests = 1_000
[rollout]
to = { points_per_weight = 4 }
stages = [0.5, 1.0]
waves = [{ name = "canary", count = 1 }, { name = "rest", share = 1.0 }]
rollback = { wave = "rest", stage = 1 }
"""


def options(fleet: dict[str, object] | None = None,
            rollout: dict[str, object] | None = None) -> tuple:  # type: ignore[type-arg]
    return (parse_fleet(Fields("t.toml", "fleet", {**FLEET, **(fleet or {})})),
            parse_rollout(Fields("t.toml", "rollout", {**ROLLOUT, **(rollout or {})})))


def full_params() -> dict[str, object]:
    from harness.recipes.algorithms import get_algorithm

    fields = Fields("t.toml", "generator", dict(OLD))
    return get_algorithm("ring").parse_params(fields)


def test_waves_take_counts_shares_and_names_in_fleet_order() -> None:
    fleet, rollout = options({"data_centres": 10}, {"waves": [
        {"name": "canary", "count": 1}, {"name": "10%", "data_centres": ["dc-5"]},
        {"name": "half", "share": 0.5}, {"name": "all", "share": 1.0}]})
    line = timeline(fleet, rollout, "t.toml")
    assert [w.members for w in line.waves] == [(0,), (5,), (1, 2, 3), (4, 6, 7, 8, 9)]
    # two stages of one window each: each wave starts when the previous one ends
    assert line.starts == (1, 3, 5, 7)
    assert line.windows == 7 + 2 + 2
    assert line.shares(5, rollout.stages, 1) == (0, 0, 0, 0.25, 1, 1, 1, 1, 1, 1, 1)
    assert line.shares(5, rollout.stages, 1, staged=False) == (0, 0, 0) + (1.0,) * 8
    assert line.retired_window == 9 and line.rollback_window is None


def test_a_rollback_sends_every_started_centre_back_and_stops_later_waves() -> None:
    fleet, rollout = options({"data_centres": 4}, {
        "waves": [{"name": "a", "count": 1}, {"name": "b", "count": 2},
                  {"name": "c", "count": 1}],
        "windows_per_stage": 2, "rollback": {"wave": "b", "stage": 1}})
    line = timeline(fleet, rollout, "t.toml")
    assert line.starts == (1, 5, 9)
    assert line.rollback_window == 7
    assert line.wave_of == (0, 1, 1, None)
    assert line.shares(0, rollout.stages, 2) == (0, .25, .25, 1, 1, 1, 1, 0, 0)
    assert line.shares(1, rollout.stages, 2) == (0, 0, 0, 0, 0, .25, .25, 0, 0)
    assert line.shares(3, rollout.stages, 2) == (0.0,) * 9
    # the old rings are never retired; the new ones are dropped at the rollback
    assert line.holds_old(0, 8) and not line.holds_new(0, 7) and line.holds_new(0, 6)


@pytest.mark.parametrize(("rollout", "message"), [
    ({"waves": [{"name": "a", "share": 1.0}, {"name": "b", "data_centres": ["dc-0"]}]},
     "rollout.waves[1] must take data centres no earlier wave took (got 'dc-0' again)"),
    ({"waves": [{"name": "a", "data_centres": ["nowhere"]}]},
     "rollout.waves[0].data_centres must name data centres of [fleet] (got 'nowhere')"),
    ({"waves": [{"name": "a", "share": 0.2}, {"name": "b", "share": 0.2}]},
     "rollout.waves[1] must add at least one data centre"),
])
def test_waves_that_do_not_resolve_are_refused(rollout: dict[str, object],
                                               message: str) -> None:
    fleet, parsed = options(None, rollout)
    with pytest.raises(ScenarioError, match=re.escape(message)):
        timeline(fleet, parsed, "t.toml")


@pytest.mark.parametrize(("table", "fields", "message"), [
    ("fleet", {"data_centres": 0}, "fleet.data_centres must be an integer from 1"),
    ("fleet", {"sizes": {"values": [0], "shares": [1]}}, "fleet.sizes must be"),
    ("fleet", {"list": [{"name": "a", "servers": 2}]}, "either data_centres"),
    ("fleet", {"capabilities": {"pci": 2}}, "fleet.capabilities.pci must be a share"),
    ("rollout", {"to": {"peer": "hashring"}}, "a peer cannot be rolled out"),
    ("rollout", {"stages": [0.5, 0.4, 1]}, "rollout.stages must be rising shares"),
    ("rollout", {"waves": [{"name": "a"}]}, "rollout.waves[0].name must be a table with"),
    ("rollout", {"waves": [{"name": "a", "count": 1}, {"name": "a", "count": 1}]},
     "rollout.waves must be waves with distinct names"),
    ("rollout", {"rollback": {"wave": "canary", "stage": 3}},
     "rollout.rollback.stage must be a stage of the wave, 1 to 2"),
])
def test_bad_tables_name_their_field(table: str, fields: dict[str, object],
                                     message: str) -> None:
    base = FLEET if table == "fleet" else ROLLOUT
    parse = parse_fleet if table == "fleet" else parse_rollout
    with pytest.raises(ScenarioError) as raised:
        parse(Fields("t.toml", table, {**base, **fields}))
    assert message in str(raised.value)
    assert len(str(raised.value).splitlines()) == 1


def test_generated_fleet_reports_its_drawn_sizes_and_shares_one_draw_per_size() -> None:
    fleet, _ = options({"data_centres": 40})
    assert sum(n for _size, n in fleet.drawn_sizes) == 40
    assert {size for size, _n in fleet.drawn_sizes} == {3, 6}
    first, again = (draw_servers(fleet.shapes[0], fleet.seed, 0) for _ in range(2))
    assert first == again


def _task(shares: tuple[float, ...], at_once: tuple[float, ...] | None = None) -> DcTask:
    params = full_params()
    new = {**params, "points_per_weight": 4}
    return DcTask("ring", params, "ring", new,
                  (("a", 1.0, ("pci",)), ("b", 2.0, ()), ("c", 1.0, ("pci",))),
                  (), 2_000, 1.0, 40, 300, 600, shares, at_once or shares, 7)


def test_a_task_replays_the_stream_through_lru_caches_like_the_reference() -> None:
    """With the new ring's share 0 throughout, every series is the steady state; and the
    staged series equals the plain-Python LRU replay of the same routing."""
    still = run_task(_task((0.0,) * 4))
    assert still["misses"]["staged"] == still["misses"]["steady"] == \
        still["misses"]["at_once"]
    task = _task((0.0, 0.5, 1.0, 1.0))
    answer = run_task(task)
    assert answer == run_task(task)  # the same inputs, the same answer
    # The reference: route each request by hand, replay with the OrderedDict LRU.
    from harness.core.hashing import hash_many
    from harness.metrics.migration.sides import SortedKeys
    from harness.recipes.algorithms import get_algorithm
    from harness.recipes.algorithms.base import rebuilt

    servers = [__import__("harness.core.servers", fromlist=["Server"]).Server(n, w)
               for n, w, _c in task.servers]
    cls = get_algorithm("ring")
    names = [f"object-{i}".encode() for i in range(task.universe)]
    old, new = rebuilt(cls, task.old, servers), rebuilt(cls, task.new, servers)
    owner_old = SortedKeys.of(old, names).owners(old)
    owner_new = SortedKeys.of(new, names).owners(new)
    selector = hash_many("fnv1a-fmix32", [b"rollout:" + n for n in names]) / 2.0**32
    stream = zipf_stream(task.universe, 1.0, task.requests, task.seed)
    route = owner_old[stream].copy()
    for i in range(task.warmup_requests, task.requests):
        share = task.staged[(i - task.warmup_requests) // task.requests_per_window]
        key = stream[i]
        route[i] = owner_new[key] if selector[key] < share else owner_old[key]
    misses = lru_misses_reference(route, stream, 3, task.cache_objects)
    per_window = misses[task.warmup_requests:].reshape(-1, task.requests_per_window).sum(1)
    assert answer["misses"]["staged"] == [int(v) for v in per_window]
    assert answer["moved_fraction"] == pytest.approx(float(np.mean(owner_old != owner_new)))
    # the rings of one process: all servers, and those holding pci
    assert [(r["requires"], r["servers"]) for r in answer["rings"]] == [([], 3), (["pci"], 2)]
    assert answer["rings"][0]["entries_old"] == 4 * 40 and \
        answer["rings"][0]["entries_new"] == 4 * 4


def test_moved_keys_are_near_the_nested_formula() -> None:
    answer = run_task(_task((0.0,) * 2))
    formula = answer["formula_moved_fraction"]
    assert formula == pytest.approx((1 - 4 / 40) * (1 - 1 / 3))
    assert abs(answer["moved_fraction"] - formula) < 0.1


def test_fleet_memory_is_entries_times_bytes_per_entry_per_process() -> None:
    fleet, rollout = options({"data_centres": 3, "bytes_per_entry": 8})
    found = plan(fleet, rollout, "ring", full_params())
    answers = [run_task(t) for t in found.tasks]
    figures = fold(found, answers, fleet)
    expected_before = 0
    for j, _centre in enumerate(fleet.data_centres):
        task = found.tasks[found.task_of[j]]
        rings = answers[found.task_of[j]]["rings"]
        table = sum(len(n.encode()) + 8 for n, _w, _c in task.servers)
        process = table + sum(8 * r["entries_old"] + 2 * r["servers"] for r in rings)
        expected_before += len(task.servers) * process
        # the process's rings: one per eligibility set present, entries as points
        assert rings[0]["entries_old"] == 40 * sum(w for _n, w, _c in task.servers)
    assert figures.bytes_before == expected_before
    assert figures.bytes_peak > figures.bytes_before > figures.bytes_after
    assert figures.rollback is None
    # data centres of one size and one wave share one task; the progress bar counts them
    assert len(found.tasks) <= 2 * len(found.timeline.waves)
    assert distinct_tasks(fleet, rollout) == len(found.tasks)


def test_task_store_keeps_answers_whole_and_ignores_a_broken_file(tmp_path: Path) -> None:
    store = TaskStore(tmp_path, "ab" * 32)
    task = _task((0.0,))
    key = task.key(c_build_id())
    assert store.get(key) is None
    store.put(key, {"x": [1, 2]})
    assert store.get(key) == {"x": [1, 2]}
    (store.folder / f"{key}.json").write_text('{"x": [1,')  # a torn write from elsewhere
    assert store.get(key) is None
    # a different input or C build is a different key: nothing is mixed
    assert replace(task, seed=8).key(c_build_id()) != key
    assert task.key("another build") != key


def test_a_run_resumes_from_kept_tasks_with_the_same_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = tmp_path / "fleet.toml"
    scenario.write_text(SCENARIO)
    tasks = tmp_path / "tasks"
    args = ["run", str(scenario), "--no-history", "--workers", "1", "--task-dir", str(tasks)]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    kept = sorted(tasks.rglob("*.json"))
    assert kept
    # Resumed: every task is kept, so no task runs (a task now fails if asked).
    import harness.metrics.fleet.metric as fleet_metric

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a kept task ran again")

    monkeypatch.setattr(fleet_metric, "run_tasks", lambda choice, fn, todo, done: (
        refuse() if todo else None))
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    first, second = (json.loads((tmp_path / d / "fleet-test.json").read_text())
                     for d in ("a", "b"))
    assert first["runs"][0]["figures"]["fleet"] == second["runs"][0]["figures"]["fleet"]
    fleet = first["runs"][0]["figures"]["fleet"]
    assert fleet["rollback"]["wave"] == "rest" and fleet["rollback"]["caches"] in (
        "warm", "partly cold")
    assert first["runs"][0]["figures"]["rollout"]["waves"][0]["data_centres"] == ["dc-0"]


def test_timing_metrics_are_refused_under_dask(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "fleet.toml"
    scenario.write_text(SCENARIO.replace('metrics = ["balance"]',
                                         'metrics = ["balance", "throughput"]'))
    assert main(["run", str(scenario), "--no-history", "--out", str(tmp_path / "o"),
                 "--executor", "dask"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'throughput' is refused under --executor dask" in err
    assert not (tmp_path / "o").exists()


def test_a_scheduler_without_dask_is_refused(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "fleet.toml"
    scenario.write_text(SCENARIO)
    assert main(["run", str(scenario), "--no-history", "--out", str(tmp_path / "o"),
                 "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler names a Dask scheduler: it needs --executor dask" in \
        capsys.readouterr().err


def test_missing_dask_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from harness.core.executor import ExecutorChoice

    real = builtins.__import__

    def no_dask(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("distributed"):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(ScenarioError, match=r"pip install 'ring-harness\[cluster\]'"):
        ExecutorChoice("dask").check()




def test_names_a_user_gives_are_escaped_in_every_output(tmp_path: Path) -> None:
    """A data centre and a wave named with Markdown and HTML in them are shown as text."""
    hostile = "<b>x</b>|`y`"
    text = SCENARIO.replace('data_centres = 4\n', f'name = "{hostile}-{{i}}"\n'
                            'data_centres = 4\n').replace('"canary"', f'"{hostile}"')
    scenario = tmp_path / "fleet.toml"
    scenario.write_text(text)
    assert main(["run", str(scenario), "--no-history", "--out", str(tmp_path / "o"),
                 "--workers", "1"]) == 0
    page = (tmp_path / "o" / "fleet-test.html").read_text()
    markdown = (tmp_path / "o" / "fleet-test.md").read_text()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    # in a table cell, escaped once: the pipe does not split the row, the tags are text
    row = next(line for line in markdown.splitlines() if "`-0 |" in line)
    assert row.startswith("| \\<b>x\\</b>\\|\\`y\\`-0 | \\<b>x\\</b>\\|\\`y\\` | 3 ")


@pytest.mark.parametrize(("change", "message"), [
    (('points_per_weight = 40', 'construction = "nginx"'),
     "[fleet] needs a ring of the points construction"),
    (("warmup_requests = 1_000\n", "warmup_requests = 100_000_000\n"),
     "must fit the time budget of --max-minutes"),
    (("requests_per_window = 400", "requests_per_window = 10_000_000"),
     "must fit the time budget of --max-minutes"),
    (('waves = [{ name = "canary", count = 1 }, { name = "rest", share = 1.0 }]',
      'waves = [{ name = "canary", count = 1 }, { name = "rest", count = 9 }]'),
     "rollout.rollback.wave must be"),
])
def test_a_hostile_fleet_is_refused_before_any_work(
        change: tuple[str, str], message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    old, new = change
    assert old in SCENARIO
    text = SCENARIO.replace(old, new)
    if "count = 9" in new:  # the rollback names a wave: keep it, rename the wave away
        text = text.replace('name = "rest", count = 9', 'name = "others", count = 9')
    scenario = tmp_path / "fleet.toml"
    scenario.write_text(text)
    out = tmp_path / "o"
    # a budget of one minute: the tasks' estimate refuses the long ones before any work
    assert main(["run", str(scenario), "--no-history", "--out", str(out),
                 "--max-minutes", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not out.exists()
