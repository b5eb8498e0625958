"""Movement: which keys change owner when one server is added or removed.

Owners are compared by server name, since removing a server shifts the
indexes of the servers after it. On the ring every moved key must move to the
added server, or from the removed one; `ring_only_changed_server` checks it.
With `hash mod N`, key h goes to the server at index h mod N of the list.

Removal. Most rings are rebuilt from the shorter list. A construction whose
points depend on history (allocated tokens) says how a deployment loses a
server instead (`RingAlgorithm.without`): as it falls, its arcs pass to their
successors. Where the construction can also re-place points
(`RingAlgorithm.rebalanced`), the fallen ring is then rebalanced back to the
arc CV it had before the removal, and the extra keys that moves (between
neighbouring servers) are reported beside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.servers import servers_after
from harness.core.stats import cv
from harness.core.tables import Answer, Section, Table, count, literal, pct, text
from harness.metrics.base import NOTHING_MORE, MetricBase, RunShape, Working, answered_runs

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.algorithms.base import Algorithm


@dataclass(frozen=True)
class RebalanceMove:
    """A rebalancing step after a removal: fewest points re-placed to reach the CV target."""

    #: the arc CV (per weight) before the removal: what the rebalance must get back to
    cv_target: float
    #: arc CV as the removed server's arcs fell, and after rebalancing
    cv_fallen: float
    cv_after: float
    points_moved: int
    #: sampled keys whose owner changed in the rebalance (on top of the removal)
    extra_moved: int
    extra_moved_fraction: float
    #: the exact share of the hash space the rebalance gave to another server
    extra_moved_share: float


@dataclass(frozen=True)
class Movement:
    operation: str
    server: str
    servers_before: int
    servers_after: int
    keys: int
    ring_moved: int
    ring_moved_fraction: float
    mod_n_moved: int
    mod_n_moved_fraction: float
    #: the changed server's exact share of the ring (after an add, before a remove);
    #: None where the algorithm gives no exact shares
    changed_server_share: float | None
    ring_only_changed_server: bool
    #: a removal as the construction loses a server (other points kept), not a rebuild
    as_it_falls: bool = False
    rebalance: RebalanceMove | None = None

    def as_record(self) -> dict[str, object]:
        return asdict(self)


def _name_ids(before: tuple[str, ...], after: tuple[str, ...]) -> tuple[
        npt.NDArray[np.int32], npt.NDArray[np.int32], dict[str, int]]:
    """Each server's number in one table of every name before and after: owners compared
    by name, as small integers (arrays of the names themselves cost 4 bytes a character
    a key, which long server names turn into gigabytes)."""
    table = {name: i for i, name in enumerate(dict.fromkeys([*before, *after]))}
    return (np.array([table[name] for name in before], dtype=np.int32),
            np.array([table[name] for name in after], dtype=np.int32), table)


def measure_movement(
    operation: str,
    server: str,
    key_hashes: npt.NDArray[np.unsignedinteger],
    owners_before: npt.NDArray[np.uint16],
    owners_after: npt.NDArray[np.uint16],
    servers_before: tuple[str, ...],
    servers_after: tuple[str, ...],
    changed_server_share: float | None,
) -> Movement:
    """Compare owners before and after one add or remove, on the ring and mod N. Owners are
    indexes into `servers_before` and `servers_after`; they are compared by server name."""
    ids_before, ids_after, table = _name_ids(servers_before, servers_after)
    named_before, named_after = ids_before[owners_before], ids_after[owners_after]
    moved = named_before != named_after
    changed = table.get(server, -1)
    if operation == "add":
        only_changed = bool(np.all(named_after[moved] == changed))
    else:
        only_changed = bool(np.all(named_before[moved] == changed))
    mod_before = ids_before[key_hashes % len(servers_before)]
    mod_after = ids_after[key_hashes % len(servers_after)]
    mod_moved = int(np.count_nonzero(mod_before != mod_after))
    keys = len(key_hashes)
    ring_moved = int(np.count_nonzero(moved))
    return Movement(
        operation=operation,
        server=server,
        servers_before=len(servers_before),
        servers_after=len(servers_after),
        keys=keys,
        ring_moved=ring_moved,
        ring_moved_fraction=ring_moved / keys,
        mod_n_moved=mod_moved,
        mod_n_moved_fraction=mod_moved / keys,
        changed_server_share=changed_server_share,
        ring_only_changed_server=only_changed,
    )


def rebalance_after(before: Algorithm, fallen: Algorithm,
                    key_hashes: npt.NDArray[np.unsignedinteger],
                    fallen_owners: npt.NDArray[np.uint16]) -> RebalanceMove | None:
    """Rebalance the fallen ring back to the CV `before` had; what the step moved."""
    shares = before.exact_shares()
    if shares is None:
        return None
    weights = np.array([s.weight for s in before.servers])
    target = cv(shares / weights)
    done = fallen.rebalanced(target)
    if done is None:
        return None
    ring, how = done
    extra = int(np.count_nonzero(ring.reference_owners(key_hashes) != fallen_owners))
    return RebalanceMove(cv_target=target, cv_fallen=how.cv_before, cv_after=how.cv_after,
                         points_moved=how.tokens_moved, extra_moved=extra,
                         extra_moved_fraction=extra / len(key_hashes),
                         extra_moved_share=how.moved_share)


class MovementMetric(MetricBase):
    """Keys that change owner when one server is added or removed, against hash mod N."""

    name: ClassVar[str] = "movement"
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = list[Movement]

    def steps(self, plan: RunPlan) -> int:
        return plan.operations

    def working(self, shape: RunShape) -> Working:
        """The fleet after each operation, built beside the one before (its reference and
        peers), a lookup of every key in it, and four arrays of owner numbers; one build
        of the recipe an operation (a removal a construction says how to make is not
        rebuilt, and is priced as one all the same)."""
        if not shape.operations:
            return NOTHING_MORE
        return Working(shape.reference_bytes + shape.peer_bytes
                       + shape.largest_lookup_bytes() + 4 * 8.0 * shape.keys,
                       builds=shape.operations)

    def measure(self, context: RunContext) -> list[Movement]:
        records = []
        before = context.algorithm
        names_before = tuple(s.name for s in context.servers)
        for operation in context.operations:
            context.stage(f"{context.label}: movement ({operation.kind} {operation.server})")
            servers = servers_after(context.servers, operation)
            # A construction that says how it loses a server (allocated tokens) is measured
            # that way; every other ring is rebuilt from the shorter list.
            fallen = (before.without(names_before.index(operation.server))
                      if operation.kind == "remove" else None)
            after = fallen if fallen is not None else context.rebuild(servers)
            names_after = tuple(s.name for s in servers)
            # Key hashes are the algorithm's own, the same before and after.
            after_owners = after.reference_owners(context.key_hashes)
            if operation.kind == "add":
                shares = after.exact_shares()
                share = None if shares is None else float(shares[-1])
            else:
                shares = before.exact_shares()
                share = (None if shares is None
                         else float(shares[names_before.index(operation.server)]))
            move = measure_movement(
                operation.kind, operation.server, context.key_hashes,
                context.owners, after_owners,
                names_before, names_after, share,
            )
            if fallen is not None:
                move = replace(move, as_it_falls=True,
                               rebalance=rebalance_after(before, fallen, context.key_hashes,
                                                         after_owners))
            records.append(move)
            context.advance(1)
        return records

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point and operation: the keys moved, against what the formula says
        must move (the changed server's share) and against hash mod N."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            moves: list[Movement] = run.figure(self.name)
            for m in moves:
                moved, mod_n = pct(m.ring_moved_fraction).text, pct(m.mod_n_moved_fraction).text
                share = (pct(m.changed_server_share).text
                         if m.changed_server_share is not None else None)
                formula = f" against its share {share}" if share else ""
                lines.append(Answer(
                    f"Movement ({literal(run.label)})",
                    f"{literal(run.label)}, {literal(m.operation)} {literal(m.server)}: "
                    f"{moved} of keys moved{formula} (hash mod N: {mod_n}).",
                    (moved, mod_n) + ((share,) if share else ())))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            moves: list[Movement] | None = run.figure(self.name)
            if not moves:
                continue
            rows = [[text(f"{m.operation} {m.server}"
                          + (" (as it falls)" if m.as_it_falls else "")),
                     text(f"{m.servers_before} -> {m.servers_after}"), count(m.keys),
                     count(m.ring_moved), pct(m.ring_moved_fraction),
                     pct(m.changed_server_share) if m.changed_server_share is not None
                     else text(""),
                     count(m.mod_n_moved), pct(m.mod_n_moved_fraction),
                     text("yes" if m.ring_only_changed_server else "NO")] for m in moves]
            chart = charts.grouped_bars(
                f"Keys moved ({run.label}): {run.algorithm} against hash mod N",
                [{"operation": f"{m.operation} {m.server}", "scheme": scheme, "moved": value,
                  "label": f"{100 * value:.2f}%"}
                 for m in moves for scheme, value in ((run.algorithm, m.ring_moved_fraction),
                                                      ("hash mod N", m.mod_n_moved_fraction))],
                category="operation", group="scheme", value="moved",
                value_title="fraction of keys moved", label="label")
            tables = [Table.of(
                ["operation", "servers", "keys", "moved", "moved %",
                 "changed server's share", "mod N moved", "mod N moved %",
                 "moves only to/from it"], rows)]
            rebalanced = [(m, m.rebalance) for m in moves if m.rebalance is not None]
            if rebalanced:
                tables.append(Table.of(
                    ["after", "target cv_arcs", "cv_arcs as it fell", "cv_arcs rebalanced",
                     "points re-placed", "extra keys moved", "extra moved %",
                     "extra share of the ring"],
                    [[text(f"{m.operation} {m.server}"), pct(r.cv_target, 3),
                      pct(r.cv_fallen, 3), pct(r.cv_after, 3), count(r.points_moved),
                      count(r.extra_moved), pct(r.extra_moved_fraction, 3),
                      pct(r.extra_moved_share, 3)] for m, r in rebalanced],
                    notes=["As it falls: every other point stays, the removed server's arcs "
                           "pass to their successors. Rebalanced: then the fewest points are "
                           "re-placed (each within its two arcs) to bring cv_arcs back to "
                           "what it was before the removal; the extra keys move between "
                           "neighbouring servers, on top of the removed server's."]))
            sections.append(Section(f"Movement ({literal(run.label)})", tables=tables,
                                    charts=[chart]))
        return sections
