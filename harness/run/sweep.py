"""Sweep points as tasks: each recipe of a scenario's sweep run in a worker of the executor
the command line chose (`harness.core.executor`), its `Run` sent back as the result
serialises it and put back in sweep order.

A sweep point depends on the scenario alone (its keys are named, its rings built and its
tables seeded from the scenario's fields), so its figures are the same bits whatever worker
ran it and in whatever order. The tables that time or count this machine, and those that
start programs of their own, stay one point after another in this process: their figures
belong to one measured machine, and two points timed at once would slow each other. Under
Dask they are refused before any work (`ExecutorChoice.refuse_machine_bound`).

Finished points are kept in the task store (`harness.core.task_store`), keyed by the
scenario's hash, the point's index and label and the C build, so an interrupted run resumes
computing only the points that are missing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from harness.core.executor import MACHINE_BOUND_METRICS
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
