"""Removals: what losing 0 to 90% of the servers, one after another, does to every algorithm.

Configured by a `[removals]` scenario table (`harness.metrics.removals.options`). On a
fleet of equal servers, each algorithm recipe (through the `Algorithm` protocol only, so
that any registered algorithm takes part) removes servers in each order, `fifo`
(oldest first), `lifo` (newest first) or `random` (seeded), by steps of a share of the
fleet up to `max_share` (`harness.metrics.removals.walk`). An order the algorithm cannot
follow is recorded as not supported with its reason (`removal_problem`: jump removes only
its last bucket, so it follows LIFO alone). At each step, for the same uniform keys:

- lookup ns per key, scalar and batch, every algorithm and order of the step timed in the
  same interleaved rounds (`harness.metrics.throughput`);
- memory: allocator bytes held by the structure (memray, in one fresh process per
  algorithm and order, `harness.metrics.removals.memory`), beside `nbytes`;
- balance over the live servers: CV of keys per server (`harness.core.stats.cv`) and
  peak-to-mean, beside the CV a perfectly even split of the same keys shows;
- keys moved since the previous step and since the start, beside the least any algorithm
  moves: the keys of the servers that left;
- monotonicity: the share of the moved keys whose owner left. An algorithm that moves only
  those keys reads 100% (ring, rendezvous, jump in LIFO, multi-probe); Maglev rebuilds its
  table, so some slots change hands between servers that stay (a little below 100%), and
  bounded loads move keys between survivors as their capacities change.

Each state's fast paths are checked against its plain-Python reference on `parity_keys`
keys first (a disagreement fails the run, as everywhere).

Run-wide: measured once per sweep point, independently of the sweep's own recipe.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.fields import Fields
from harness.core.servers import Server, fleet_servers
from harness.core.stats import cv
from harness.metrics.base import MetricBase, Reference
from harness.metrics.comparison.metric import noise_figures
from harness.metrics.instruments.probes import PROBE_PROCESS_BYTES
from harness.metrics.instruments.timing import measure_throughput
from harness.metrics.parity import KeyHashes, check_parity
from harness.metrics.removals.memory import measure_in_subprocess
from harness.metrics.removals.options import RemovalsOptions, parse_removals
from harness.metrics.removals.records import Removals, RemovalSeries, RemovalStep
from harness.metrics.removals.tables import removals_answers, removals_sections
from harness.metrics.removals.walk import State, removal_order, removal_problem, walk
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.removable import capacity_for

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.core.tables import Answer, Section
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.algorithms.base import Algorithm

#: fleet indexes of the first servers to leave recorded per order
FIRST_REMOVED = 10
#: bytes per key: its name and hash (about 100), and per algorithm and order three owner
#: arrays over the fleet (8 bytes each)
REMOVALS_BYTES_PER_KEY = 100
REMOVALS_BYTES_PER_KEY_AND_SERIES = 24
#: bytes per server of one held state: a ring's 160 points in generation and layout (48 each)
REMOVALS_BYTES_PER_SERVER = 160 * 48
#: seconds of one fresh memory process beyond its builds: Python, numpy and memray start
MEMORY_PROCESS_SECONDS = 2.0
#: seconds a step costs every recipe (its keys routed and compared, its timed rounds and
#: parity), and seconds a removal costs per server of the fleet (finding the server's
#: bucket and checking the shorter fleet go over every server): fitted to memento's walks
#: of 4,000 and 8,000 servers (0.28-0.33 s a step, 0.39 us a removal and server, measured
#: on two shared cores), with margin. Without them, removing 99% of 65,535 servers one
#: percent at a time was estimated at 0 s, and would take hours.
STEP_SECONDS = 0.3
REMOVAL_SECONDS_PER_SERVER = 1e-6


@dataclass
class _Walker:
    """One algorithm and order on its way: its states, and each key's owner (fleet index)
    at the start and at the previous step."""

    series: RemovalSeries
    sequence: list[int]
    states: Iterator[State]
    #: the keys, hashed the algorithm's way on its first step
    keys: KeyHashes
    hashes: npt.NDArray[np.unsignedinteger] | None = None
    start: npt.NDArray[np.int64] | None = None
    previous: npt.NDArray[np.int64] | None = None
    previous_removed: int = 0


def _shares(mask: npt.NDArray[np.bool_], moved: npt.NDArray[np.bool_],
            from_left: npt.NDArray[np.bool_]) -> tuple[float, float, float | None]:
    """(moved fraction, minimal fraction, share of the moved whose owner left)."""
    moved_count = int(moved.sum())
    monotone = float((moved & from_left).sum() / moved_count) if moved_count else None
    return float(moved.mean()), float(from_left.mean()), monotone


def step_figures(state: State, hashes: npt.NDArray[np.unsignedinteger],
                 start: npt.NDArray[np.int64] | None, previous: npt.NDArray[np.int64] | None,
                 left_now: Sequence[int], fleet: int,
                 noise_cv: float) -> tuple[RemovalStep, npt.NDArray[np.int64]]:
    """The step's figures but timings and memray's bytes, and each key's owner as a fleet
    index. `left_now`: fleet indexes of the servers removed since the previous step."""
    algorithm = state.algorithm
    algorithm.reset()  # a stateful algorithm routes the keys as a first stream
    owners = algorithm.lookup_many(hashes)
    owner = np.asarray(state.live, dtype=np.int64)[owners]
    start = owner if start is None else start
    previous = owner if previous is None else previous
    gone = np.ones(fleet, dtype=bool)
    gone[state.live] = False
    just_gone = np.zeros(fleet, dtype=bool)
    just_gone[list(left_now)] = True
    moved_prev, minimal_prev, monotone_prev = _shares(
        just_gone, owner != previous, just_gone[previous])
    moved_start, minimal_start, monotone_start = _shares(gone, owner != start, gone[start])
    keys_per_server = np.bincount(owners, minlength=len(state.live))
    figures = RemovalStep(
        removed=state.removed, share_removed=state.removed / fleet, live=len(state.live),
        entries=int(algorithm.entries), nbytes=int(algorithm.nbytes), structure_bytes=None,
        scalar_ns=None, batch_ns=None, cv=cv(keys_per_server),
        peak_to_mean=float(keys_per_server.max() / keys_per_server.mean()),
        noise_cv=noise_cv, moved_since_previous=moved_prev, moved_since_start=moved_start,
        minimal_since_previous=minimal_prev, minimal_since_start=minimal_start,
        monotone_since_previous=monotone_prev, monotone_since_start=monotone_start)
    return figures, owner


class RemovalsMetric(MetricBase):
    """Every algorithm recipe losing servers in each order, step by step."""

    name: ClassVar[str] = "removals"
    table: ClassVar[str] = "removals"
    reference: ClassVar[Reference] = Reference(
        tables={
            "removals": "Every algorithm losing servers step by step, in FIFO, LIFO or random "
                        "order.",
            "removals.algorithms[]": "One entry of `removals.algorithms` given as a table: "
                                     "`name` and that algorithm's parameters.",
        },
        # A default recipe is checked as a table of its own.
        aliases={"removals.algorithms": "removals.algorithms[]"})
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = Removals
    cost_fields: ClassVar[str] = "servers, keys, algorithms, orders"

    @staticmethod
    def parse_options(table: Fields) -> RemovalsOptions:
        return parse_removals(table)

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """Every key's name and hash, and for each algorithm and order (all walk side by side)
        its owner arrays and one held state of the whole fleet; with memory, the fresh
        process measuring one algorithm and order at a time beside them (an interpreter, a
        state and the state made again under memray)."""
        assert isinstance(options, RemovalsOptions)
        # A state is the larger of the fleet's per-server cost and what the recipe's own
        # structure declares: an anchor of capacity 2,000,000 holds 2,000,000 slots for
        # 1,000 servers (1.2 GB measured, against 114 MB when servers alone were counted).
        # A step makes the next state beside the one it leaves.
        fleet = fleet_servers(options.servers, (1.0,), options.name)
        states = [max(REMOVALS_BYTES_PER_SERVER * options.servers,
                      get_algorithm(recipe.algorithm).estimated_bytes(fleet, recipe.params))
                  for recipe in options.recipes]
        held = len(options.orders) * sum(states) + max(states)
        probe = PROBE_PROCESS_BYTES + 2 * max(states) if options.memory else 0.0
        series = len(options.recipes) * len(options.orders)
        return float(REMOVALS_BYTES_PER_KEY * options.keys
                     + series * REMOVALS_BYTES_PER_KEY_AND_SERIES * options.keys
                     + held + probe)

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        """Each recipe's own work at each step of each order, on the whole fleet (an upper
        bound): its keys and timed rounds, its parity keys in plain Python; and a fresh
        process per algorithm and order when memory is measured."""
        assert isinstance(options, RemovalsOptions)
        fleet = fleet_servers(options.servers, (1.0,), options.name)
        steps = len(options.counts) * len(options.orders)
        parts: list[tuple[float, str]] = [(0.0, "")]
        for recipe in options.recipes:
            # Each step is priced on the fleet it walks: the servers left after its removals,
            # in a structure that keeps the whole fleet's capacity (its lookups probe more
            # slots a key as servers leave: 100 times as many after a 99% removal).
            params = ({**recipe.params, "capacity": capacity_for(options.servers, recipe.params)}
                      if "capacity" in recipe.params else recipe.params)
            priced = [get_algorithm(recipe.algorithm).estimated_seconds(
                fleet[:max(1, options.servers - removed)], params,
                reference_keys=options.parity_keys,
                fast_keys=options.keys + (options.repeats + 1) * (
                    options.batch_keys + options.scalar_keys),
                plain_keys=options.parity_keys) for removed in options.counts]
            seconds, why = (sum(s for s, _ in priced) / len(priced),
                            max(priced)[1]) if priced else (0.0, "")
            memory = MEMORY_PROCESS_SECONDS * len(options.orders) if options.memory else 0.0
            walk = steps * STEP_SECONDS + (len(options.orders) * options.counts[-1]
                                           * options.servers * REMOVAL_SECONDS_PER_SERVER)
            parts.append((steps * seconds + memory + walk,
                          f"{why} ({steps} steps of removals)" if why else
                          f"{recipe.label}: {len(options.orders) * options.counts[-1]:,} "
                          f"removals from {options.servers:,} servers in {steps} steps"))
        return sum(s for s, _ in parts), max(parts)[1]

    def steps(self, plan: RunPlan) -> int:
        options = plan.options.get(self.name)
        if not isinstance(options, RemovalsOptions):
            return 0
        series = len(options.recipes) * len(options.orders)
        counts = len(options.counts)
        return series * (counts + 1) + counts * (options.repeats + 1)

    def measure(self, context: RunContext) -> Removals | None:
        options = context.options.get(self.name)
        if not isinstance(options, RemovalsOptions):
            return None
        context.stage(f"{context.label}: removals, naming keys")
        servers = fleet_servers(options.servers, (1.0,), options.name)
        hashes = KeyHashes([f"key-{i}".encode() for i in range(options.keys)])
        counts = options.counts
        sequences = {order: removal_order(options.servers, order, options.seed)
                     for order in options.orders}
        result = Removals(options.servers, options.keys, options.max_share, options.step,
                          options.seed, list(options.orders),
                          {order: s[:FIRST_REMOVED] for order, s in sequences.items()}, [])
        walkers = []
        for recipe in options.recipes:
            cls = get_algorithm(recipe.algorithm)
            for order in options.orders:
                series = RemovalSeries(recipe.label, recipe.algorithm, dict(recipe.params),
                                       order)
                result.series.append(series)
                if problem := cls.check_servers(servers, recipe.params):
                    series.unsupported = f"servers must be {problem}"
                elif problem := removal_problem(recipe.algorithm, servers, recipe.params,
                                                sequences[order], counts[-1]):
                    series.unsupported = problem
                if series.unsupported is not None:
                    context.advance(len(counts) + 1)
                    continue
                states = walk(recipe.algorithm, servers, recipe.params, sequences[order],
                              counts)
                walkers.append(_Walker(series, sequences[order], states, hashes))
        noise = {}
        for removed in counts:
            live = options.servers - removed
            noise[removed] = noise_figures(servers[:live], options.keys, options.seed)[0]
            context.stage(f"{context.label}: removals, {removed:,} of {options.servers:,} "
                          "servers removed")
            held = {}
            for walker in walkers:
                held[walker.series.name] = self._step(options, walker, noise[removed])
                context.advance(1)
            self._time(context, options, walkers, held)
        if options.memory:
            self._memory(context, walkers, servers, counts)
        else:
            context.advance(len(walkers))
        return result

    @staticmethod
    def _step(options: RemovalsOptions, walker: _Walker, noise_cv: float) -> Algorithm:
        state = next(walker.states)
        algorithm = state.algorithm
        if walker.hashes is None:
            walker.hashes = walker.keys.of(algorithm)
        sample = walker.hashes[:options.parity_keys]
        check_parity(algorithm, sample, {walker.series.name: algorithm})
        walker.series.parity_keys = len(sample)
        walker.series.removed_by = state.how if state.removed else walker.series.removed_by
        left_now = walker.sequence[walker.previous_removed:state.removed]
        figures, owner = step_figures(state, walker.hashes, walker.start, walker.previous,
                                      left_now, options.servers, noise_cv)
        if walker.start is None:
            walker.start = owner
        walker.previous, walker.previous_removed = owner, state.removed
        walker.series.steps.append(figures)
        return algorithm

    @staticmethod
    def _time(context: RunContext, options: RemovalsOptions, walkers: list[_Walker],
              held: dict[str, Algorithm]) -> None:
        """Every algorithm and order of the step in the same interleaved rounds."""
        if not held:
            context.advance(options.repeats + 1)
            return
        own = {w.series.name: w.hashes[:options.batch_keys] for w in walkers
               if w.hashes is not None}
        timings = measure_throughput(
            held, next(iter(own.values())), options.repeats, options.scalar_keys,
            lambda: context.advance(1), hashes_by_name=own)
        for walker in walkers:
            step = walker.series.steps[-1]
            step.scalar_ns = timings[walker.series.name]["scalar_ns"]
            step.batch_ns = timings[walker.series.name]["batch_ns"]

    @staticmethod
    def _memory(context: RunContext, walkers: list[_Walker], servers: list[Server],
                counts: list[int]) -> None:
        for walker in walkers:
            series = walker.series
            context.stage(f"{context.label}: removals, memory of {series.name} at every step "
                          "(fresh process)")
            held = measure_in_subprocess(
                Path(context.workdir) / "removals-memory.json", series.algorithm, servers,
                series.params, walker.sequence, counts)
            for step, nbytes in zip(series.steps, held, strict=True):
                step.structure_bytes = nbytes
            context.advance(1)

    def sections(self, result: Result) -> list[Section]:
        return removals_sections(result, self.name)

    def answers(self, result: Result) -> list[Answer]:
        return removals_answers(result, self.name)
