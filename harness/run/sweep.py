"""Sweep points as tasks: each recipe of a scenario's sweep run in a worker of the executor
the command line chose (`harness.core.executor`), its `Run` sent back as the result
serialises it and put back in sweep order.

A sweep point depends on the scenario alone (its keys are named, its rings built and its
tables seeded from the scenario's fields), so its figures are the same bits whatever worker
ran it and in whatever order. The tables that time or count this machine, those that time
their own work, and those that start programs or tasks of their own, stay one point after
another in this process (`why_in_sequence`): their figures belong to one measured machine,
and two points timed at once would slow each other. Under Dask the metrics that measure
the machine itself are refused before any work (`ExecutorChoice.refuse_machine_bound`).

Finished points are kept in the task store (`harness.core.task_store`), keyed by the
scenario's hash, the point's index and label and the C build, so an interrupted run resumes
computing only the points that are missing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.core.errors import ResultFormatError
from harness.core.executor import MACHINE_BOUND_METRICS, ExecutorChoice, run_tasks
from harness.core.model import Run, run_from_json
from harness.core.progress import Progress
from harness.core.task_store import TaskStore, c_build_id
from harness.metrics.registry import record_types
from harness.recipes.algorithms.cost import entries_of
from harness.run.scenario import Scenario

#: tables that run their own tasks on the executor (a fleet's data centres): their sweep
#: points stay in sequence, so that tasks are one level deep
OWN_TASK_METRICS = ("fleet", "rollout")
#: tables whose figures include timings of their own work (builds, replays, searches),
#: which two points run at once would slow, and the process table, which also sizes its
#: sample of rings by this machine's free memory (two points at once would share it)
TIMED_TABLES = {
    "process": "times its rings' builds and sizes its sample by this machine's free memory",
    "comparison": "times each algorithm's build",
    "equivalence": "times its rings' builds",
    "hostile_keys": "times the attack's search",
    "migration": "times its replay",
}


@dataclass(frozen=True)
class SweepTask:
    """One sweep point: the scenario as loaded and the index of its recipe."""

    scenario: Scenario
    index: int

    def key(self, build: str) -> str:
        """Its name in the task store: the point, its label and the C build that ran it
        (the scenario's hash names the store's folder)."""
        label = self.scenario.recipes()[self.index].label
        text = json.dumps(["sweep-point", self.index, label, build])
        return "point-" + hashlib.sha256(text.encode()).hexdigest()[:24]


def why_in_sequence(scenario: Scenario) -> str | None:
    """Why this scenario's sweep points run one after another in this process (None: they
    are tasks)."""
    if len(scenario.recipes()) < 2:
        return "one sweep point"
    metrics = scenario.measure.metrics
    bound = [m for m in metrics if m in MACHINE_BOUND_METRICS]
    if bound:
        return (f"measure.metrics {bound[0]!r} measures this machine (its timings, counts "
                "or memory)")
    timed = [m for m in metrics if m in TIMED_TABLES]
    if timed:
        return f"[{timed[0]}] {TIMED_TABLES[timed[0]]}"
    own = [m for m in metrics if m in OWN_TASK_METRICS]
    if own:
        return f"[{own[0]}] runs its own tasks"
    if scenario.measure.foreign_peers:
        return "its foreign peers are programs of this machine"
    return None


def sweep_workers(scenario: Scenario, workers: int) -> int:
    """Workers the sweep points occupy at once: 1 when they run in sequence."""
    if why_in_sequence(scenario) is not None:
        return 1
    return max(1, min(workers, len(scenario.recipes())))


def ran_on_text(scenario: Scenario, executor: ExecutorChoice) -> str:
    """What the result says of where its points ran (the workers used, not asked for: a
    pool is no larger than the sweep) and where its memory figures came from."""
    used = (executor if executor.scheduler is not None else
            replace(executor, workers=sweep_workers(scenario, executor.worker_count())))
    return (f"sweep points as tasks on {used.describe()}; memory figures are each "
            "structure's own bytes (its layout's cost), peak_rss_bytes the worker's that "
            "ran the point")


def _kept(answer: Any, types: dict[str, type[Any]]) -> dict[str, Any] | None:
    """A kept point's record, or None (computed again) when it is not one."""
    try:
        run_from_json(answer, "kept sweep point", record_types=types)
    except ResultFormatError:
        return None
    return dict(answer)


def points_as_tasks(scenario: Scenario, executor: ExecutorChoice, root: Path | None,
                    progress: Progress, steps: int,
                    run_point: Callable[[SweepTask], dict[str, Any]]) -> list[Run]:
    """Every sweep point as a task (`run_point`, the runner's) on `executor`, those kept
    under `root` from an interrupted run read back instead; the records in sweep order.
    Each point is `steps` steps of the progress bar."""
    tasks = [SweepTask(scenario, i) for i in range(len(scenario.recipes()))]
    store = TaskStore(root, scenario.sha256) if root is not None else None
    build = c_build_id()
    keys = [task.key(build) for task in tasks]
    types = record_types()
    answers: list[dict[str, Any] | None] = [
        _kept(store.get(k), types) if store else None for k in keys]
    # The largest points first (by their structures' entries), so that the last to finish
    # is a small one: the workers end together rather than one waiting on a late large point.
    servers = [scenario.ring_servers()]
    size = {i: entries_of(r.algorithm, r.params, servers)
            for i, r in enumerate(scenario.recipes())}
    missing = sorted((i for i, answer in enumerate(answers) if answer is None),
                     key=lambda i: (-size[i], i))
    progress.advance(steps * (len(tasks) - len(missing)))
    progress.stage(f"{len(tasks)} sweep points ({len(tasks) - len(missing)} kept from an "
                   f"earlier run) on {executor.describe()}")

    def done(index: int, answer: dict[str, Any]) -> None:
        point = missing[index]
        answers[point] = answer
        if store is not None:
            store.put(keys[point], answer)
        progress.advance(steps)
        progress.stage(f"{sum(a is not None for a in answers)} of {len(tasks)} sweep "
                       "points done")

    run_tasks(executor, run_point, [tasks[i] for i in missing], done)
    return [run_from_json(answer, f"sweep point {i}", record_types=types)
            for i, answer in enumerate(answers)]
