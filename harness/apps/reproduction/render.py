"""REPRODUCTION.md: every published figure against ours, with its tolerance, from results.

The checks table comes first; detail tables (the sweeps behind the figures)
and the plots follow. Everything is computed from result documents: no
number is typed in here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from harness.apps.reproduction.bands import cv_rows, poisson_band, quantile_band, simulated_shares
from harness.apps.reproduction.checks import Check, show
from harness.apps.reproduction.reading import (
    Results,
    balance,
    memory_of,
    movement,
    ring_info,
    run_of,
)
from harness.apps.reproduction.sources import MOD_N, SCRATCH, SOURCES
from harness.core import charts
from harness.core.machine import NOT_A_CHECKOUT
from harness.core.stats import expected_collisions
from harness.core.tables import Chart, Report, Section, Table, count, literal, text
from harness.report import markdown

TOLERANCE_RULES = """\
How to read the tolerance band. The articles do not say how they named their keys
and points, so a sampled figure (a key count, a measured CV, a share of the
ring) can match the published value only in distribution, not digit for digit. Its band
is the central 99.7% (about +-3 standard deviations) of that statistic over
many simulated random rings with a fixed seed: N servers with k points each
own Dirichlet(k, ..., k) shares of a continuous ring, and M keys fall on them
multinomially. Counts of rare events (collisions) use the central 99.7% of
a Poisson law;
fractions of keys that are fixed by arithmetic (mod N movement) use +-3
binomial standard errors. Exact quantities (point counts, formula values,
bytes per entry, the padding saving) must match to the published rounding.
"Published in band" says whether the published value itself falls in our band:
a check of the band as much as of the published value."""

def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> Table:
    return Table.of(headers, [[str(cell) for cell in row] for row in rows])


def _yes(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "**NO**")


def _band_text(check: Check) -> str:
    low, high = check.band
    unit, digits = check.figure.unit, check.figure.decimals
    if math.isinf(high):
        return f">= {show(low, unit, digits)}"
    return f"{show(low, unit, digits)} to {show(high, unit, digits)}"


def checks_table(checks: Sequence[Check]) -> Table:
    """One row per figure: published value, ours, band, inside."""
    rows = [[c.figure.key, c.figure.what, c.figure.source,
             show(c.figure.published, c.figure.unit, c.figure.decimals),
             show(c.ours, c.figure.unit, c.figure.decimals), _band_text(c),
             _yes(c.inside), _yes(c.published_inside)] for c in checks]
    return _table(rows, ["#", "figure", "source", "published", "ours", "tolerance band",
                         "ours inside", "published in band"])


def tolerance_reasons(checks: Sequence[Check]) -> str:
    """Why each band is what it is, one line per distinct reason."""
    reasons: dict[str, list[str]] = {}
    for check in checks:
        reasons.setdefault(check.figure.why, []).append(check.figure.key)
    return "\n".join(f"- {', '.join(keys)}: {why}." for why, keys in reasons.items())


def sources_list() -> str:
    """Each short title of the source column, with the full citation."""
    return "\n".join(f"- {short}: {full}" for short, full in SOURCES)


def _pct(value: float, digits: int = 3) -> str:
    return f"{100 * value:.{digits}f}%"


def _arc_band(servers: int, k: int) -> tuple[float, float]:
    return quantile_band(cv_rows(simulated_shares([k] * servers)))


def sweep_table(results: Results, scenario: str) -> Table:
    """Balance of each k: measured CVs, cv_arcs against its simulated band, theory, floor.

    With memory measured, also the packed layout's allocator bytes per server.
    """
    runs = results[scenario].runs
    with_memory = any(s.figure("memory") for run in runs for s in run.subjects)
    rows = []
    previous = None
    for run in runs:
        k = run.points_per_weight
        b = balance(results, scenario, k)
        cv_arcs, cv_theory = b.cv_arcs, b.cv_theory
        low, high = _arc_band(b.servers, k or 0)
        drop = "" if previous is None else f"{100 * (previous - cv_theory):.3f} pp"
        row = [
            f"{k:,}", f"{ring_info(results, scenario, k).entries:,}",
            f"{b.min_keys:,}", f"{b.max_keys:,}", _pct(b.cv_keys), _pct(cv_arcs),
            f"{_pct(low)} to {_pct(high)}", _yes(low <= cv_arcs <= high),
            _pct(cv_theory), _pct(b.cv_floor), drop,
        ]
        if with_memory:
            memory = next(m for s in run.subjects if (m := s.figure("memory")))
            row.append(f"{memory.structure_bytes / b.servers:,.0f} B "
                       f"({memory.bytes_per_entry:.3f} B/entry)")
        rows.append(row)
        previous = cv_theory
    headers = ["k", "entries", "min keys", "max keys", "cv_keys", "cv_arcs", "cv_arcs band",
               "inside", "cv_theory", "cv_floor", "cv_theory drop vs previous k"]
    return _table(rows, headers + ["memory per server (packed, measured)"] * with_memory)


def weights_table(results: Results) -> Table:
    servers = results["c_weights"].scenario["servers"]
    total = sum(s["weight"] for s in servers)
    shares = balance(results, "c_weights").arc_shares or ()
    rows = [[literal(str(s["name"])), f"{s['weight']:g}",
             f"{round(160 * s['weight']):,}", _pct(share, 2), _pct(s["weight"] / total, 2),
             f"{share / (s['weight'] / total):.3f}"]
            for s, share in zip(servers, shares, strict=True)]
    return _table(rows, ["server", "weight", "points", "share of the ring", "weight / total",
                         "share / weight share"])


def bits_table(results: Results) -> Table:
    rows = []
    for bits in (32, 64):
        name = f"d_cloudflare_2048_{bits}"
        for run in results[name].runs:
            k = run.points_per_weight
            b, c, ring = balance(results, name, k), run.figure("collisions"), ring_info(
                results, name, k)
            rows.append([f"{k:,}", bits, f"{ring.points:,}", f"{ring.entries:,}",
                         f"{c.collisions:,}", f"{c.collisions_expected:,.0f}",
                         _pct(b.cv_arcs, 4), _pct(b.cv_theory, 4),
                         _pct(b.cv_keys, 2)])
    return _table(rows, ["k", "bits", "points", "entries", "collisions", "expected", "cv_arcs",
                         "cv_theory", "cv_keys (200,000 keys: Poisson-bound)"])


def collisions_table(results: Results) -> Table:
    rows = []
    for run in results["e_collisions_32"].runs:
        collisions = run.figure("collisions")
        n = ring_info(results, "e_collisions_32", run.points_per_weight).points
        measured = collisions.collisions
        low, high = poisson_band(expected_collisions(n, 32))
        rows.append([f"{n:,}", f"{measured:,}", f"{collisions.collisions_expected:,.2f}",
                     f"{low:,.1f} to {high:,.1f}", _yes(low <= measured <= high),
                     f"{100 * measured / n:.4f}%"])
    return _table(rows, ["points n", "collisions", "expected", "band (Poisson 99.7%)", "inside",
                         "dropped"])


def padding_table(results: Results) -> Table:
    run = run_of(results, "f_padding")
    rows = [[literal(s.name), f"{s.entries:,}", f"{m.structure_bytes:,}",
             f"{m.bytes_per_entry:.4f}", f"{m.build_peak_bytes:,}", f"{m.lookup_peak_bytes:,}"]
            for s in run.of_kind("layout")
            if (m := memory_of(results, "f_padding", None, s.name))]
    keys = run.parity.keys
    return _table(rows, ["layout", "entries", "structure_bytes", "bytes/entry", "build_peak",
                         f"lookup_peak ({keys:,} keys)"])


#: the movement table's scenarios, in its order
MOVEMENT_SCENARIOS = ("g_remove_100", "g_add_3", "g_add_10", "g_add_100")


def movement_table(results: Results) -> Table:
    rows = []
    for name in MOVEMENT_SCENARIOS:
        m = movement(results, name)
        rows.append([literal(f"{m.operation} {m.server}"),
                     f"{m.servers_before} -> {m.servers_after}",
                     _pct(m.ring_moved_fraction, 2), _pct(m.changed_server_share or 0.0, 2),
                     _pct(m.mod_n_moved_fraction, 2), _yes(m.ring_only_changed_server)])
    return _table(rows, ["operation", "servers", "ring moved", "changed server's ring share",
                         "mod N moved", "ring moves only to/from it"])


def three_nodes_table(results: Results) -> Table:
    rows = []
    for run in results["h_three_nodes"].runs:
        b = balance(results, "h_three_nodes", run.points_per_weight)
        split = " / ".join(_pct(s, 0) for s in b.arc_shares)
        rows.append([run.points_per_weight, split, f"{100 * b.cv_keys / 3:.1f} pp",
                     f"{100 * (b.cv_arcs) / 3:.1f} pp"])
    return _table(rows, ["tokens per node", "load split (ring shares)", "std (keys)",
                         "std (ring shares)"])


def _given(results: Results, *scenarios: str) -> bool:
    return all(s in results for s in scenarios)


def reproduction_report(results: Results, checks: Sequence[Check],
                        plots: Sequence[str], left_out: Sequence[str] = ()) -> Report:
    """REPRODUCTION as a report: the checks, then the detail behind them, then the plots.

    Scenarios `left_out` (not run: `reproduce --only`) take their figures, sections and
    charts with them, and the introduction says so."""
    inside = sum(c.inside for c in checks)
    durations = sum(result.duration_s for result in results.values())
    commits = sorted({result.git_commit or NOT_A_CHECKOUT for result in results.values()})
    machines: dict[str, int] = {}
    for result in results.values():
        shown = f"{result.machine.cpu} ({result.machine.cores} cores)"
        machines[shown] = machines.get(shown, 0) + 1
    where = (literal(next(iter(machines))) if len(machines) == 1 else
             f"{len(machines)} machines: " + "; ".join(
                 f"{literal(m)}, {n} of them" for m, n in machines.items())
             + " (the last section names each scenario's)")
    intro = [
        "Generated by `python -m harness reproduce` from the result documents in "
        "`results/reproduce/` (scenarios in `scenarios/reproduce/`); do not edit by hand. "
        f"{len(results)} scenarios took {durations:,.0f} s of measurement in total on "
        f"{where}; commit {literal(', '.join(commits))}.",
        f"**{inside} of {len(checks)} figures are inside their tolerance band.**",
    ]
    if left_out:
        intro.append(f"Part of the reproduction only: {len(left_out)} scenarios were not run "
                     f"({', '.join(left_out)}), and the figures, tables and plots that read "
                     "them are left out.")
    details = [
        Section(f"a. Balance sweep, 100 servers, 200,000 keys ({SCRATCH})",
                tables=[sweep_table(results, "a_balance_sweep")])
        if _given(results, "a_balance_sweep") else None,
        Section("b. Every doubling of k (100 servers)", paragraphs=[
            "Memory is the packed layout's allocator bytes per server; at small k the array "
            "header dominates, from a few thousand points on it is 6 B x k."],
                tables=[sweep_table(results, "b_doubling")])
        if _given(results, "b_doubling") else None,
        Section("c. Weights 1, 2, 10 at 160 points per unit weight",
                tables=[weights_table(results)])
        if _given(results, "c_weights") else None,
        Section("d. Cloudflare's case at 2,048 servers: 32 against 64 bits", paragraphs=[
            "The blake2b-64 ring's points are the blake2b-32 points with 32 more bits, so the "
            "two rings differ only where 32-bit points collide. Our rule (the lowest server "
            "index keeps a shared position) moves share from high- to low-index servers: with "
            "lambda = n/S other points expected on each position, the server at u = i/N keeps "
            "a shared arc with probability exp(-lambda u), a trend that adds to cv_arcs in "
            "quadrature (checks d12, d15) and splits the low and high halves by "
            "2 tanh(lambda/4) of the mean share (d13, d16). At 100,000 points a server "
            "(lambda = 0.048) the trend outweighs the 1/sqrt(k) gain: d17."],
                tables=[bits_table(results)])
        if _given(results, "d_cloudflare_2048_32", "d_cloudflare_2048_64") else None,
        Section("e. The birthday curve (32 bits, 100 servers)", paragraphs=[
            "The rows are nested, not independent: each ring holds the points of the smaller "
            "ones (points j < k of every server), so an early excess of collisions is carried "
            "into every later row."], tables=[collisions_table(results)])
        if _given(results, "e_collisions_32") else None,
        Section("f. Padding: every array layout of one ring", tables=[padding_table(results)])
        if _given(results, "f_padding") else None,
        Section("g. Movement", tables=[movement_table(results)])
        if _given(results, *MOVEMENT_SCENARIOS) else None,
        Section(f"h. Three nodes ({MOD_N})", tables=[three_nodes_table(results)])
        if _given(results, "h_three_nodes") else None,
    ]
    drawn = reproduction_charts(results)
    sections = [
        Section("", tables=[checks_table(checks)],
                footer=[TOLERANCE_RULES, "Why each band:", tolerance_reasons(checks)]),
        *[section for section in details if section is not None],
        Section("Sources", paragraphs=[sources_list()]),
    ]
    if plots or drawn:
        sections.append(Section("Plots", images=[(name, f"reproduce/{name}") for name in plots],
                                charts=drawn))
    sections.append(Section("Where each scenario ran", tables=[Table.of(
        ["scenario", "machine", "cores", "commit", "started"],
        [[text(name), text(result.machine.cpu), count(result.machine.cores or 0),
          text(result.git_commit or NOT_A_CHECKOUT), text(result.started_at)]
         for name, result in sorted(results.items())])]))
    return Report("Reproducing the published figures", intro, sections)


def reproduction_charts(results: Results) -> list[Chart]:
    """The plots' figures as charts, for the self-contained page (it cannot show PNG files):
    those whose scenarios the results hold."""
    drawn: list[Chart] = []
    if _given(results, "b_doubling"):
        doubling = [(run.points_per_weight,
                     balance(results, "b_doubling", run.points_per_weight))
                    for run in results["b_doubling"].runs]
        cv_rows = [{"k": k, "series": series, "cv": value}
                   for k, b in doubling
                   for series, value in (("cv_arcs (measured)", b.cv_arcs),
                                         ("cv_keys (measured)", b.cv_keys),
                                         ("cv_theory", b.cv_theory),
                                         ("cv_floor (theory + key noise)", b.cv_floor))]
        drawn.append(charts.curves(
            "Balance against points per server (N = 100, blake2b-32)", cv_rows,
            x="k", y="cv", series="series", x_title="points per server k",
            y_title="CV of load across servers",
            points=("cv_arcs (measured)", "cv_keys (measured)")))
    if _given(results, "e_collisions_32"):
        collision_rows = [
            {"points": ring.points, "series": series, "collisions": value}
            for run in results["e_collisions_32"].runs
            for ring in [ring_info(results, "e_collisions_32", run.points_per_weight)]
            for series, value in (("measured (blake2b-32)",
                                   run.figure("collisions").collisions),
                                  ("birthday expectation",
                                   run.figure("collisions").collisions_expected))
            if value > 0]
        drawn.append(charts.curves(
            "The birthday curve in a 32-bit ring", collision_rows, x="points",
            y="collisions", series="series", x_title="points n",
            y_title="points dropped", points=("measured (blake2b-32)",)))
    if _given(results, "f_padding"):
        padding = run_of(results, "f_padding")
        memory = [{"layout": s.name, "bytes": m.bytes_per_entry,
                   "label": f"{m.bytes_per_entry:.3f} B"}
                  for s in padding.of_kind("layout")
                  if (m := memory_of(results, "f_padding", None, s.name))]
        drawn.append(charts.bars(
            f"Allocator bytes per entry by layout ({padding.ring.entries:,} entries)"
            if padding.ring else "Allocator bytes per entry by layout", memory,
            category="layout", value="bytes", value_title="bytes per entry", label="label"))
    return drawn


def render_reproduction(results: Results, checks: Sequence[Check], plots: Sequence[str]) -> str:
    """The whole REPRODUCTION.md."""
    return markdown.report(reproduction_report(results, checks, plots))
