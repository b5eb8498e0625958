"""`[fleet]` and `[rollout]` as metrics: the fleet metric draws the data centres, makes one
task per distinct data centre (`task.py`), runs them where the command line says
(`harness.core.executor`), keeps each answer (`harness.core.task_store`) and folds them
into the fleet's figures; `[rollout]` is its companion table (the change and its waves),
read and checked by its own metric, which measures nothing by itself.

Memory is from layout costs, not measured: each ring's entries from the recipe's point
counts (before building), times `bytes_per_entry`, plus each process's server table and
owner maps (as `[process]` counts them). One router process per server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness.core.cost import Cost
from harness.core.errors import ScenarioError
from harness.core.executor import run_tasks
from harness.core.fields import Fields
from harness.core.machine import available_memory_bytes, usable_cores
from harness.core.native.lru import lru_workspace_bytes
from harness.core.servers import Server
from harness.core.splitmix import splitmix64_at
from harness.core.tables import Answer, Section
from harness.core.task_store import TaskStore, c_build_id
from harness.metrics.base import MetricBase, Reference, RunShape, ScenarioView, Working
from harness.metrics.fleet import tables
from harness.metrics.fleet.options import (
    FleetOptions,
    RolloutOptions,
    Shape,
    parse_fleet,
    parse_rollout,
)
from harness.metrics.fleet.records import (
    CentreFigures,
    Fleet,
    RollbackFigures,
    RolloutPlan,
    WaveFigures,
    WavePlan,
)
from harness.metrics.fleet.schedule import Timeline, timeline
from harness.metrics.fleet.task import DcTask, run_task
from harness.metrics.process import shared_table_bytes
from harness.recipes.algorithms import get_algorithm
from harness.recipes.changes import changed_params

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.metrics.context import RunContext, RunPlan, Scope

MEMORY_SOURCE = ("layout costs: each ring's entries (from the recipe's point counts) x "
                 "bytes_per_entry, plus each process's server table and owner maps")
#: a task's bytes per object of the universe (names, hashes, two owner arrays, selector)
TASK_BYTES_PER_OBJECT = 250
#: per request: the stream (4), a route (2), misses (1), shares and temporaries (16)
TASK_BYTES_PER_REQUEST = 40
#: per point of the rings of all servers, old and new, while generated and held: a task of
#: 2,048 servers (48M points at 160 and 16 per unit of weight) peaked at 669 MiB RSS, 15
#: bytes a point with everything else, on 2026-12-05
TASK_BYTES_PER_POINT = 24
#: seconds per request replayed three ways (zipf draw, routing, LRU), and per ring point
#: and per object of the universe (named, hashed and routed by both rings); fleet-rollout's
#: seven tasks (3.3M requests and 500,000 objects each) took 23.5 s on two busy workers
TASK_NS_PER_REQUEST = 500
TASK_NS_PER_POINT = 400
TASK_NS_PER_OBJECT = 3_000
#: a worker process before any task: the interpreter with numpy, the C core and the harness
#: imported (about 55 MiB resident here), with margin
WORKER_BYTES = 100 * 2**20
#: within this share of the steady rate, the old ring's caches count as warm
WARM_WITHIN = 0.05


def draw_servers(shape: Shape, seed: int, index: int) -> tuple[tuple[str, float,
                                                                     tuple[str, ...]], ...]:
    """The servers of a shape, drawn as [servers] draws generated servers (weights from a
    distribution, each capability held independently by its share), seeded from the
    fleet's seed and the shape's index (splitmix64), so every data centre of the shape
    has the same ones."""
    rng = np.random.default_rng(splitmix64_at(seed, index))
    n = shape.servers
    weights = np.ones(n)
    if shape.weights is not None:
        p = np.asarray(shape.weights.shares) / sum(shape.weights.shares)
        weights = rng.choice(np.asarray(shape.weights.values), size=n, p=p / p.sum())
    held: list[list[str]] = [[] for _ in range(n)]
    for capability, share in shape.capabilities:
        for i in np.flatnonzero(rng.random(n) < share):
            held[int(i)].append(capability)
    return tuple((f"edge-{i}", float(weights[i]), tuple(held[i])) for i in range(n))


@dataclass(frozen=True)
class FleetPlan:
    """The drawn fleet, its timeline and its distinct tasks, known before any work."""

    fleet: FleetOptions
    rollout: RolloutOptions
    timeline: Timeline
    tasks: tuple[DcTask, ...]
    #: each data centre's task
    task_of: tuple[int, ...]
    new_algorithm: str


def new_recipe(algorithm: str, params: dict[str, Any], to: dict[str, Any],
               file: str) -> tuple[str, dict[str, Any]]:
    """The new recipe's algorithm and checked parameters."""
    name, merged = changed_params(algorithm, params, to)
    fields = Fields(file, "rollout.to", merged)
    checked = get_algorithm(name).parse_params(fields)
    fields.finish()
    return name, checked


def plan(fleet: FleetOptions, rollout: RolloutOptions, algorithm: str,
         params: dict[str, Any], file: str = "[rollout]") -> FleetPlan:
    line = timeline(fleet, rollout, file)
    new_name, new_params = new_recipe(algorithm, params, rollout.to, file)
    servers = [draw_servers(shape, fleet.seed, i) for i, shape in enumerate(fleet.shapes)]
    found: dict[str, DcTask] = {}
    index: dict[str, int] = {}
    task_of = []
    for j, centre in enumerate(fleet.data_centres):
        task = DcTask(
            algorithm=algorithm, old=dict(params), new_algorithm=new_name, new=new_params,
            servers=servers[centre.shape], eligibility=fleet.eligibility,
            universe=fleet.universe, zipf_exponent=fleet.zipf_exponent,
            cache_objects=fleet.cache_objects, requests_per_window=fleet.requests_per_window,
            warmup_requests=fleet.warmup_requests,
            staged=line.shares(j, rollout.stages, rollout.windows_per_stage),
            at_once=line.shares(j, rollout.stages, rollout.windows_per_stage, staged=False),
            # the stream's seed: the fleet's seed and the shape's index, not the data
            # centre's, so that data centres of one shape and wave are one task
            seed=splitmix64_at(fleet.seed, 2**32 + centre.shape))
        key = task.key("")
        found.setdefault(key, task)
        task_of.append(index.setdefault(key, len(index)))
    return FleetPlan(fleet, rollout, line, tuple(found.values()), tuple(task_of), new_name)


def _points(task: DcTask) -> float:
    """Points of the rings of all servers, old and new."""
    weight = sum(w for _n, w, _c in task.servers)
    return weight * sum(max(int(params.get("points_per_weight", 1) or 1), 1)
                        for params in (task.old, task.new))


def distinct_tasks(fleet: FleetOptions, rollout: RolloutOptions) -> int:
    """How many tasks `plan` makes: data centres of one shape and one schedule are one."""
    line = timeline(fleet, rollout, "[rollout]")
    return len({(centre.shape, line.shares(j, rollout.stages, rollout.windows_per_stage),
                 line.shares(j, rollout.stages, rollout.windows_per_stage, staged=False))
                for j, centre in enumerate(fleet.data_centres)})


def task_bytes(task: DcTask) -> float:
    """The most a task holds: the universe's names and owners, the request stream and its
    routes, both rings of all servers, the LRU caches."""
    return (TASK_BYTES_PER_OBJECT * task.universe + TASK_BYTES_PER_REQUEST * task.requests
            + TASK_BYTES_PER_POINT * _points(task)
            + lru_workspace_bytes(len(task.servers), task.cache_objects))


def task_seconds(task: DcTask) -> float:
    """Its requests replayed three ways and both rings built (the 2,048-server task of
    fleet-cloudflare: 10.6 s measured at load average 10, 37 s estimated)."""
    return 1e-9 * (3 * TASK_NS_PER_REQUEST * task.requests + TASK_NS_PER_OBJECT * task.universe
                   + TASK_NS_PER_POINT * 2 * _points(task))


class FleetMetric(MetricBase):
    """A fleet of data centres rolled out in waves: memory, origin fetches, the rollback."""

    name: ClassVar[str] = "fleet"
    table: ClassVar[str] = "fleet"
    on_by_default: ClassVar[bool] = False
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = Fleet
    cost_fields: ClassVar[str] = ("universe, requests_per_window, warmup_requests, "
                                  "sizes, weights, cache_objects")
    reference: ClassVar[Reference] = Reference(
        tables={
            "fleet": "A fleet of data centres, each a router process per server "
                     "(`[fleet]`, rolled out by `[rollout]`).",
            "fleet.list[]": "A data centre named one by one (instead of data_centres).",
            "fleet.sizes": "Servers per generated data centre, drawn with these shares.",
            "fleet.weights": "Server weights, drawn as [servers] draws them.",
            "fleet.list[].weights": "Server weights, drawn as [servers] draws them.",
        },
        free_form={
            "fleet.capabilities": "capability = share of servers holding it, as [servers]",
            "fleet.list[].capabilities": "capability = share of servers holding it",
        },
        specimens=("""
            [servers]
            count = 3
            [measure]
            metrics = ["balance"]
            [fleet]
            eligibility = [[], ["pci"]]
            universe = 1000
            requests_per_window = 100
            warmup_requests = 0
            [[fleet.list]]
            name = "ams"
            servers = 4
            weights = { values = [1, 2], shares = [1, 1] }
            capabilities = { pci = 0.5 }
            [rollout]
            to = { points_per_weight = 16 }
            waves = [{ name = "ams", data_centres = ["ams"] }]
            rollback = { wave = "ams", stage = 1 }
            """,))

    @staticmethod
    def parse_options(table: Fields) -> FleetOptions:
        return parse_fleet(table)

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """[rollout] is required beside [fleet]; its waves resolve against the fleet; the
        new recipe is valid for the scenario's algorithm; each distinct data centre fits
        a worker."""
        rollout = scenario.measure.options.get("rollout")
        if not isinstance(rollout, RolloutOptions):
            raise ScenarioError(f"{top.file}: [fleet] needs [rollout] (the change rolled out "
                                "over the fleet: to, stages, waves)")
        for recipe in scenario.recipes():
            if recipe.algorithm != "ring" or recipe.params.get("construction") != "points":
                raise ScenarioError(f"{top.file}: [fleet] needs a ring of the points "
                                    "construction (a recipe of [generator]) (got "
                                    f"{recipe.label!r})")
            found = plan(options, rollout, recipe.algorithm, recipe.params, top.file)
            refuse_oversized(found, top.file, usable_cores())

    def steps(self, plan_: RunPlan) -> int:
        """One step per distinct data centre (a shape in a wave): the progress bar counts
        tasks and gives their ETA."""
        fleet, rollout = plan_.options.get("fleet"), plan_.options.get("rollout")
        if not isinstance(fleet, FleetOptions) or not isinstance(rollout, RolloutOptions):
            return 0
        return distinct_tasks(fleet, rollout)

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """The largest distinct data centre's task, once per local worker, and what the
        parent holds (each data centre's figures, small)."""
        assert isinstance(options, FleetOptions)
        return _largest_task_bytes(options) * usable_cores()

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        """Every distinct task's requests and ring points, on this machine's cores."""
        assert isinstance(options, FleetOptions)
        shapes = len(options.shapes)
        seconds = _largest_task_seconds(options) * shapes * 4 / max(1, usable_cores())
        return seconds, (f"{shapes} data centre shapes, each replaying requests_per_window "
                         "x windows three ways")

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """With the rollout known, the fleet's own tasks priced one by one: the largest
        task on each local worker at once, and every distinct task's seconds shared by the
        workers (at least the longest task's)."""
        own = super().cost(shape, servers, working)
        fleet, rollout = shape.options.get("fleet"), shape.options.get("rollout")
        if (not isinstance(fleet, FleetOptions) or not isinstance(rollout, RolloutOptions)
                or shape.algorithm != "ring"):
            return own
        found = plan(fleet, rollout, shape.algorithm, dict(shape.params))
        workers = min(usable_cores(), len(found.tasks))
        seconds = [task_seconds(t) for t in found.tasks]
        return Cost(peak=workers * (WORKER_BYTES + max(task_bytes(t) for t in found.tasks)),
                    seconds=max(sum(seconds) / workers, max(seconds)),
                    why=f"[fleet] ({self.cost_fields})",
                    why_seconds=f"[fleet]: {len(found.tasks)} distinct data centres, each "
                                "building its rings and replaying its requests three ways")

    def measure(self, context: RunContext) -> Fleet | None:
        fleet = context.options.get("fleet")
        rollout = context.options.get("rollout")
        if not isinstance(fleet, FleetOptions) or not isinstance(rollout, RolloutOptions):
            return None
        algorithm = context.algorithm
        found = plan(fleet, rollout, type(algorithm).name, dict(algorithm.params))
        choice = context.executor
        refuse_oversized(found, "[fleet]", choice.worker_count())
        store = (TaskStore(context.task_root, context.scenario_sha256)
                 if context.task_root is not None else None)
        build = c_build_id()
        keys = [task.key(build) for task in found.tasks]
        answers: list[dict[str, Any] | None] = [store.get(k) if store else None for k in keys]
        missing = [i for i, a in enumerate(answers) if a is None]
        context.stage(f"{context.label}: fleet, {len(found.tasks)} distinct data centres "
                      f"({len(found.tasks) - len(missing)} kept from an earlier run), on "
                      f"{choice.describe()}")

        context.advance(len(found.tasks) - len(missing))

        def done(index: int, answer: dict[str, Any]) -> None:
            task = missing[index]
            answers[task] = answer
            if store is not None:
                store.put(keys[task], answer)
            context.advance(1)
            context.stage(f"{context.label}: fleet, {sum(a is not None for a in answers)} "
                          f"of {len(answers)} tasks done")

        run_tasks(choice, run_task, [found.tasks[i] for i in missing], done)
        complete = [a for a in answers if a is not None]
        assert len(complete) == len(answers)
        return fold(found, complete, fleet)

    def answers(self, result: Result) -> list[Answer]:
        return tables.answer_lines(result, self.name)

    def sections(self, result: Result) -> list[Section]:
        return tables.sections(result, self.name)


def _largest_task_bytes(options: FleetOptions) -> float:
    windows = 64  # the estimate's stand-in before the rollout is resolved
    return max(task_bytes(DcTask("ring", {"points_per_weight": 160}, "ring",
                                 {"points_per_weight": 160},
                                 draw_servers(s, options.seed, i), (), options.universe,
                                 1.0, options.cache_objects, options.requests_per_window,
                                 options.warmup_requests, (0.0,) * windows,
                                 (0.0,) * windows, 0))
               for i, s in enumerate(options.shapes))


def _largest_task_seconds(options: FleetOptions) -> float:
    windows = 64
    return max(task_seconds(DcTask("ring", {"points_per_weight": 160}, "ring",
                                   {"points_per_weight": 160},
                                   draw_servers(s, options.seed, i), (), options.universe,
                                   1.0, options.cache_objects, options.requests_per_window,
                                   options.warmup_requests, (0.0,) * windows,
                                   (0.0,) * windows, 0))
               for i, s in enumerate(options.shapes))


def refuse_oversized(found: FleetPlan, file: str, workers: int) -> None:
    """A task larger than a worker's share of this machine's memory is refused."""
    available = available_memory_bytes()
    if available is None:
        return
    share = available / max(1, workers)
    largest = max(task_bytes(t) for t in found.tasks)
    if largest > share:
        raise ScenarioError(
            f"{file}: fleet's largest data centre needs about {largest / 2**20:,.0f} MiB "
            f"per task, more than a worker's share of this machine ({share / 2**20:,.0f} "
            f"MiB of {available / 2**20:,.0f} MiB over {workers} workers): fewer servers "
            "in fleet.sizes, a smaller universe or requests_per_window")


def _process_bytes(rings: list[dict[str, Any]], table: int, side: str, per_entry: int) -> int:
    return table + sum(int(per_entry * r[f"entries_{side}"] + 2 * r["servers"]) for r in rings)


def fold(found: FleetPlan, answers: list[dict[str, Any]], fleet: FleetOptions) -> Fleet:
    """Every data centre's figures from its task's answer, and the fleet's."""
    line, rollout = found.timeline, found.rollout
    window = fleet.requests_per_window
    centres: list[CentreFigures] = []
    totals = {s: np.zeros(line.windows, dtype=np.int64) for s in ("steady", "at_once",
                                                                   "staged")}
    memory = np.zeros(line.windows, dtype=np.int64)
    for j, centre in enumerate(fleet.data_centres):
        answer = answers[found.task_of[j]]
        task = found.tasks[found.task_of[j]]
        table = shared_table_bytes([Server(n, w) for n, w, _c in task.servers])
        before = _process_bytes(answer["rings"], table, "old", fleet.bytes_per_entry)
        after = _process_bytes(answer["rings"], table, "new", fleet.bytes_per_entry)
        misses = {s: np.asarray(answer["misses"][s], dtype=np.int64) for s in totals}
        for s in totals:
            totals[s] += misses[s]
        n = len(task.servers)
        for t in range(line.windows):
            memory[t] += n * ((before if line.holds_old(j, t) else 0)
                              + (after if line.holds_new(j, t) else 0))
        wave = line.wave_of[j]
        rolled = (line.rollback_window is not None and wave is not None
                  and line.starts[wave] < line.rollback_window)
        rollback_extra = (int((misses["staged"] - misses["steady"])[line.rollback_window:]
                              .sum()) if rolled and line.rollback_window is not None else None)
        centres.append(CentreFigures(
            name=centre.name, wave=line.waves[wave].name if wave is not None else None,
            servers=n, rings=len(answer["rings"]),
            process_bytes_before=before, process_bytes_after=after,
            moved_fraction=answer["moved_fraction"],
            moved_requests_fraction=answer["moved_requests_fraction"],
            formula_moved_fraction=answer["formula_moved_fraction"],
            fetches_steady=int(misses["steady"].sum()),
            fetches_at_once=int(misses["at_once"].sum()),
            fetches_staged=int(misses["staged"].sum()),
            peak_window_staged=int(misses["staged"].max()),
            peak_window_at_once=int(misses["at_once"].max()),
            staged_windows=[int(v) for v in misses["staged"]],
            rollback_extra=rollback_extra))
    waves = []
    for w, spec in enumerate(line.waves):
        members = [centres[j] for j in spec.members]
        waves.append(WaveFigures(
            spec.name, len(members), line.starts[w],
            sum(c.fetches_staged - c.fetches_steady for c in members),
            sum(c.fetches_at_once - c.fetches_steady for c in members),
            line.rollback_window is None or line.starts[w] < line.rollback_window))
    rollback = None
    if rollout.rollback is not None and line.rollback_window is not None:
        r = line.rollback_window
        steady_rate = float(totals["steady"][r]) / (window * len(centres))
        first_rate = float(totals["staged"][r]) / (window * len(centres))
        back = [c for c in centres if c.rollback_extra is not None]
        rollback = RollbackFigures(
            wave=rollout.rollback[0], stage=rollout.rollback[1], window=r,
            data_centres=len(back),
            extra_fetches=int((totals["staged"] - totals["steady"])[r:].sum()),
            first_window_rate=first_rate, steady_rate=steady_rate,
            caches="warm" if first_rate <= steady_rate * (1 + WARM_WITHIN) else "partly cold",
            new_bytes_freed=sum(c.servers * c.process_bytes_after for c in back))
    worst = max(centres, key=lambda c: (c.fetches_staged - c.fetches_steady, c.name))
    worst_wave = max(waves, key=lambda w: (w.extra_staged, w.name))
    peak = int(np.argmax(memory))
    series = {"steady": "no migration", "at_once": "all at once", "staged": "staged"}
    return Fleet(
        made=fleet.made, data_centres=len(centres), servers=sum(c.servers for c in centres),
        drawn_sizes=[list(p) for p in fleet.drawn_sizes], memory_source=MEMORY_SOURCE,
        bytes_per_entry=fleet.bytes_per_entry,
        to_label=", ".join(f"{k} = {v}" for k, v in sorted(rollout.to.items())),
        bytes_before=int(memory[0]), bytes_peak=int(memory[peak]),
        bytes_after=int(memory[-1]), peak_window=peak,
        largest_process_before=max(c.process_bytes_before for c in centres),
        largest_process_after=max(c.process_bytes_after for c in centres),
        window_requests=window, windows=line.windows,
        timeline=[(series[s], t, int(v)) for s, values in totals.items()
                  for t, v in enumerate(values)],
        memory_timeline=[(t, int(v)) for t, v in enumerate(memory)],
        centres=centres, waves=waves, worst_centre=worst.name, worst_wave=worst_wave.name,
        tasks=len(found.tasks), rollback=rollback)


class RolloutMetric(MetricBase):
    """`[rollout]`, the change [fleet] rolls out: read and checked here, measured there."""

    name: ClassVar[str] = "rollout"
    table: ClassVar[str] = "rollout"
    on_by_default: ClassVar[bool] = False
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = RolloutPlan
    reference: ClassVar[Reference] = Reference(
        tables={
            "rollout": "The change `[fleet]` rolls out: the new recipe, its stages inside "
                       "each data centre, the waves of data centres and a rollback.",
            "rollout.waves[]": "A wave of data centres: count, share of the fleet, or "
                               "data_centres by name.",
            "rollout.rollback": "Traffic goes back to the old ring after this stage of "
                                "this wave.",
        },
        free_form={"rollout.to": "the new recipe's parameters: any key of `[generator]`"})

    @staticmethod
    def parse_options(table: Fields) -> RolloutOptions:
        return parse_rollout(table)

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        if not isinstance(scenario.measure.options.get("fleet"), FleetOptions):
            raise ScenarioError(f"{top.file}: [rollout] needs [fleet] (the data centres it "
                                "rolls out over)")

    def steps(self, plan_: RunPlan) -> int:
        return 0

    def measure(self, context: RunContext) -> RolloutPlan | None:
        """The waves as resolved against the fleet (cheap: no task runs here)."""
        fleet = context.options.get("fleet")
        rollout = context.options.get("rollout")
        if not isinstance(fleet, FleetOptions) or not isinstance(rollout, RolloutOptions):
            return None
        line = timeline(fleet, rollout, "[rollout]")
        started = [line.rollback_window is None or start < line.rollback_window
                   for start in line.starts]
        return RolloutPlan(
            stages=list(rollout.stages), windows_per_stage=rollout.windows_per_stage,
            windows=line.windows, rollback_window=line.rollback_window,
            waves=[WavePlan(w.name, [fleet.data_centres[j].name for j in w.members],
                            start if go else None)
                   for w, start, go in zip(line.waves, line.starts, started, strict=True)])

    def sections(self, result: Result) -> list[Section]:
        return []


