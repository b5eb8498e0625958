"""The comparison's tables: per fleet, cost, balance and movement, peers, and the published
figures beside ours; across fleets, the speed targets, computed from the records.

Every cell comes from the typed records (`harness.metrics.comparison.records`); what a
recipe or peer cannot do reads "not supported" (its reason in the notes),
never a blank or a zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.core import charts, noise
from harness.core.tables import (
    Answer,
    Cell,
    Section,
    Table,
    count,
    kib,
    literal,
    number,
    pct,
    text,
)
from harness.metrics.comparison.records import (
    OPERATIONS,
    Comparison,
    FleetFigures,
    MoveFigure,
    PeerFigures,
    RecipeFigures,
)
from harness.metrics.instruments.targets import (
    Leaders,
    and_list,
    leaders,
    leaders_note,
    ratio_estimate,
    verdict_cell,
)
from harness.metrics.instruments.timing import Timing, timing_cell

if TYPE_CHECKING:
    from harness.core.model import Result

NOT_SUPPORTED = "not supported"


def unsupported() -> Cell:
    return Cell(NOT_SUPPORTED)


def _timing(timing: Timing | None) -> Cell:
    return unsupported() if timing is None else timing_cell(timing)


def _move_cell(move: MoveFigure) -> Cell:
    if move.movement is None:
        return unsupported()
    moved = move.movement.ring_moved_fraction
    shown = f"{100 * moved:.2f}% (min {100 * move.minimal_fraction:.2f}%)"
    if not move.movement.ring_only_changed_server:
        shown += ", also between others"
    return Cell(shown, moved)


def _cost_row(r: RecipeFigures) -> list[Cell]:
    if r.unsupported is not None:
        return [text(r.label), *(unsupported() for _ in range(6))]
    assert r.build_ms is not None
    return [text(r.label), count(r.entries or 0),
            kib(r.memory.structure_bytes) if r.memory is not None else kib(r.nbytes or 0),
            number(r.build_ms.median, 2), _timing(r.scalar_ns), _timing(r.batch_ns),
            _timing(r.route_ns)]


def _ms(timing: Timing) -> Cell:
    """Milliseconds to three decimals: a jump build takes microseconds, a ring's seconds."""
    return Cell(f"{timing.median:,.3f} ({timing.min:,.3f}-{timing.max:,.3f})", timing.median)


def _resize_row(r: RecipeFigures) -> list[Cell]:
    if r.unsupported is not None or r.build_ms is None:
        return [text(r.label), *(unsupported() for _ in range(4))]
    by_operation = {m.operation: m for m in r.moves}
    cells = [text(r.label), _ms(r.build_ms)]
    for operation in OPERATIONS:
        move = by_operation.get(operation)
        cells.append(unsupported() if move is None or move.resize_ms is None
                     else _ms(move.resize_ms))
    return cells


def resize_table(fleet: FleetFigures) -> Table | None:
    """Init and resize times; None for results written before resize times were measured."""
    if not any(m.resize_ms is not None for r in fleet.algorithms for m in r.moves):
        return None
    return Table.of(
        ["recipe", "init ms (min-max)",
         *(f"{operation} ms (min-max)" for operation in OPERATIONS)],
        [_resize_row(r) for r in fleet.algorithms],
        notes=["init: building the algorithm for the fleet; resize: building it for the fleet "
               "with one server added, the last removed or one in the middle removed (what "
               "the movement figures route with); median of the comparison's repeats, in ms."])


def _balance_row(r: RecipeFigures) -> list[Cell]:
    if r.unsupported is not None or r.uniform is None or r.zipf is None:
        return [text(r.label), *(unsupported() for _ in range(8))]
    error = r.weight_share_error or 0.0
    return [text(r.label), pct(r.uniform.cv), number(r.uniform.max_over_mean),
            pct(r.zipf.cv), number(r.zipf.max_over_mean),
            Cell(f"{100 * error:.2f}% ({literal(str(r.shares_from))})", error),
            *(_move_cell(m) for m in r.moves)]


def _agreement_cell(p: PeerFigures) -> Cell:
    if p.agreement is None:
        return Cell(f"n/a: {literal(str(p.note))}" if p.agrees_with is None
                    else NOT_SUPPORTED)
    return Cell(f"{p.agreement:.6f}", p.agreement)


def _peer_row(p: PeerFigures) -> list[Cell]:
    if p.unsupported is not None:
        return [text(p.name), text(p.agrees_with or "none"),
                *(unsupported() for _ in range(6))]
    claimed = ("exact" if p.exact else "none" if p.agrees_with is None
               else p.note or "not claimed")
    return [text(p.name), text(p.agrees_with or "none"), _agreement_cell(p),
            text(claimed), _timing(p.scalar_ns),
            _timing(p.call_ns) if p.call_ns is not None else text("(no separate call)"),
            kib(p.memory.structure_bytes) if p.memory is not None else kib(p.nbytes or 0),
            count(p.entries or 0)]


# --- published figures beside ours -----------------------------------------------------

@dataclass(frozen=True)
class Published:
    """A figure an article publishes for one algorithm, and where ours comes from."""

    algorithm: str
    figure: str
    source: str
    #: the published figure as text, for this fleet; None where it does not apply
    published: Callable[[FleetFigures, RecipeFigures], str | None]
    ours: Callable[[FleetFigures, RecipeFigures], Cell]


def _binomial_cv(fleet: FleetFigures, recipe: RecipeFigures) -> str | None:
    if not fleet.equal_weights:
        return None
    return (f"near-perfect: the binomial's sqrt((N-1)/M) = "
            f"{100 * math.sqrt((fleet.servers - 1) / fleet.keys):.2f}%")


def _ring_cv(fleet: FleetFigures, recipe: RecipeFigures) -> str | None:
    if recipe.cv_theory is None:
        return None
    floor = math.sqrt(recipe.cv_theory**2 + fleet.noise_cv**2)
    return (f"cv_theory {100 * recipe.cv_theory:.2f}%; with the key noise of M keys "
            f"{100 * floor:.2f}%")


def _uniform_cv(fleet: FleetFigures, recipe: RecipeFigures) -> Cell:
    return pct(recipe.uniform.cv) if recipe.uniform is not None else unsupported()


def _multi_probe_peak(fleet: FleetFigures, recipe: RecipeFigures) -> Cell:
    """From exact shares where the algorithm has them (what the paper's figure means), with
    the uniform keys' figure beside it: keys add their own noise."""
    if recipe.uniform is None:
        return unsupported()
    keys = (f"{recipe.uniform.max_over_mean:.3f} from uniform keys (key noise alone: "
            f"{fleet.noise_peak_to_mean:.3f})")
    if recipe.exact_peak_to_mean is None:
        return Cell(keys, recipe.uniform.max_over_mean)
    return Cell(f"{recipe.exact_peak_to_mean:.3f} from exact shares; {keys}",
                recipe.exact_peak_to_mean)


PUBLISHED: tuple[Published, ...] = (
    Published(
        "maglev", "slots per server, most minus fewest (equal weights)",
        "Eisenbud et al., \"Maglev: A Fast and Reliable Software Network Load Balancer\" "
        "(NSDI 2016)",
        lambda fleet, r: "at most 1 (floor(M/N) or ceil(M/N) each)"
        if fleet.equal_weights and r.slot_spread is not None else None,
        lambda fleet, r: count(r.slot_spread) if r.slot_spread is not None
        else unsupported()),
    Published(
        "multi-probe", "peak-to-mean load (21 probes)",
        "Appleton & O'Reilly, \"Multi-probe consistent hashing\" (2015); go-mpchash",
        lambda fleet, r: "1.05" if r.params.get("probes") == 21 else None,
        _multi_probe_peak),
    Published(
        "jump", "CV of keys per server",
        "Lamping & Veach, \"A Fast, Minimal Memory, Consistent Hash Algorithm\" (2014)",
        _binomial_cv, _uniform_cv),
    Published(
        "ring", "CV of keys per server (per unit weight)",
        "\"Consistent Hashing from Scratch, and Why Cloudflare Deleted 90% of It\": "
        "sqrt((N-1)/(Nk+1)) and the Poisson floor",
        _ring_cv, _uniform_cv),
)


def _published_rows(fleet: FleetFigures) -> list[list[Cell]]:
    rows = []
    for recipe in fleet.algorithms:
        if recipe.unsupported is not None:
            continue
        for item in PUBLISHED:
            if item.algorithm != recipe.algorithm:
                continue
            published = item.published(fleet, recipe)
            if published is not None:
                rows.append([text(recipe.label), text(item.figure), text(published),
                             item.ours(fleet, recipe), text(item.source)])
    return rows


# --- speed targets, from the records ------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """A ratio of two timings of one fleet (equal weights, `servers` servers) and its goal."""

    what: str
    servers: int
    #: the ratio's numerator and denominator: (description, timing from the fleet)
    numerator: tuple[str, Callable[[FleetFigures], Timing | None]]
    denominator: tuple[str, Callable[[FleetFigures], Timing | None]]
    goal: str
    #: the goal as a rule on the ratio: it must be at most, or at least, `bound`
    must_be: noise.Goal
    bound: float


def _recipe_timing(algorithm: str, path: str,
                   **params: object) -> Callable[[FleetFigures], Timing | None]:
    def find(fleet: FleetFigures) -> Timing | None:
        for r in fleet.algorithms:
            if r.algorithm == algorithm and all(r.params.get(k) == v for k, v in params.items()):
                timing: Timing | None = getattr(r, path)
                return timing
        return None

    return find


def _peer_timing(name: str, path: str) -> Callable[[FleetFigures], Timing | None]:
    def find(fleet: FleetFigures) -> Timing | None:
        peer = next((p for p in fleet.peers if p.name == name), None)
        timing: Timing | None = None if peer is None else getattr(peer, path)
        return timing

    return find


_RING_160_PACKED = {"layout": "cffi-packed", "points_per_weight": 160}

TARGETS: tuple[Target, ...] = (
    Target("rendezvous scalar lookup against pymemcache's get_node", 100,
           ("pymemcache get_node", _peer_timing("pymemcache", "scalar_ns")),
           ("our rendezvous scalar", _recipe_timing("rendezvous", "scalar_ns")),
           "at least 100x faster", "at least", 100),
    Target("jump scalar with key hashing included, against jump.hash alone", 1000,
           ("our jump route_one (xxHash64 + jump)", _recipe_timing("jump", "route_ns")),
           ("jump.hash on a precomputed hash",
            _peer_timing("jump-consistent-hash", "call_ns")),
           "within 1.5x", "at most", 1.5),
    Target("jump batch against the ring's cffi-packed batch, 160 points per server", 1000,
           ("ring k=160 cffi-packed batch", _recipe_timing("ring", "batch_ns",
                                                           **_RING_160_PACKED)),
           ("jump batch", _recipe_timing("jump", "batch_ns")),
           "at least 5x faster", "at least", 5),
    Target("maglev batch against the ring's cffi-packed batch, 160 points per server", 1000,
           ("ring k=160 cffi-packed batch", _recipe_timing("ring", "batch_ns",
                                                           **_RING_160_PACKED)),
           ("maglev batch", _recipe_timing("maglev", "batch_ns")),
           "at least 5x faster", "at least", 5),
)


def _target_row(target: Target, fleets: list[FleetFigures]) -> list[Cell]:
    fleet = next((f for f in fleets if f.servers == target.servers and f.equal_weights), None)
    head = [text(target.what), count(target.servers)]
    top = None if fleet is None else target.numerator[1](fleet)
    bottom = None if fleet is None else target.denominator[1](fleet)
    if top is None or bottom is None:
        missing = "fleet" if fleet is None else "timing"
        return [*head, text(f"not measured in this run (no such {missing})"),
                *(text("not measured") for _ in range(2)), text(target.goal),
                text("not measured")]
    interval = ratio_estimate(top, bottom)
    return [*head, text(f"{target.numerator[0]}: {top.median:,.1f} ns"),
            text(f"{target.denominator[0]}: {bottom.median:,.1f} ns"),
            Cell(f"{interval.ratio:,.2f}x", interval.ratio), text(target.goal),
            verdict_cell(interval.low, interval.high, interval.basis, target.must_be,
                         target.bound, lambda ratio: f"{ratio:,.2f}x")]


def targets_table(comparison: Comparison) -> Table:
    return Table.of(
        ["target", "N", "numerator", "denominator", "ratio", "goal", "verdict"],
        [_target_row(t, comparison.fleets) for t in TARGETS],
        notes=["Medians of interleaved rounds of the same run, equal weights. Ratios are "
               "numerator over denominator: above 1, the denominator is faster.",
               "verdict: judged on the ratio's interval (shown), not on the ratio alone: "
               f"met only when the whole interval meets the goal, missed only when the "
               "whole interval falls short of it, otherwise within noise. The interval is "
               f"a {noise.CONFIDENCE:.0%} bootstrap of the ratio of medians, each side's "
               "rounds resampled on their own; for a result that did not keep its rounds, "
               "the widest ratio the two min-max ranges allow."])


# --- sections ---------------------------------------------------------------------------

def fleet_section(fleet: FleetFigures) -> Section:
    found = _batch_leaders(fleet)
    leading = None if found is None else leaders_note("batch", found, literal, "ns a key")
    cost = Table.of(
        ["recipe", "entries", "bytes (memray)", "build ms", "scalar ns/key (min-max)",
         "batch ns/key (min-max)", "route ns/key, hashing included"],
        [_cost_row(r) for r in fleet.algorithms],
        notes=["bytes: allocator bytes held after the build, measured by memray in a fresh "
               "process (a ring as its layout). scalar: a Python loop of lookup(h) on "
               "precomputed key hashes; batch: one lookup_many; route: one call that hashes "
               "and looks up a key (where the algorithm has one).",
               *([leading] if leading else [])])
    balance = Table.of(
        ["recipe", "uniform CV", "uniform peak-to-mean", "zipf CV", "zipf peak-to-mean",
         "weight-share error", "add one", "remove last", "remove middle"],
        [_balance_row(r) for r in fleet.algorithms],
        notes=[f"{fleet.keys:,} uniform keys; {fleet.zipf_requests:,} zipf requests "
               f"(exponent {fleet.zipf_exponent:g}). Load is per unit weight. Key noise "
               f"alone (a perfectly even split of the same keys): CV "
               f"{100 * fleet.noise_cv:.2f}%, peak-to-mean {fleet.noise_peak_to_mean:.3f}. "
               "Weight-share error: the largest |share - weight share| / weight share "
               "over servers, from exact shares of the hash space (exact) or the uniform "
               "keys (keys). Moved: keys whose server changed; min is the changed server's "
               "weight share, the least any scheme can move."])
    peers = Table.of(
        ["peer", "routes like", "agreement", "claimed", "scalar ns/key (min-max)",
         "library call alone", "bytes (memray)", "entries"],
        [_peer_row(p) for p in fleet.peers],
        notes=["agreement: the fraction of keys the peer routes to the same server as our "
               "recipe. Peers look keys up by name, hashing included; libraries that take "
               "key hashes (jump.hash) are also timed on precomputed hashes."])
    tables = [cost, balance]
    resize = resize_table(fleet)
    if resize is not None:
        tables.append(resize)
    if fleet.peers:
        tables.append(peers)
    published = _published_rows(fleet)
    if published:
        tables.append(Table.of(["recipe", "figure", "published", "ours", "source"], published))
    reasons = [literal(f"{r.label}: {NOT_SUPPORTED}: {r.unsupported}.", line_start=True)
               for r in fleet.algorithms if r.unsupported is not None]
    reasons += [literal(f"{r.label}, {m.operation}: {NOT_SUPPORTED}: {m.unsupported}.",
                        line_start=True)
                for r in fleet.algorithms for m in r.moves if m.unsupported is not None]
    reasons += [literal(f"peer {p.name}: {NOT_SUPPORTED}: {p.unsupported}.", line_start=True)
                for p in fleet.peers if p.unsupported is not None]
    bars = [{"recipe": r.label, "path": path, "ns": t.median, "label": f"{t.median:,.1f}"}
            for r in fleet.algorithms
            for path, t in (("batch", r.batch_ns), ("scalar", r.scalar_ns)) if t is not None]
    chart = charts.grouped_bars(f"ns per key, batch and scalar ({fleet.label})", bars,
                                category="recipe", group="path", value="ns",
                                value_title="ns per key (median)", label="label")
    return Section(f"Algorithms compared ({literal(fleet.label)})", tables=tables,
                   footer=reasons, charts=[chart] if bars else [])


def comparison_sections(result: Result, metric: str) -> list[Section]:
    sections = []
    for run in result.runs:
        comparison: Comparison | None = run.figure(metric)
        if comparison is None:
            continue
        sections.append(Section("Algorithms compared: speed targets",
                                tables=[targets_table(comparison)]))
        sections += [fleet_section(fleet) for fleet in comparison.fleets]
    return sections


def comparison_answers(result: Result, metric: str) -> list[Answer]:
    """Per fleet compared: the smallest recipe (allocator bytes) and the fastest batch."""
    lines = []
    for run in result.runs:
        comparison: Comparison | None = run.figure(metric)
        if comparison is None:
            continue
        for fleet in comparison.fleets:
            built = [r for r in fleet.algorithms if r.unsupported is None
                     and r.build_ms is not None]
            if not built:
                continue
            title = f"Algorithms compared ({literal(fleet.label)})"
            smallest = min(built, key=lambda r: r.memory.structure_bytes
                           if r.memory is not None else r.nbytes or 0)
            held = _cost_row(smallest)[2].text
            found = _batch_leaders(fleet)
            by_label = {r.label: r for r in built}
            shown = [] if found is None else [_cost_row(by_label[name])[5].text.split(" (")[0]
                                              for name in found.names]
            lines.append(Answer(title, f"{literal(fleet.label)}: the smallest, "
                                f"{literal(smallest.label)}, holds {held} (allocator)"
                                f"{_batch_words(found, shown)}.", (held, *shown)))
    return lines


def _batch_leaders(fleet: FleetFigures) -> Leaders | None:
    """The fastest batch of a fleet's recipes, or the leaders tied within noise (None
    when no recipe has a batch lookup)."""
    timed = [(r.label, r.batch_ns) for r in fleet.algorithms
             if r.unsupported is None and r.build_ms is not None and r.batch_ns is not None]
    return leaders(timed) if timed else None


def _batch_words(found: Leaders | None, shown: list[str]) -> str:
    """The answer's words for the batch that leads (`shown`: the leaders' medians as the
    cost table shows them)."""
    if found is None:
        return ""
    if found.runner_up is None:
        return f"; its one batch, {literal(found.base)}, takes {shown[0]} ns a key"
    if found.clear:
        return (f"; the fastest batch, {literal(found.base)}, clear of the others by its "
                f"interval, takes {shown[0]} ns a key")
    return (f"; no batch is clear of the others: the leaders, "
            f"{and_list([literal(n) for n in found.names])}, are within noise of each "
            f"other ({and_list(shown)} ns a key)")
