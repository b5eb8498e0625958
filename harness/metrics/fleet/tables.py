"""The fleet's section: answers first, then memory, origin fetches per data centre and per
wave, the rollback, and the keys moved against the formula; with charts for the page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core import charts
from harness.core.tables import Answer, Cell, Section, Table, count, literal, number, pct, text

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.metrics.fleet.records import Fleet


def size(value: float) -> Cell:
    """Bytes in binary units up to TiB (a fleet's memory)."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return Cell(f"{value / scale:,.2f} {unit}", value)
    return Cell(f"{value:,.0f} B", value)


def answers(f: Fleet) -> list[str]:
    """The short summary that opens the section."""
    staged_peak = max(v for s, _t, v in f.timeline if s == "staged")
    once_peak = max(v for s, _t, v in f.timeline if s == "all at once")
    lines = [
        f"Fleet memory: {size(f.bytes_before).text} before, {size(f.bytes_peak).text} at the "
        f"peak (window {f.peak_window}, both rings resident), {size(f.bytes_after).text} "
        f"after: " + (f"rolling back frees the new rings, "
                      f"{size(f.bytes_peak - f.bytes_after).text}; the old ones stay."
                      if f.rollback is not None else
                      f"retiring the old rings frees {size(f.bytes_before - f.bytes_after).text}"
                      "."),
        f"Origin fetches in the busiest window: {staged_peak:,} staged against {once_peak:,} "
        f"all at once. Worst data centre: {literal(f.worst_centre)}; worst wave: "
        f"{literal(f.worst_wave)}.",
    ]
    if f.rollback is not None:
        r = f.rollback
        lines.append(
            f"Rollback after stage {r.stage} of wave {literal(r.wave)} (window {r.window}, "
            f"{r.data_centres} data centres): {r.extra_fetches:,} origin fetches above the "
            f"steady state; the old ring's caches were {r.caches} (first window "
            f"{r.first_window_rate:.4f} misses per request against {r.steady_rate:.4f} "
            "steady).")
    return lines


def title(label: str, f: Fleet) -> str:
    return f"Fleet rollout ({literal(label)} to {literal(f.to_label)})"


def answer_lines(result: Result, name: str) -> list[Answer]:
    """The answers block's lines: what the fleet holds and frees, the origin fetches of the
    busiest window staged against all at once, and the rollback's cost; each the sentence
    that opens the fleet's section, with the figures it shows there."""
    lines = []
    for run in result.runs:
        f: Fleet | None = run.figure(name)
        if f is None:
            continue
        section = title(run.label, f)
        staged = max(v for s, _t, v in f.timeline if s == "staged")
        once = max(v for s, _t, v in f.timeline if s == "all at once")
        memory, fetches, *rest = answers(f)
        freed = (f.bytes_peak - f.bytes_after) if f.rollback is not None else (
            f.bytes_before - f.bytes_after)
        lines.append(Answer(section, memory, (size(f.bytes_before).text,
                                              size(f.bytes_after).text, size(freed).text)))
        lines.append(Answer(section, fetches, (f"{staged:,}", f"{once:,}")))
        if f.rollback is not None and rest:
            lines.append(Answer(section, rest[0], (f"{f.rollback.extra_fetches:,}",)))
    return lines


def sections(result: Result, name: str) -> list[Section]:
    found = []
    for run in result.runs:
        f: Fleet | None = run.figure(name)
        if f is None:
            continue
        found.append(_section(run.label, f))
    return found


def _section(label: str, f: Fleet) -> Section:
    drawn = ", ".join(f"{n:,} of {s:,} servers" for s, n in f.drawn_sizes)
    memory = Table.of(["figure", "before", "peak during (both rings)", "after"], [
        [text("fleet"), size(f.bytes_before), size(f.bytes_peak), size(f.bytes_after)],
        [text("largest data centre"),
         size(max(c.servers * c.process_bytes_before for c in f.centres)),
         size(max(c.servers * (c.process_bytes_before + c.process_bytes_after)
                  for c in f.centres)),
         size(max(c.servers * c.process_bytes_after for c in f.centres))],
        [text("largest process"), size(f.largest_process_before),
         size(f.largest_process_before + f.largest_process_after),
         size(f.largest_process_after)],
    ], notes=[f"{f.data_centres:,} data centres ({f.made}"
              + (f": {drawn}" if drawn else "") + f"), {f.servers:,} servers, one router "
              f"process each. Memory from {f.memory_source} ({f.bytes_per_entry} bytes "
              "per entry). Old rings stay resident until the rollout ends, to keep the "
              "rollback available."])
    centres = Table.of(
        ["data centre", "wave", "servers", "rings", "process before", "process after",
         "data centre before / after",
         "keys moved", "formula", "requests moved", "fetches steady", "staged",
         "all at once", "peak window staged / at once", "rollback extra"],
        [[text(c.name), text(c.wave if c.wave else "(not reached)"),
          count(c.servers), count(c.rings), size(c.process_bytes_before),
          size(c.process_bytes_after),
          text(f"{size(c.servers * c.process_bytes_before).text} / "
               f"{size(c.servers * c.process_bytes_after).text}"),
          pct(c.moved_fraction),
          pct(c.formula_moved_fraction) if c.formula_moved_fraction is not None
          else text("n/a"), pct(c.moved_requests_fraction), count(c.fetches_steady),
          count(c.fetches_staged), count(c.fetches_at_once),
          text(f"{c.peak_window_staged:,} / {c.peak_window_at_once:,}"),
          count(c.rollback_extra) if c.rollback_extra is not None else text("")]
         for c in f.centres],
        notes=[f"Origin fetches over {f.windows} windows of {f.window_requests:,} requests "
               "per data centre, after the warm-up; each server an LRU cache."])
    waves = Table.of(
        ["wave", "data centres", "starts at window", "extra fetches staged",
         "extra fetches all at once"],
        [[text(w.name), count(w.data_centres),
          count(w.start_window) if w.started else text("never (rolled back before)"),
          count(w.extra_staged), count(w.extra_at_once)] for w in f.waves])
    tables_ = [memory, waves, centres]
    if f.rollback is not None:
        r = f.rollback
        tables_.insert(2, Table.of(["rollback", "value"], [
            [text("at"), text(f"after stage {r.stage} of wave {r.wave}, window {r.window}")],
            [text("data centres rolled back"), count(r.data_centres)],
            [text("origin fetches above steady, from then on"), count(r.extra_fetches)],
            [text("misses per request, first window after / steady"),
             text(f"{number(r.first_window_rate, 4).text} / {number(r.steady_rate, 4).text}")],
            [text("old ring's caches (as the LRU replay says)"), text(r.caches)],
            [text("new rings freed by the rollback"), size(r.new_bytes_freed)],
        ]))
    fetches = charts.curves(
        "Fleet origin fetches per window: staged waves against all at once",
        [{"window": t, "series": s, "fetches": v} for s, t, v in f.timeline],
        x="window", y="fetches", series="series", x_title="window of requests",
        y_title="origin fetches", log=False)
    by_wave: dict[str, list[int]] = {}
    for c in f.centres:
        series = by_wave.setdefault(c.wave or "(not reached)", [0] * len(c.staged_windows))
        for t, v in enumerate(c.staged_windows):
            series[t] += v
    per_wave = charts.curves(
        "Origin fetches per window, by wave (staged, the rollback included)",
        [{"window": t, "series": w, "fetches": v} for w, values in by_wave.items()
         for t, v in enumerate(values)],
        x="window", y="fetches", series="series", x_title="window of requests",
        y_title="origin fetches of the wave's data centres", log=False)
    memory_chart = charts.curves(
        "Fleet memory per window",
        [{"window": t, "series": "fleet", "GiB": v / 2**30} for t, v in f.memory_timeline],
        x="window", y="GiB", series="series", x_title="window of requests",
        y_title="GiB held by router processes", log=False)
    return Section(title(label, f), paragraphs=answers(f), tables=tables_,
                   charts=[fetches, per_wave, memory_chart])
