"""A result as a report: metadata, then each metric's tables (in registry order), peers, parity.

This module only selects; `harness.report.markdown` (and later HTML) formats.
"""

from __future__ import annotations

from harness.core.machine import NOT_A_CHECKOUT
from harness.core.model import Result, Run
from harness.core.tables import (
    Answer,
    Cell,
    Report,
    Section,
    Table,
    code,
    count,
    kib,
    literal,
    number,
    pct,
    text,
)
from harness.metrics.instruments.targets import leaders, leaders_note
from harness.metrics.instruments.timing import timing_cell
from harness.metrics.memory import Memory
from harness.metrics.registry import metrics
from harness.metrics.throughput import Throughput

#: what a commit marked '-dirty' means, said where the commit is shown
DIRTY_WORDS = ("with uncommitted or untracked files: the commit alone does not hold this "
               "run's inputs")


def commit_markdown(commit: str | None) -> str:
    """A result's commit as Markdown: a code span (saying so in words when the tree was
    dirty), or in words when there was none."""
    if not commit:
        return NOT_A_CHECKOUT
    return f"{code(commit)} ({DIRTY_WORDS})" if commit.endswith("-dirty") else code(commit)


def metadata(result: Result) -> str:
    machine = result.machine
    return (f"Written by ring-harness {literal(result.harness_version)} (result format "
            f"{result.format_version}) from {code(result.scenario_file)} at "
            f"{literal(result.started_at)}, commit {commit_markdown(result.git_commit)}; "
            f"{literal(machine.cpu)}, {machine.cores} cores, Python {literal(machine.python)}, "
            f"numpy {literal(str(machine.versions.get('numpy')))}; "
            f"run took {result.duration_s} s.")


def result_report(result: Result) -> Report:
    """The result's page: its question and answers first, then each metric's sections, the
    peers, the fleet and the parity checks; measurement notes (tuning, resources) last."""
    sections: list[Section] = [section for metric in metrics()
                               for section in metric.sections(result)]
    sections += [peers_section(run) for run in result.runs if run.of_kind("peer")]
    fleet = fleet_section(result)
    sections += [fleet] if fleet is not None else []
    sections.append(parity_section(result))
    sections.append(resources_section(result))
    answers: list[Answer] = [answer for metric in metrics()
                             for answer in metric.answers(result)]
    return Report(literal(result.name, line_start=True),
                  [fleet.paragraphs[0]] if fleet is not None else [],
                  [s for s in sections if not s.note] + [s for s in sections if s.note],
                  metadata=metadata_pairs(result),
                  question=literal(str(result.scenario["description"]), line_start=True),
                  answers=answers, provenance=metadata(result))


def drawn_weights(result: Result) -> list[tuple[str, float]] | None:
    """The servers as the run drew them, (name, weight) in order (None: the result does not
    list them, a process's fleet of rings)."""
    servers = result.scenario.get("servers")
    if not isinstance(servers, list) or not servers:
        return None
    drawn = [(str(s.get("name")), float(s.get("weight", 1.0))) for s in servers
             if isinstance(s, dict)]
    return drawn if len(drawn) == len(servers) else None


def fleet_section(result: Result) -> Section | None:
    """The fleet as drawn: how many servers of each weight, and every server folded."""
    drawn = drawn_weights(result)
    if drawn is None:
        return None
    counts: dict[float, int] = {}
    for _, weight in drawn:
        counts[weight] = counts.get(weight, 0) + 1
    by_weight = ", ".join(f"{n:,} of weight {w:g}" for w, n in sorted(counts.items()))
    line = (f"The fleet as drawn: {len(drawn):,} servers, {by_weight}." if len(counts) > 1
            else f"The fleet as drawn: {len(drawn):,} servers, all of weight "
                 f"{next(iter(counts)):g}.")
    return Section("Fleet", paragraphs=[line],
                   folded=[(f"All {len(drawn):,} servers (name: weight)",
                            [f"{literal(name)}: {weight:g}" for name, weight in drawn])])


def metadata_pairs(result: Result) -> list[tuple[str, str]]:
    """The run's provenance, one (name, value) pair per line of the HTML page's header."""
    machine = result.machine
    versions = literal(", ".join(f"{k} {v}" for k, v in machine.versions.items() if v))
    memory = machine.memory_bytes
    return [
        ("scenario", f"{code(result.scenario_file)} "
                     f"(sha256 {literal(result.scenario_sha256[:12])})"),
        ("commit", commit_markdown(result.git_commit)),
        ("started", f"{literal(result.started_at)}, took {result.duration_s} s"),
        ("machine", f"{literal(machine.cpu)}, {machine.cores} cores"
                    + (f", {memory / 2**30:.1f} GiB" if memory else "")),
        ("system", literal(f"{machine.os}, {machine.implementation} {machine.python}")),
        ("versions", versions),
        ("result format", str(result.format_version)),
    ]


def resources_section(result: Result) -> Section:
    """What each sweep point cost this machine: wall time, and the process's peak resident
    set once it was done (a running maximum: the sweep runs in order)."""
    rows = [[text(run.label), count(run.ring.points) if run.ring else text(""),
             number(run.wall_s, 2) if run.wall_s is not None else text(""),
             kib(run.peak_rss_bytes) if run.peak_rss_bytes is not None else text("")]
            for run in result.runs]
    notes = ["Peak RSS is the harness process's high-water mark after the run (children "
             "measuring memory are not included); runs of a sweep go in order, so a "
             "larger ring after a smaller one shows its own peak."]
    if result.executor is not None:
        # The points ran in workers: each peak is its own worker's, not a running maximum.
        notes = [f"Ran as tasks: {literal(result.executor)}. Wall time is the point's own "
                 "in its worker, not the run's."]
    if result.estimated_peak_bytes is not None:
        notes.append(f"The memory estimate made before the run started, an upper bound for "
                     f"the process and the largest process it starts at once: "
                     f"{kib(result.estimated_peak_bytes).text}.")
    return Section("Resources", tables=[Table.of(
        ["run", "points", "wall s", "peak RSS so far"], rows, notes=notes)], note=True)


#: a figure a subject does not report (never shown as 0)
UNKNOWN = text("unknown")


def _parity_line(run: Run) -> str:
    label, forms, keys = literal(run.label, line_start=True), run.parity.forms, run.parity.keys
    peers = [p.name for p in run.of_kind("peer")]
    checked = (f" Peers ({', '.join(literal(p) for p in peers)}) are not forms of ours: "
               "they are checked by their agreement with our reference "
               "(the Peer libraries table)." if peers else " No peer was checked.")
    if not forms:
        return f"{label}: no form to check: the reference alone routed {keys:,} keys.{checked}"
    if len(forms) == 1:
        return (f"{label}: its one form, {literal(forms[0])}, routed {keys:,} keys "
                f"identically to the reference.{checked}")
    return (f"{label}: all {len(forms)} forms ({', '.join(literal(f) for f in forms)}) "
            f"routed {keys:,} keys identically to the reference.{checked}")


def parity_section(result: Result) -> Section:
    return Section("Parity", paragraphs=["\n".join(_parity_line(run) for run in result.runs)])


def peers_section(run: Run) -> Section:
    """Each peer against our smallest layout (bytes per entry) and our scalar lookup of
    the lowest median: the base of a ratio, named by its median, not as a finding of the
    fastest (`harness.metrics.instruments.targets.leaders`, which the table's note
    follows)."""
    ours = [(s.name, m, t) for s in run.of_kind("layout") + run.of_kind("algorithm")
            if isinstance(m := s.figure("memory"), Memory)
            and isinstance(t := s.figure("throughput"), Throughput)]
    smallest = min(ours, key=lambda o: o[1].bytes_per_entry) if ours else None
    found = leaders([(name, t.scalar_ns) for name, _, t in ours]) if ours else None
    fastest = next(o for o in ours if o[0] == found.base) if found else None
    rows: list[list[Cell]] = []
    for peer in run.of_kind("peer"):
        row = [text(peer.name), count(peer.entries) if peer.entries else UNKNOWN,
               pct(peer.agreement, 1) if peer.agreement is not None else UNKNOWN]
        memory, timing = peer.figure("memory"), peer.figure("throughput")
        if smallest and memory is not None and memory.bytes_per_entry > 0:
            row += [number(memory.bytes_per_entry, 1),
                    text(f"{memory.bytes_per_entry / smallest[1].bytes_per_entry:.1f}x "
                         f"({smallest[0]})")]
        elif smallest:
            row += [UNKNOWN, UNKNOWN]
        if fastest and timing is not None:
            row += [timing_cell(timing.scalar_ns),
                    text(f"{timing.scalar_ns.median / fastest[2].scalar_ns.median:.1f}x "
                         f"({fastest[0]})")]
        rows.append(row)
    entries = run.ring.entries if run.ring else 0
    notes = ["Peers look keys up by name (hashing included); our scalar_ns starts from a "
             "precomputed hash."]
    if fastest is not None and found is not None and any(
            peer.figure("throughput") is not None for peer in run.of_kind("peer")):
        notes.append(f"vs our lowest scalar median: the peer's median over that of our "
                     f"form of the lowest scalar median, {literal(found.base)} "
                     f"({fastest[2].scalar_ns.median:,.1f} ns): a base chosen by its "
                     f"median alone; whether it is our fastest, the next note says.")
        leading = leaders_note("scalar lookup of ours", found, literal, "ns per key")
        if leading is not None:
            notes.append(leading)
    table = Table.of(["peer", "points", "same owner as our ring", "bytes per point",
                      "vs our smallest", "scalar_ns per key (min-max)",
                      "vs our lowest scalar median"], rows, notes=notes).trimmed()
    return Section(f"Peer libraries ({literal(run.label)}, {entries:,} entries)", tables=[table])
