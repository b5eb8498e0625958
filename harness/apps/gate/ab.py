"""A/B mode: the base's and the changed build's foreign peers, both started in this job,
timed in turn on the same batch of keys.

The sampling is the A/B gate's own (harness.apps.benchgate): `ab_session.sample` asks the
two sides for one sample each, in alternating order (base first, then changed first, ...),
until each peer's interval is tight enough for the wanted sensitivity or the budget is
spent; `ab_decide.paired_interval` gives the median ratio of the pairs with its bootstrap
interval. Here a side is a started peer rather than a worker running a suite: a library
peer already runs in a worker process of its own (its route timed there around the C call
alone), a process peer is its own program (timed by us around the request).

Beside the timing, the two sides' owners of every key are compared (a change of routing
is `routes_as_base` below 1) and each side's balance (the CV of keys per unit weight) is
worked out from its owners.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.apps.benchgate.ab_decide import Interval, paired_interval
from harness.apps.benchgate.ab_session import SamplingPlan, sample
from harness.core.cost import Cost
from harness.core.servers import Server
from harness.core.workload import key_names
from harness.recipes.peers.foreign import ForeignPeer, LibraryPeer, open_foreign_peer
from harness.recipes.peers.foreign.base import Batch
from harness.recipes.peers.foreign.claims import batch_for, owners_by_name
from harness.recipes.peers.foreign.spec import ForeignPeerSpec
from harness.run.scenario import Scenario

#: the gate's default plan: the A/B gate's, with a budget that keeps a gate of one peer
#: within a CI step (the example: 100,000 keys, 8 to 60 pairs)
GATE_PLAN = SamplingPlan(rounds=3, min_pairs=10, max_pairs=60, sensitivity=1.10,
                         max_seconds=20.0, check_every=4)


#: how a route is timed: "cpu", the CPU time it took (a library: its worker thread's
#: around the C call; a process: the peer process's, from the scheduler's count), or
#: "wall", the clock on the wall (a library: around the C call; a process: around the
#: request). On a machine shared with other tenants the CPU time leaves out the waits for
#: a core that the wall clock counts: on the example library at 100,000 keys under a load
#: of 13 on 2 cores, unchanged code read 0.996x [0.993, 1.003] after 10 pairs by CPU time,
#: and 0.998x [0.899, 1.131] after 60 pairs by the wall (docs/guide/gate-your-ring.md)
LIBRARY_CLOCK = "cpu"


class PeerSampler:
    """One side: a started peer and its prepared batch; a sample is the fastest of
    `rounds` routes of the batch (after one untimed), in seconds."""

    def __init__(self, peer: ForeignPeer, batch: Batch, clock: str = LIBRARY_CLOCK) -> None:
        self.peer, self.batch, self.clock = peer, batch, clock

    def _once(self) -> float:
        if isinstance(self.peer, LibraryPeer):
            self.peer.route_prepared(self.batch)
            assert self.peer.last_call_ns is not None
            return self.peer.last_call_ns[0 if self.clock == "wall" else 1] / 1e9
        cpu = getattr(self.peer, "cpu_ns", None) if self.clock == "cpu" else None
        before = cpu() if cpu is not None else None
        start = time.perf_counter_ns()
        self.peer.route_prepared(self.batch)
        wall = time.perf_counter_ns() - start
        after = cpu() if cpu is not None else None
        if before is not None and after is not None:
            return float(after - before) / 1e9
        return wall / 1e9

    def sample(self, benchmark: str, rounds: int) -> float:
        self._once()
        return min(self._once() for _ in range(rounds))


@dataclass(frozen=True)
class PairedTiming:
    peer: str
    interval: Interval
    pairs: int
    threshold: float
    #: median ns per key of each side's samples
    base_ns: float
    changed_ns: float

    @property
    def detectable(self) -> float:
        """The smallest slowdown this run's interval would have flagged (as ab_decide's)."""
        return self.threshold * self.interval.ratio / self.interval.low


@dataclass(frozen=True)
class SideFigures:
    cv: float
    owners: npt.NDArray[np.uint16]


@dataclass(frozen=True)
class PeerComparison:
    timing: PairedTiming
    base: SideFigures
    changed: SideFigures

    @property
    def routes_as_base(self) -> float:
        return float(np.mean(self.base.owners == self.changed.owners))


def balance_cv(owners: npt.NDArray[np.uint16], servers: Sequence[Server]) -> float:
    """CV of keys per unit weight over the servers (population standard deviation)."""
    counts = np.bincount(owners, minlength=len(servers))[:len(servers)].astype(float)
    per_weight = counts / np.array([s.weight for s in servers], dtype=float)
    mean = float(per_weight.mean())
    return float(per_weight.std() / mean) if mean > 0 else math.nan


def sampling_cost(scenario: Scenario, plan: SamplingPlan) -> Cost:
    """What sampling costs beside the two runs: every pair routes the keys 2 x (rounds + 1)
    times per peer, charged at the peer's declared ns per key; sampling stops at the
    plan's budget once every peer has its minimum of pairs."""
    keys = scenario.keys.count
    seconds = 0.0
    for peer in scenario.measure.foreign_peers:
        per_pair = 2 * (plan.rounds + 1) * keys * peer.ns_per_key * 1e-9
        seconds += per_pair * plan.min_pairs
    seconds = max(seconds, plan.max_seconds) if scenario.measure.foreign_peers else 0.0
    return Cost(seconds=seconds, why_seconds=f"{keys:,} keys ([keys] count) timed in pairs "
                "of the base and the changed peer")


@contextlib.contextmanager
def _opened(spec: ForeignPeerSpec, servers: Sequence[Server]) -> Iterator[ForeignPeer]:
    peer = open_foreign_peer(spec, servers)
    try:
        yield peer
    finally:
        peer.close()


def compare_peers(base: Scenario, changed: Scenario, threshold: float,
                  plan: SamplingPlan = GATE_PLAN,
                  clock: str = LIBRARY_CLOCK) -> dict[str, PeerComparison]:
    """Each foreign peer of `changed` against its namesake of `base`, on the scenario's
    keys and first fleet; a peer both sides name alike (the same library or command) is
    left out."""
    servers = changed.ring_servers()
    keys = [name.encode() for name in key_names(changed.keys)]
    found: dict[str, PeerComparison] = {}
    bases = {p.name: p for p in base.measure.foreign_peers}
    for spec in changed.measure.foreign_peers:
        if bases[spec.name] == spec:
            continue  # the same build on both sides: nothing to time
        with _opened(bases[spec.name], servers) as old, _opened(spec, servers) as new:
            batches = [batch_for(old, servers, keys), batch_for(new, servers, keys)]
            owners = [owners_by_name(peer, servers, peer.route_prepared(batch))
                      for peer, batch in zip((old, new), batches, strict=True)]
            sides = [PeerSampler(old, batches[0], clock), PeerSampler(new, batches[1], clock)]

            def detectable(_benchmark: str, pairs: list[tuple[float, float]]) -> float:
                interval = paired_interval(pairs)
                return threshold * interval.ratio / interval.low

            samples = sample(sides[0], sides[1], {spec.name: (len(keys), len(keys))}, plan,
                             detectable)
            pairs = samples.pairs[spec.name]
            timing = PairedTiming(spec.name, paired_interval(pairs), len(pairs), threshold,
                                  1e9 * float(np.median([b for b, _ in pairs])),
                                  1e9 * float(np.median([c for _, c in pairs])))
            found[spec.name] = PeerComparison(
                timing, SideFigures(balance_cv(owners[0], servers), owners[0]),
                SideFigures(balance_cv(owners[1], servers), owners[1]))
    return found
