"""The clients metric's report: per fleet and state, the agreement matrix as a table and a
heat map, the pairs that disagree with their causes and predictions; per fleet, what each
client moves; and each client's speed beside our recipe."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core import charts
from harness.core.tables import (
    Answer,
    Cell,
    Chart,
    Section,
    Table,
    count,
    literal,
    number,
    pct,
    text,
)
from harness.metrics.clients.records import ClientsAgreement, ClientSpeed, FleetState
from harness.metrics.instruments.timing import Timing, timing_cell

if TYPE_CHECKING:
    from harness.core.model import Result

#: predictions must be this close to the measured agreement (the issue's target)
TARGET_POINTS = 0.5


def _matrix(state: FleetState) -> Table:
    rows = [[text(name), *(pct(value) for value in row),
             number(own, 6) if own is not None else text("(none)")]
            for name, row, own in zip(state.clients, state.matrix, state.with_recipe,
                                      strict=True)]
    return Table.of([f"{literal(state.label)}: client", *map(literal, state.clients),
                     "with its own recipe"], rows, notes=[
        "Share of the keys two clients send to the same server (by name). The last column: "
        "agreement with the recipe of ours the client routes like, checked on every key."])


def _pairs(state: FleetState) -> Table | None:
    rows = []
    for pair in state.pairs:
        if pair.measured == 1.0 and (pair.predicted is None or pair.predicted == 1.0):
            continue
        gap = (100 * (pair.predicted - pair.measured)) if pair.predicted is not None else None
        rows.append([text(f"{pair.a} / {pair.b}"), pct(pair.measured),
                     pct(pair.predicted) if pair.predicted is not None else text("n/a"),
                     Cell(f"{gap:+.2f}", gap) if gap is not None else text(""),
                     text(pair.basis),
                     Cell("; ".join(literal(c) for c in pair.causes) or "(none named)",
                          "; ".join(pair.causes))])
    if not rows:
        return None
    return Table.of([f"{literal(state.label)}: pair", "measured", "predicted",
                     "predicted - measured (points)", "predicted from",
                     "causes (first's recipe vs second's)"], rows, notes=[
        f"Every pair that does not agree on every key. Target: predicted within "
        f"{TARGET_POINTS} percentage points of measured."])


def _heat_map(fleet: str, state: FleetState) -> Chart:
    rows = [{"client": a, "other": b, "agreement": value, "label": f"{100 * value:.1f}%"}
            for a, row in zip(state.clients, state.matrix, strict=True)
            for b, value in zip(state.clients, row, strict=True)]
    return charts.heat_map(f"Agreement, {fleet}, {state.label}", rows, x="other", y="client",
                           value="agreement", label="label", value_title="keys alike")


def _ratio(own: Timing | None, ours: Timing | None) -> Cell:
    if own is None or ours is None:
        return text("")
    return Cell(f"{own.median / ours.median:.2f}x", own.median / ours.median)


def _speeds(speeds: list[ClientSpeed]) -> Table:
    rows = []
    for s in speeds:
        own = s.own_ns or s.protocol_ns
        rows.append([
            text(s.client), text(s.runtime + (", given key hashes" if s.given_hashes else "")),
            text(s.recipe),
            timing_cell(s.own_ns) if s.own_ns else text(""),
            timing_cell(s.protocol_ns) if s.protocol_ns else text(""),
            timing_cell(s.ours_ns),
            timing_cell(s.ours_lookup_ns) if s.ours_lookup_ns else text(""),
            _ratio(own, s.ours_lookup_ns if s.given_hashes else s.ours_ns),
            _ratio(own, s.ours_lookup_ns),
            count(s.reported_bytes) if s.reported_bytes else text("unknown"),
            Cell(f"{s.pss_bytes / 1024:,.0f} KiB", s.pss_bytes) if s.pss_bytes else text("")])
    return Table.of(["client", "runtime", "our recipe, fastest form",
                     "ns/key, its own clock (min-max)", "ns/key through the pipe",
                     "ns/key, our route", "ns/key, our lookup of hashes", "its own / ours",
                     "its own / our lookup", "bytes it reports", "PSS after BUILD"],
                    rows, notes=[
        "On the first fleet as it is, in interleaved rounds. Its own clock: a Python peer's "
        "loop over its lookup, a process peer's TIME answer (its route alone), a library's "
        "C call; through the pipe: one request of every key, timed by us. Our route: the "
        "same keys routed by our recipe in its fastest form, hashing included; our lookup: "
        "the same form given the keys' hashes, computed beforehand. Its own / ours compares "
        "like with like (route with route; lookup with lookup for a client given key "
        "hashes); above 1, ours is faster. For a peer without its own clock the pipe's "
        "figure is used."])


def clients_sections(result: Result, name: str) -> list[Section]:
    sections = []
    for run in result.runs:
        found: ClientsAgreement | None = run.figure(name)
        if found is None:
            continue
        for fleet in found.fleets:
            weights = ":".join(f"{w:g}" for w in fleet.weights)
            tables: list[Table] = []
            chart_list = []
            for state in fleet.states:
                tables.append(_matrix(state))
                if (pairs := _pairs(state)) is not None:
                    tables.append(pairs)
                chart_list.append(_heat_map(fleet.label, state))
            moves = [[text(m.client),
                      pct(m.on_remove) if m.on_remove is not None else text(""),
                      pct(m.on_add) if m.on_add is not None else text(""),
                      text(m.through)]
                     for m in fleet.moves]
            tables.append(Table.of(["client", "keys moved on the removal",
                                    "keys moved on the addition", "changed by"], moves,
                                   notes=[
                "Compared by server name; the changes are those the states above name. A "
                "process peer that supports ADD and REMOVE is changed through them, and its "
                "claimed recipe checked on every state as for every client."]))
            sections.append(Section(
                f"Will the clients agree? {literal(fleet.label)}",
                paragraphs=[f"{fleet.servers:,} servers, weights cycling {weights}; "
                            f"{found.keys:,} keys; states: "
                            + "; ".join(literal(s.label) for s in fleet.states) + "."],
                tables=tables, charts=chart_list))
        if found.speeds:
            sections.append(Section("Clients' speed and size", tables=[_speeds(found.speeds)]))
    return sections


def clients_answers(result: Result, name: str) -> list[Answer]:
    """Per fleet, as it is: the clients that agree on every key with the first client, and
    the pair that agrees least."""
    lines = []
    for run in result.runs:
        found: ClientsAgreement | None = run.figure(name)
        if found is None:
            continue
        for fleet in found.fleets:
            if not fleet.states or not fleet.states[0].pairs:
                continue
            state = fleet.states[0]
            groups: list[list[str]] = []
            for client in state.clients:
                for group in groups:
                    if all(p.measured == 1.0 for p in state.pairs
                           if {p.a, p.b} == {client, group[0]}):
                        group.append(client)
                        break
                else:
                    groups.append([client])
            largest = max(groups, key=len)
            worst = min(state.pairs, key=lambda p: p.measured)
            shown = pct(worst.measured).text
            lines.append(Answer(
                f"Will the clients agree? {literal(fleet.label)}",
                f"{literal(fleet.label)}, {literal(state.label)}: the largest group agreeing "
                f"on every key is {len(largest)} of {len(state.clients)} clients "
                f"({', '.join(literal(c) for c in largest)}); the least alike pair, "
                f"{literal(worst.a)} / {literal(worst.b)}, agrees on {shown}.", (shown,)))
    return lines
