"""Consistent hashing with bounded loads: Mirrokni, Thorup & Zadimoghaddam, "Consistent
Hashing with Bounded Loads" (2016), with the eligibility rule of HAProxy's
`hash-balance-factor` (`chash_server_is_eligible` in HAProxy's src/lb_chash.c).

`ALGORITHMS["bounded-load"].build(servers, balance_factor=125, construction=...,
hash=..., points_per_weight=..., point_name=...)` builds the ring those ring
parameters describe (exactly as the algorithm `ring` builds it) and routes
requests over it, in order:

- a request starts at the first point at or after its key hash, wrapping (the
  ring's own lookup, `harness.core.ring`), and walks on along the points, skipping
  the points of servers that are not eligible, to the first that is;
- with `served` requests assigned before it, the backend has
  `tot = ((served + 1) * balance_factor + 99) / 100` slots (integer division:
  the ceiling of balance_factor percent of the requests, this one included),
  shared out by weight: `per_weight = tot // W`, `remainder = tot % W` (W the
  total weight), and server s of weight w, whose predecessors in configuration
  order weigh c in all, gets
  `w * per_weight + ((c + w) * remainder) // W - (c * remainder) // W` slots,
  at least 1 (that telescopes to `floor((c + w) tot / W) - floor(c tot / W)`, so
  the slots add up to `tot` and none is lost to rounding);
- a server is eligible while its load is below its slots.

What load means here. HAProxy counts requests in flight (`srv->served`,
`px->served`): a request adds one when it is sent and takes it back when it
completes. The harness routes a workload with no completion times, so a request
never finishes: a server's load is the number of requests assigned to it so
far, and `served` is the number of requests so far. That is HAProxy's own count
in the limiting case where every response is slower than the whole workload;
with completions, loads would fall and the rule would bind less. Another reading
(a sliding window of the last R requests as "in flight") would need a window
length the papers and HAProxy do not give, and its figures would depend on that
choice; the no-completion reading has no free parameter, and it is the setting
of the paper's theorem (each load at most ceil(balance_factor / 100 * average)).

A consequence: the owner of a request depends on every request before it, so
the algorithm is stateful, and a key has no owner of its own:
- `lookup_many(hashes)` routes one whole request sequence from zero loads (a
  replay: the same sequence always gets the same owners). Parity, load, balance,
  movement and memory all replay the workload this way, so state never leaks
  from one measurement into another: movement compares two replays of the same
  requests from zero loads, one per server list;
- `lookup(h)` is the next request of this instance's own stream (its loads start
  at zero when it is built; `reset()` empties them). Routing a sequence through
  `lookup` from a fresh stream gives what `lookup_many` gives; the runner resets
  the stream before its scalar parity check. Timing rounds go on with the stream.

Where this differs from HAProxy, on purpose:
- HAProxy starts from the nearer of the key's two neighbouring points; the
  walk starts at the ring's successor here, so that a balance factor too large
  to bind routes exactly as the ring `ring` does (the comparison measured);
- HAProxy computes in 32-bit unsigned integers, which would wrap once
  `(served + 1) * balance_factor` passes 2**32 (34 million requests at 125): no
  real proxy holds that many in flight, but a replay where nothing finishes
  does, so the C path and the references compute in 64 bits (and arbitrary
  precision) and never wrap;
- HAProxy's `loop` guard stops a walk after one wrap. Here a full lap finds an
  eligible server whenever every server holds a point (the slots add up to more
  than the requests served); a server can lose all its points only to position
  collisions on a tiny 32-bit ring, and then a request whose lap finds nobody
  goes to the plain ring's owner.

Weights are HAProxy's: positive integers (its `weight` is 1 to 256; up to 65,535
here). What cannot be measured, refused before any work (`metric_problem`): a
migration (its model gives each object one owner, replayed through LRU caches;
here an object's owner changes with the requests before it), and a process (its
rings are costed in the ring's layouts, which bounded-load has none of).

Fast path: one C function (cext/algorithms.c) routes a batch, or one request of
the stream; the vectorised reference (numpy's searchsorted for the starting
points, the walk in Python with the telescoped slots) and the plain one (bisect
and HAProxy's expression as written) check it on every run.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.fields import Fields
from harness.core.native import algorithms as c_algorithms
from harness.core.params import Param, parse_params
from harness.core.ring import Ring
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm
from harness.recipes.algorithms.ring import NO_LAYOUT, RingAlgorithm
from harness.recipes.constructions import Construction

DEFAULT_BALANCE_FACTOR = 125
#: above this, the bound never binds on any workload the harness can run (10,000 times the
#: fair share), and the 64-bit products in C stay far from overflow
MAX_BALANCE_FACTOR = 1_000_000
#: the largest weight: weights and their sums stay below 2**32, so C's products fit 64 bits
MAX_WEIGHT = 65_535

BALANCE_FACTOR = Param(
    "balance_factor", "int", DEFAULT_BALANCE_FACTOR,
    "the most a server may hold, as a percentage of its fair share of the requests so far",
    minimum=101, maximum=MAX_BALANCE_FACTOR,
    expected=(f"an integer from 101 to {MAX_BALANCE_FACTOR:,}: bounded-load's percentage of "
              "a server's fair share it may hold (HAProxy's hash-balance-factor, above 100: at "
              "100 the cap is the mean itself)"))


def weight_problem(server: Server) -> str | None:
    """HAProxy's weights are positive integers; anything else is refused, naming the server."""
    if server.weight != int(server.weight) or not 1 <= server.weight <= MAX_WEIGHT:
        return (f"integer weights from 1 to {MAX_WEIGHT:,}, as HAProxy's weight (server "
                f"{server.name!r} has {server.weight:g})")
    return None


def slots_haproxy(served: int, factor: int, weight: int, cumulative: int, total: int) -> int:
    """`chash_server_is_eligible`'s slots, as HAProxy writes them."""
    tot_slots = ((served + 1) * factor + 99) // 100
    slots_per_weight = tot_slots // total
    remainder = tot_slots % total
    slots = weight * slots_per_weight
    slots += ((cumulative + weight) * remainder) // total - (cumulative * remainder) // total
    return slots if slots else 1


def slots_telescoped(served: int, factor: int, weight: int, cumulative: int, total: int) -> int:
    """The same slots, written as the difference of two cumulative shares of `tot`."""
    tot = -(-(served + 1) * factor // 100)
    return max(1, ((cumulative + weight) * tot) // total - (cumulative * tot) // total)


#: seconds a point of its ring takes to reach its C form, beyond the ring's own build
COPY_SECONDS_PER_POINT = 100e-9


class BoundedLoadAlgorithm(OneForm):
    """A ring whose servers take at most balance_factor percent of their fair share."""

    name: ClassVar[str] = "bounded-load"
    declared: ClassVar[tuple[Param, ...]] = (BALANCE_FACTOR,)

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        self.balance_factor: int = params["balance_factor"]
        self.ring_construction: Construction = RingAlgorithm.construction_of(params)
        ring = self.ring_construction.build_ring(self._servers)
        self.weights = [int(s.weight) for s in self._servers]
        self.cumulative = [sum(self.weights[:i]) for i in range(len(self.weights))]
        # The C copies are the only ones kept (the references read views of them): what the
        # memory figures count is what routing needs.
        self._c = c_algorithms.CBoundedLoad(ring.positions, ring.owners, self.weights,
                                          self.balance_factor)
        self._bits = ring.bits
        self.lookup = self._c.lookup

    @classmethod
    def parse_params(cls, fields: Fields) -> dict[str, Any]:
        if fields.has("layout"):
            raise fields.error("layout", "left out: bounded-load walks its ring's own points "
                               "(it has no layouts)", fields.table["layout"])
        return {**parse_params(cls.declared, fields), **RingAlgorithm.parse_ring_params(fields)}

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return (RingAlgorithm.check_servers(servers, params)
                or next(filter(None, map(weight_problem, servers)), None))

    @classmethod
    def metric_problem(cls, metric: str) -> str | None:
        """Why the named metric cannot be measured on bounded loads, or None if it can."""
        if metric == "migration":
            return ("a migration replays each object's one owner through LRU caches, but a "
                    "bounded-load request's server depends on the requests before it")
        return super().metric_problem(metric)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return RingAlgorithm.estimated_entries(servers, params)

    @classmethod
    def estimated_build_seconds(cls, servers: Sequence[Server], params: dict[str, Any]
                                ) -> tuple[float, str]:
        """Its ring's points built by their construction, with no layout, then copied into
        its C form (158 ns a point in all at 1,000,000 points of the C-named `points`, 99
        of them the points': benchmarks/build_rates.py, 2026-12-05, best of 2); the copy
        priced at 100 ns a point."""
        seconds, why = RingAlgorithm.estimated_build_seconds(
            servers, {**params, "layout": NO_LAYOUT})
        return seconds + COPY_SECONDS_PER_POINT * cls.estimated_entries(servers, params), why

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        factor = params.get("balance_factor", DEFAULT_BALANCE_FACTOR)
        return f"{RingAlgorithm.label_for(params)}, bound {factor}%"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def ring_points(self) -> Ring:
        """The ring the requests walk (views of its points and owners). Not named `ring`:
        the ring-only metrics (collisions, layouts' memory, processes) measure rings that
        route by arcs, which this one does not."""
        return Ring(self._c.positions(), self._c.owners(), self._bits)

    @property
    def key_bits(self) -> int:
        return self._bits

    @property
    def entries(self) -> int:
        return len(self._c.owners())

    @property
    def entry_size(self) -> int:
        return self._bits // 8 + 2

    @property
    def nbytes(self) -> int:
        return self._c.nbytes

    def loads(self) -> npt.NDArray[np.uint64]:
        """The load of each server in this instance's stream (what `lookup` assigned)."""
        return self._c.loads()

    def reset(self) -> None:
        """Empty this instance's stream: the next `lookup` is a first request."""
        self._c.reset()

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return self.ring_construction.key_hashes(keys)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self._c.lookup_many(key_hashes)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        positions, owners = self._c.positions(), self._c.owners().tolist()
        starts = np.searchsorted(positions, np.asarray(key_hashes, dtype=positions.dtype),
                                 side="left")
        starts[starts == len(positions)] = 0
        loads = [0] * len(self._servers)
        total, factor = sum(self.weights), self.balance_factor
        weights, cumulative = self.weights, self.cumulative
        points = len(owners)
        out = np.empty(len(starts), dtype=np.uint16)
        for served, start in enumerate(starts.tolist()):
            chosen = owners[start]
            for step in range(points):
                s = owners[(start + step) % points]
                if loads[s] < slots_telescoped(served, factor, weights[s], cumulative[s], total):
                    chosen = s
                    break
            loads[chosen] += 1
            out[served] = chosen
        return out

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        positions, owners = self._c.positions().tolist(), self._c.owners().tolist()
        loads = [0] * len(self._servers)
        total = sum(self.weights)
        answers: list[int] = []
        for key_hash in key_hashes:
            start = bisect.bisect_left(positions, int(key_hash))
            start = 0 if start == len(positions) else start
            node, answer = start, -1
            for _ in positions:
                s = owners[node]
                if loads[s] < slots_haproxy(len(answers), self.balance_factor, self.weights[s],
                                            self.cumulative[s], total):
                    answer = s
                    break
                node = (node + 1) % len(positions)
            answer = owners[start] if answer < 0 else answer
            loads[answer] += 1
            answers.append(answer)
        return answers

    def exact_shares(self) -> None:
        # A request's server depends on the requests before it, not on a fixed arc.
        return None
