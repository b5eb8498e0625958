"""Foreign peers' own figures: each timed through its door, and what it says of itself.

A foreign peer (`harness.recipes.peers.foreign`) routes the whole workload in one batch
per round, interleaved with our reference recipe routing the same keys from their names
(hashing included, as the peer does), so the ratio holds on a noisy machine. The figures
come from two clocks and are labelled apart:

- `batch_ns`: timed by the harness around one call (the C ABI: in the library's worker,
  around the C call alone, the hand-over to the worker left out) or one request (the
  pipe: the transfer both ways and the peer's decoding are in it; the request is encoded
  before the rounds, as the keys are packed once for a library);
- `self_timed_ns`: the peer's own monotonic clock around its route (process peers that
  answer TIME), so that batch_ns - self_timed_ns is what the protocol costs.

Movement: a process peer that supports ADD and REMOVE goes through each of the scenario's
operations in turn (each applied to the first fleet, then undone): the share of keys it
moves, compared by server name, and, when it claims a recipe, its agreement with that
recipe on the fleet after the operation (a claimed parity that breaks there fails the
run like any parity failure).

Memory likewise: the memory metric measures a library peer's mallocs by memray, as a
layout's, in a supervised worker of its own (`memory_probe.py`); a process peer reports
what it believes (`reported_bytes`, MEMORY), and the harness reads its PSS before and
after BUILD.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.servers import Operation, Server, servers_after
from harness.core.tables import Answer, Cell, Section, Table, count, literal, number, pct, text
from harness.metrics.base import MetricBase, answered_runs
from harness.metrics.foreign.overhead import library_pairs, overhead_table, per_round_difference
from harness.metrics.instruments.timing import Timing, timing_cell
from harness.recipes.peers.foreign import DOORS, ForeignPeer, LibraryPeer, ProcessPeer, protocol
from harness.recipes.peers.foreign.claims import batch_for, check_claim, owners_by_name

if TYPE_CHECKING:
    from harness.core.model import Result, Run
    from harness.metrics.context import RunContext, RunPlan, Scope

#: a door as a result that did not record its label names it: where a library ran (our
#: process, before the worker; a worker, since) is not known, so it is not said
UNRECORDED_DOORS = {"library": "C ABI", "command": DOORS["command"]}


@dataclass
class ForeignMove:
    """What one operation did to a process peer's routing."""

    #: "add" or "remove"
    operation: str
    server: str
    #: share of the workload's keys whose server (by name) changed
    moved_fraction: float
    #: agreement with its claimed recipe on the fleet after the operation, or None
    agreement_after: float | None = None


@dataclass
class ForeignFigures:
    #: "library" (the C ABI) or "command" (the process protocol)
    door: str
    #: what the peer says it is (its HELLO, or its library's path)
    identity: str
    #: the recipe of ours it claims to route like, or None
    routes_like: str | None
    exact: bool
    #: share of the workload's keys routed as that recipe routes them
    agreement: float | None
    keys: int
    #: ns per key of one batch of every key, timed by the harness around the call or request
    batch_ns: Timing
    #: ns per key of our reference recipe routing the same keys, in the same rounds
    reference_ns: Timing
    #: ns per key by the peer's own clock (TIME); None when it does not time itself
    self_timed_ns: Timing | None = None
    #: bytes the peer believes its structure holds; 0 when it does not say
    reported_bytes: int = 0
    entries: int = 0
    #: PSS of a process peer before and after BUILD (/proc/PID/smaps_rollup)
    pss_before_build: int | None = None
    pss_after_build: int | None = None
    #: "keys" (names, it hashes them) or "hashes" (given our recipe's key hashes)
    input: str = "keys"
    #: each operation of the scenario through its ADD and REMOVE (process peers that
    #: support them; None otherwise, and in results written before they were measured)
    moves: list[ForeignMove] | None = None
    #: for a process peer serving a library the scenario also names as a library peer
    #: (abi_pipe): that library peer's name, and this peer's time minus its C call's, ns per
    #: key per round (`overhead`); None otherwise. ("in process": the names date from when
    #: a library ran in ours; it now runs, and its C call is timed, in its worker.)
    same_library_as: str | None = None
    pipe_minus_in_process_ns: Timing | None = None
    #: the same difference in CPU time: ours and the bridge's around the request, minus
    #: the worker's around the C call (not waiting for the scheduler, which a busy machine
    #: adds to the pipe's hand-overs)
    pipe_minus_in_process_cpu_ns: Timing | None = None
    #: how the table names its door, as the peer ran when measured (`DOORS`: "C ABI, in a
    #: worker"); None in results written before it was recorded, where a library may have
    #: run in our process or in a worker (`UNRECORDED_DOORS`)
    door_label: str | None = None


class ForeignMetric(MetricBase):
    """Foreign peers timed through their door, beside our reference; what they report."""
    name: ClassVar[str] = "foreign"
    #: on when a foreign peer is named (`measure.peers`), not otherwise
    on_by_default: ClassVar[bool] = False
    scope: ClassVar[Scope] = "subject"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = ForeignFigures

    def steps(self, plan: RunPlan) -> int:
        return plan.settings.repeats + 1 if plan.foreign else 0

    def measure(self, context: RunContext) -> dict[str, ForeignFigures] | None:
        peers = context.foreign_peers
        if not peers:
            return None
        context.stage(f"{context.label}: timing foreign peers")
        keys = [name.encode() for name in context.key_names]
        blob, offsets = protocol.packed_keys(keys)
        samples: dict[str, list[float]] = {name: [] for name in [*peers, ""]}
        # CPU ns per key of each peer's batch, ours and its process's (`overhead`)
        cpu: dict[str, list[float]] = {name: [] for name in peers}
        batches = {name: batch_for(peer, context.servers, keys) for name, peer in peers.items()}
        owners = {}
        order = list(peers.items())
        for round_number in range(context.settings.repeats + 1):
            # Alternating the order, so that no peer always runs right after another (a
            # pair compared round by round, `overhead`, would carry that bias).
            for name, peer in order if round_number % 2 else order[::-1]:
                peer_cpu, our_cpu = _peer_cpu_ns(peer), time.thread_time_ns()
                start = time.perf_counter_ns()
                owners[name] = peer.route_prepared(batches[name])
                elapsed = time.perf_counter_ns() - start
                our_cpu, peer_after = time.thread_time_ns() - our_cpu, _peer_cpu_ns(peer)
                if isinstance(peer, LibraryPeer) and peer.last_call_ns is not None:
                    # the library's own C call, timed in its worker: not the hand-over
                    elapsed, our_cpu = peer.last_call_ns
                    peer_cpu = peer_after = 0
                if round_number:  # round 0 warms caches (and the peer's JIT, if any)
                    samples[name].append(elapsed / len(keys))
                    if peer_cpu is not None and peer_after is not None:
                        cpu[name].append((our_cpu + peer_after - peer_cpu) / len(keys))
            start = time.perf_counter_ns()
            context.algorithm.route(keys)
            if round_number:
                samples[""].append((time.perf_counter_ns() - start) / len(keys))
            context.advance(1)
        reference = Timing.of(samples[""])
        pairs = library_pairs({name: peer.spec for name, peer in peers.items()})
        figures = {}
        for name, peer in peers.items():
            agreement = check_claim(peer.spec, context.servers, keys,
                                    owners_by_name(peer, context.servers, owners[name]))
            record = ForeignFigures(
                door=peer.spec.kind, identity=peer.identity,
                routes_like=agreement.recipe if agreement else None, exact=peer.spec.exact,
                agreement=agreement.agreement if agreement else None, keys=len(keys),
                # with its CPU ns (ours and its process's) where every round has them
                batch_ns=Timing.of(samples[name], cpu[name] if len(cpu[name]) == len(
                    samples[name]) else None), reference_ns=reference,
                reported_bytes=peer.nbytes, entries=peer.entries, input=peer.spec.input,
                door_label=peer.DOOR)
            if isinstance(peer, ProcessPeer):
                record.pss_before_build = peer.pss_before_build
                record.pss_after_build = peer.pss_after_build
                if peer.supports(protocol.FEATURE_TIME) and peer.spec.input == "keys":
                    record.self_timed_ns = Timing.of(peer.self_timed(
                        blob, offsets, context.settings.repeats))
                if peer.supports(protocol.FEATURE_CHANGE) and context.operations:
                    record.moves = [_move(peer, context.servers, operation, keys)
                                    for operation in context.operations]
            if name in pairs:
                record.same_library_as = pairs[name]
                record.pipe_minus_in_process_ns = per_round_difference(
                    samples[name], samples[pairs[name]])
                if len(cpu[name]) == len(cpu[pairs[name]]) == len(samples[name]):
                    record.pipe_minus_in_process_cpu_ns = per_round_difference(
                        cpu[name], cpu[pairs[name]])
            figures[name] = record
        return figures

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: whether the peers route as the recipes they claim, naming any
        that do not."""
        lines = []
        for run in answered_runs([r for r in result.runs if self._measured(r)]):
            claimed = {name: f.agreement for name, f in self._measured(run)
                       if f.agreement is not None}
            if not claimed:
                continue
            section = f"Foreign peers ({literal(run.label)})"
            shown = {name: number(agreement, 6).text for name, agreement in claimed.items()}
            differ = [name for name, agreement in claimed.items() if agreement < 1.0]
            if not differ:
                everyone = ("the peer routes every key as the recipe it claims"
                            if len(claimed) == 1 else f"all {len(claimed)} peers route every "
                            "key as the recipe each claims")
                full = next(iter(shown.values()))
                lines.append(Answer(section, f"{literal(run.label)}: {everyone} (agreement "
                                             f"{full}).", (full,)))
                continue
            named = ", ".join(f"{literal(name)} {shown[name]}" for name in differ)
            lines.append(Answer(section, (
                f"{literal(run.label)}: {len(claimed) - len(differ)} of {len(claimed)} peers "
                f"route every key as the recipe each claims; the others agree on a share of "
                f"keys: {named}."), tuple(shown[name] for name in differ)))
        return lines

    def _measured(self, run: Run) -> list[tuple[str, ForeignFigures]]:
        return [(s.name, f) for s in run.of_kind("peer")
                if isinstance(f := s.figure(self.name), ForeignFigures)]

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            measured = self._measured(run)
            if not measured:
                continue
            rows = [[text(name), text((f.door_label or UNRECORDED_DOORS.get(f.door, f.door))
                                      + (", given key hashes" if f.input == "hashes" else "")),
                     text(f.identity),
                     text(f.routes_like or "(none claimed)"),
                     number(f.agreement, 6) if f.agreement is not None else text(""),
                     timing_cell(f.batch_ns),
                     text(f"{f.batch_ns.median / f.reference_ns.median:.2f}x"),
                     timing_cell(f.self_timed_ns) if f.self_timed_ns else text(""),
                     count(f.reported_bytes) if f.reported_bytes else text("unknown"),
                     _pss(f)]
                    for name, f in measured]
            keys = measured[0][1].keys
            reference = timing_cell(measured[0][1].reference_ns).text
            table = Table.of(
                ["peer", "door", "says it is", "routes like", "agreement",
                 "batch ns/key, timed by us (min-max)", "vs our route",
                 "ns/key by its own clock", "bytes it reports", "PSS before -> after BUILD"],
                rows, notes=[
                    f"One batch of all {keys:,} keys per round; our reference routes the same "
                    f"keys from their names in the same rounds: {reference} ns per key.",
                    "A peer given key hashes (input = 'hashes') is timed without hashing, "
                    "against our route that hashes.",
                    "Timed by us: around the C call, in the library's worker process (the "
                    "hand-over to the worker left out), or around the request through the "
                    "pipe (encoded beforehand, as a library's keys are packed beforehand; "
                    "the transfer both ways and the peer's decoding included). By its own "
                    "clock: the peer's TIME answer, its route alone. A library peer's "
                    "allocator bytes are measured by memray in another worker of its own, "
                    "when the memory metric runs, and shown in the Peer libraries table; a "
                    "process peer's memory is what it reports and its PSS."]).trimmed()
            moves = [[text(name), text(f"{m.operation} {m.server}"), pct(m.moved_fraction, 2),
                      number(m.agreement_after, 6) if m.agreement_after is not None
                      else text("")]
                     for name, f in measured for m in f.moves or []]
            tables = [table]
            by_name = dict(measured)
            overheads = [(name, f.same_library_as, by_name[f.same_library_as].batch_ns,
                          f.batch_ns, f.pipe_minus_in_process_ns,
                          f.pipe_minus_in_process_cpu_ns, f.self_timed_ns)
                         for name, f in measured
                         if f.pipe_minus_in_process_ns is not None
                         and f.same_library_as in by_name]
            if overheads:
                tables.append(overhead_table(overheads, keys))
            if moves:
                tables.append(Table.of(
                    ["peer", "operation (its ADD or REMOVE)", "keys moved",
                     "agreement after"], moves, notes=[
                        "Each operation applied to the first fleet through the peer's own "
                        "ADD or REMOVE, then undone; keys compared by server name. The "
                        "Movement table gives what our recipe moves on the same operation."]))
            sections.append(Section(f"Foreign peers ({literal(run.label)})", tables=tables))
        return sections


def _named(peer: ProcessPeer, owners: npt.NDArray[np.uint16],
           numbers: dict[str, int]) -> npt.NDArray[np.int64]:
    """Owners as numbers of server names (`numbers`, grown as names appear), which stay
    fixed across ADD and REMOVE where the peer's own indexes shift."""
    return np.array([numbers.setdefault(name, len(numbers)) for name in peer.server_names],
                    dtype=np.int64)[owners]


def _move(peer: ProcessPeer, servers: Sequence[Server], operation: Operation,
          keys: list[bytes]) -> ForeignMove:
    """The operation through the peer's ADD or REMOVE, the keys it moved, then undone."""
    numbers: dict[str, int] = {}
    before = _named(peer, peer.route_prepared(batch_for(peer, servers, keys)), numbers)
    after_servers = servers_after(servers, operation)
    if operation.kind == "add":
        peer.add(operation.server, operation.weight)
    else:
        peer.remove(operation.server)
    owners = peer.route_prepared(batch_for(peer, after_servers, keys))
    after = _named(peer, owners, numbers)
    # By name: after an operation undone before, its numbers are not after_servers' order.
    agreement = check_claim(peer.spec, after_servers, keys,
                            owners_by_name(peer, after_servers, owners))
    # Undone, so that each operation starts from the first fleet as the movement metric's do.
    if operation.kind == "add":
        peer.remove(operation.server)
    else:
        removed = next(s for s in servers if s.name == operation.server)
        peer.add(removed.name, removed.weight)
    return ForeignMove(operation.kind, operation.server,
                       float(np.count_nonzero(before != after)) / len(keys),
                       agreement.agreement if agreement else None)


def _peer_cpu_ns(peer: ForeignPeer) -> int | None:
    """CPU ns a peer's own process has used: 0 for a library (its call's CPU, timed in its
    worker, is counted as our thread's)."""
    return peer.cpu_ns() if isinstance(peer, ProcessPeer) else 0


def _pss(figures: ForeignFigures) -> Cell:
    if figures.pss_before_build is None or figures.pss_after_build is None:
        return text("")
    return text(f"{figures.pss_before_build / 1024:,.0f} KiB -> "
                f"{figures.pss_after_build / 1024:,.0f} KiB")
