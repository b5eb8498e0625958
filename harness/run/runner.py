"""The runner: a scenario in, one typed result out.

For every point of the sweep: build the algorithm (the ring: its
construction's points) in each form to measure (the ring's layouts), route
the workload through the reference and check that every form routes
identically (parity), build the peers, then walk the metric registry: each
selected metric measures and returns its typed record. Progress is counted
from the plan of jobs, known before any work starts.
"""

from __future__ import annotations

import contextlib
import functools
import resource
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.executor import LOCAL, ExecutorChoice
from harness.core.fleet_points import FleetPoints
from harness.core.machine import git_commit, machine_info
from harness.core.model import (
    FORMAT_NAME,
    FORMAT_VERSION,
    Machine,
    Result,
    RingInfo,
    Run,
    Subject,
    run_to_json,
    structure,
)
from harness.core.progress import Progress
from harness.core.redact import without_keys
from harness.core.servers import Server
from harness.core.version import VERSION
from harness.core.workload import key_names, routed_names
from harness.metrics.context import RunContext, RunPlan
from harness.metrics.parity import PLAIN_REFERENCE_KEYS, KeyHashes, check_parity
from harness.metrics.registry import record_types, selected
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.base import Algorithm, rebuilt
from harness.recipes.algorithms.parts import parts_builder
from harness.recipes.peers import PEERS, Peer
from harness.recipes.peers.foreign import ForeignPeer, open_foreign_peer
from harness.recipes.peers.foreign.claims import batch_for, check_claim, owners_by_name
from harness.run.estimate import estimate
from harness.run.scenario import Recipe, Scenario
from harness.run.sweep import SweepTask, points_as_tasks, ran_on_text, why_in_sequence


def _peer_subject(name: str, peer: Peer, names: list[str],
                  owners: npt.NDArray[np.uint16]) -> Subject:
    """A peer's size, and how often it agrees with our reference (1.0 only for the same ring)."""
    sample = names[:PLAIN_REFERENCE_KEYS]
    agree = sum(peer.lookup_key(key) == int(o) for key, o in zip(sample, owners, strict=False))
    return Subject(name, "peer", peer.entries, peer.nbytes, agreement=agree / len(sample),
                   agreement_keys=len(sample))


def _foreign_subject(peer: ForeignPeer, servers: Sequence[Server], names: list[str],
                     owners: npt.NDArray[np.uint16]) -> Subject:
    """A foreign peer routes every key at once: its claim is checked on all of them (a
    ParityError if it claims parity and one differs), its agreement with our reference too."""
    keys = [name.encode() for name in names]
    routed = owners_by_name(peer, servers, peer.route_prepared(batch_for(peer, servers, keys)))
    check_claim(peer.spec, servers, keys, routed)
    agree = int(np.count_nonzero(routed == owners))
    return Subject(peer.name, "peer", peer.entries, peer.nbytes,
                   agreement=agree / max(1, len(keys)), agreement_keys=len(keys))


def plan_of(scenario: Scenario) -> RunPlan:
    measure = scenario.measure
    foreign = measure.foreign_peers
    return RunPlan(forms=len(measure.forms), peers=len(measure.peers),
                   operations=len(scenario.operations), settings=measure.settings,
                   foreign=len(foreign),
                   foreign_libraries=sum(spec.kind == "library" for spec in foreign),
                   options=measure.options)


def steps_per_run(scenario: Scenario) -> int:
    """Progress steps of one sweep point: building and parity, then each metric's share."""
    plan = plan_of(scenario)
    return 1 + sum(metric.steps(plan) for metric in selected(scenario.measure.metrics))


@dataclass(frozen=True)
class TaskPlace:
    """Where a metric's independent tasks (a fleet's data centres) run, and where the
    finished ones are kept so that an interrupted run resumes (None: not kept)."""

    executor: ExecutorChoice = LOCAL
    root: Path | None = None
    #: whether a sweep's points run as tasks on the executor too (the user chose an
    #: executor); else they run one after another here, as they always have
    sweep: bool = False


def run_recipe(
    scenario: Scenario, recipe: Recipe, names: list[str], hashes: KeyHashes,
    progress: Progress, scratch: str, tasks: TaskPlace | None = None,
) -> Run:
    """Everything measured for one recipe of the sweep."""
    with contextlib.ExitStack() as stack:
        foreign: dict[str, ForeignPeer] = {}
        for spec in scenario.measure.foreign_peers:
            progress.stage(f"{recipe.label}: starting peer {spec.name}")
            foreign[spec.name] = open_foreign_peer(spec, scenario.ring_servers())
            # Ended on every way out: a failed check, a failed metric, Ctrl-C.
            stack.callback(foreign[spec.name].close)
        return _run_recipe(scenario, recipe, names, hashes, progress, scratch, foreign,
                           tasks or TaskPlace())


def _run_recipe(
    scenario: Scenario, recipe: Recipe, names: list[str], hashes: KeyHashes,
    progress: Progress, scratch: str, foreign: dict[str, ForeignPeer], tasks: TaskPlace,
) -> Run:
    started = time.perf_counter()
    servers = scenario.ring_servers()
    algorithm_class = get_algorithm(recipe.algorithm)
    label = recipe.label
    progress.stage(f"{label}: building")
    # The recipe's parameters and servers were checked when the scenario loaded.
    reference = algorithm_class.from_params(servers, recipe.params)
    keys = hashes.of(reference)
    progress.stage(f"{label}: building forms, checking parity")
    forms = reference.forms(scenario.measure.forms)
    owners, parity = check_parity(reference, keys, forms)
    peers = {name: PEERS[name].build(servers) for name in scenario.measure.peers}
    progress.advance()
    subjects = [Subject(name, "layout" if form.ring is not None else "algorithm",
                        form.entries, form.nbytes, entry_size=form.entry_size)
                for name, form in forms.items()]
    subjects += [_peer_subject(name, peer, names, owners) for name, peer in peers.items()]
    subjects += [_foreign_subject(peer, servers, names, owners) for peer in foreign.values()]
    by_name = {subject.name: subject for subject in subjects}
    run = Run(label=label, algorithm=recipe.algorithm, params=without_keys(reference.params),
              points_per_weight=recipe.params.get("points_per_weight"), parity=parity,
              ring=_ring_info(reference, servers), subjects=subjects)

    # A ring recipe's points for the whole fleet, hashed once for this sweep point's metrics
    # (a process and its migration); dropped with the context.
    fleet_points: dict[str, FleetPoints | None] = {}

    def parts(params: dict[str, Any] | None) -> Callable[[Sequence[Server]], Algorithm]:
        if params is None:
            return parts_builder(recipe.algorithm, servers, recipe.params, checked=True,
                                 cache=fleet_points)
        return parts_builder(params.get("algorithm", recipe.algorithm), servers,
                             {k: v for k, v in params.items() if k != "algorithm"},
                             cache=fleet_points)

    with tempfile.TemporaryDirectory(prefix="recipe-", dir=scratch) as workdir:
        context = RunContext(
            label=label, servers=servers, algorithm=reference, forms=forms, peers=peers,
            foreign_peers=foreign,
            key_names=names, key_hashes=keys, owners=owners, operations=scenario.operations,
            settings=scenario.measure.settings, workdir=workdir,
            rebuild=functools.partial(rebuilt, algorithm_class, recipe.params),
            build=lambda fleet, params: _build_recipe(recipe.algorithm, fleet, params),
            parts=parts,
            estimated_entries=lambda fleet: algorithm_class.estimated_entries(
                fleet, recipe.params),
            capabilities=scenario.ring_capabilities(), zones=scenario.ring_zones(),
            options=scenario.measure.options,
            stage=progress.stage, advance=progress.advance,
            executor=tasks.executor, task_root=tasks.root,
            scenario_sha256=scenario.sha256,
        )
        for metric in selected(scenario.measure.metrics):
            record = metric.measure(context)
            if record is None:
                continue
            if metric.scope == "run":
                run.figures[metric.name] = record
            else:
                for name, subject_record in record.items():
                    by_name[name].figures[metric.name] = subject_record
    fleet_points.clear()
    run.wall_s = round(time.perf_counter() - started, 3)
    run.peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return run


def _build_recipe(default: str, servers: Sequence[Server], params: dict[str, Any]) -> Algorithm:
    """An algorithm from parameters that may name another one (`algorithm = "maglev"`)."""
    name = params.get("algorithm", default)
    return get_algorithm(name).build(servers, **{k: v for k, v in params.items()
                                                 if k != "algorithm"})


def _ring_info(algorithm: Algorithm, servers: Sequence[Server]) -> RingInfo | None:
    ring = algorithm.ring
    if ring is None or algorithm.construction is None:
        return None
    params = algorithm.params
    return RingInfo(servers=len(servers), points=ring.entries + ring.collisions,
                    entries=ring.entries, bits=ring.bits,
                    hash=params.get("hash", params.get("construction", "")))


def run_point(task: SweepTask) -> dict[str, Any]:
    """One sweep point, in a worker: its keys named, its recipe run (`run_recipe`), its
    record sent back as the result serialises it. It reads nothing but the scenario."""
    scenario = task.scenario
    names = routed_names(scenario.keys, key_names(scenario.keys))
    hashes = KeyHashes([name.encode() for name in names])
    with (Progress(0, scenario.name, enabled=False) as quiet,
          tempfile.TemporaryDirectory(prefix="ring-harness-") as scratch):
        return run_to_json(run_recipe(scenario, scenario.recipes()[task.index], names,
                                      hashes, quiet, scratch))


def run_scenario(
    scenario: Scenario, show_progress: bool | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    tasks: TaskPlace | None = None,
) -> Result:
    """Run every recipe of the scenario's sweep; return the result. `tasks`: where a
    metric's independent tasks run and are kept (default: a local pool, not kept)."""
    started, start = clock(), time.perf_counter()
    estimated = estimate(scenario, tasks.executor.worker_count()
                         if tasks is not None and tasks.sweep else None)
    recipes = scenario.recipes()
    with Progress(steps_per_run(scenario) * len(recipes), scenario.name,
                  enabled=show_progress) as progress:
        ran_on = None
        if tasks is not None and tasks.sweep and why_in_sequence(scenario) is None:
            runs = points_as_tasks(scenario, tasks.executor, tasks.root, progress,
                                   steps_per_run(scenario), run_point)
            ran_on = ran_on_text(scenario, tasks.executor)
        else:
            progress.stage("naming keys")
            names = routed_names(scenario.keys, key_names(scenario.keys))
            hashes = KeyHashes([name.encode() for name in names])
            # One temporary folder per run, removed on every way out (Ctrl-C and SIGTERM).
            with tempfile.TemporaryDirectory(prefix="ring-harness-") as scratch:
                runs = [run_recipe(scenario, recipe, names, hashes, progress, scratch, tasks)
                        for recipe in recipes]

    result = Result(
        format=FORMAT_NAME, format_version=FORMAT_VERSION, harness_version=VERSION,
        scenario=scenario.as_record(), scenario_file=scenario.path,
        scenario_sha256=scenario.sha256, machine=structure(machine_info(), Machine),
        git_commit=git_commit(),
        started_at=started.isoformat(timespec="seconds"),
        duration_s=round(time.perf_counter() - start, 1), runs=runs,
        estimated_peak_bytes=estimated.peak_bytes, executor=ran_on,
    )
    # Redacted before anything renders it: a record's note or table may quote a recipe's
    # parameters (a keyed hash's `hash_key` among them), and the Markdown, the page, the
    # history entry and stdout are all rendered from what this returns. Read back from the
    # redacted document, the result is also exactly what `show` re-renders from the JSON.
    return Result.from_json(result.to_json(), f"scenario {scenario.name!r}",
                            record_types=record_types())
