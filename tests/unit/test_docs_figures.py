"""Figures the docs quote from committed results: each read from its result, found in its page.

A figure is named by where the result prints it (a section's table, a row, a column, or a
sentence of the result) and is looked for in the page as the result prints it, to the same
precision: a re-run result with other figures fails here until the page quotes them. Every
decimal figure the performance reference quotes must be one of these, so the reference
cannot quote a number no committed result holds; every decimal beside a named result, and
every whole number with a unit anywhere in the docs and the README (tests/docs_whole_figures.py
says where each may come from), must be printed by a committed result. Plain file reads,
regular expressions and tomllib only, like tests/unit/test_docs.py.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import pytest

from tests.docs_whole_figures import Figure as WholeFigure
from tests.docs_whole_figures import Sources, figures_of, named_results, unsourced
from tests.paths import ROOT

DOCS = ROOT / "docs"
REFERENCE = "performance-notes.md"

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
#: a measured figure as results print them: a decimal, maybe a ratio or a percentage
DECIMAL = re.compile(r"(?<![\w.,])\d[\d,]*\.\d+[x%]?(?![\w.]*\d)")


@dataclass(frozen=True)
class Cell:
    """One cell of a result's table: the row whose first cell is `row`, under `column`.

    `whole` keeps the cell as printed, to be quoted in prose; otherwise its first token
    (the median of "19.4 (17.4-30.0)"), looked for on the reference's table lines naming
    `row` (or `label`, when the page names the row differently).
    """

    result: str
    section: str
    row: str
    column: str
    whole: bool = False
    label: str | None = None


@dataclass(frozen=True)
class Sentence:
    """A figure inside a sentence of a result: group 1 of `pattern`, searched from `section` on."""

    result: str
    section: str
    pattern: str


Figure = Cell | Sentence


def result_text(result: str) -> str:
    return (ROOT / "results" / result).read_text(encoding="utf-8")


HEADING = re.compile(r"^#{2,3} ", re.MULTILINE)


def section_text(result: str, section: str) -> str:
    """The result's text from the heading `## section` (or `### section`, a measurement
    note) to the next heading; with no section, the opening after the answers block."""
    text = result_text(result)
    parts = HEADING.split(text)
    if not section:
        opening = [p for p in parts[1:] if p.startswith("Answers\n")]
        return opening[0] if opening else parts[0]
    found = [p for p in parts[1:] if p.startswith(f"{section}\n")]
    assert found, f"results/{result} has no section {section!r}"
    return found[0]


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def read_figure(figure: Figure) -> str:
    """The figure as the committed result prints it."""
    text = section_text(figure.result, figure.section)
    if isinstance(figure, Sentence):
        match = re.search(figure.pattern, text)
        assert match, f"results/{figure.result}, {figure.section}: no match for {figure.pattern!r}"
        return match.group(1)
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table, f"results/{figure.result}, {figure.section}: no table"
    header = cells(table[0])
    assert figure.column in header, f"results/{figure.result}: no column {figure.column!r}"
    for line in table[2:]:
        row = cells(line)
        if row[0] == figure.row:
            cell = row[header.index(figure.column)]
            return cell if figure.whole else cell.split(" ")[0]
    raise AssertionError(f"results/{figure.result}, {figure.section}: no row {figure.row!r}")


def appears(value: str, text: str) -> bool:
    """`value` stands in `text` as a whole figure, not as part of a longer number."""
    return re.search(rf"(?<![\w.,]){re.escape(value)}(?![\w]|\.\d|,\d)", text) is not None


def page_lines_naming(label: str, text: str) -> list[str]:
    return [line for line in text.splitlines()
            if line.startswith("|") and label in [c.strip("`") for c in cells(line)]]


def found_in_page(figure: Figure, value: str, page: str) -> bool:
    """On the reference, a table cell's figure is looked for on the lines naming its row."""
    text = (DOCS / page).read_text(encoding="utf-8")
    if isinstance(figure, Cell) and not figure.whole and page == REFERENCE:
        lines = page_lines_naming(figure.label or figure.row, text)
        if lines:
            return any(appears(value, line) for line in lines)
    return appears(value, text)


BEYOND = "beyond-6-bytes.md"
BEYOND_10M = "Lookup time (k=100000, 9,988,319 entries)"
MIGRATION_120 = "Migration (k=160 to k=16)"
BEYOND_10M_TUNING = "Tuning (k=100000, 9,988,319 entries)"
DEFAULT_16K = "Lookup time (k=160, 16,000 entries)"
HASH64_16M = "Lookup time (k=160000, 16,000,000 entries)"
COUNTS = "Instructions and simulated cache misses per key (k=100000, 9,990,010 entries)"
ALGORITHMS = "Algorithms compared (N=10, equal weights)"
TARGETS = "Algorithms compared: speed targets"
CLIENTS = "Clients' speed and size"
FLEET = "Fleet rollout (k=160 to points_per_weight = 16)"
FLOOR = r"timed in the same rounds: ([\d.,]+) \("
WRITTEN_ON = r"Written by .* at (\d{4}-\d\d-\d\d)T"
CPU = r"; ((?:AMD|Intel).*?), 2 cores"

LAYOUTS_32 = ("numpy-aligned", "numpy-packed", "numpy-soa", "cffi-aligned", "cffi-packed",
              "bucketed")
LAYOUTS_64 = ("numpy-aligned-64", "numpy-packed-64", "cffi-aligned-64", "cffi-packed-64")
ALGORITHM_ROWS = ("ring k=160 cffi-packed", "ring k=160 bucketed", "jump", "maglev M=65,537",
                  "rendezvous murmur3", "multi-probe 21 probes", "bounded-load k=160, bound 125%",
                  "rendezvous-weighted murmur64A", "binomial", "fliphash", "powerch",
                  "anchor full a=auto", "memento", "jumpback", "dx c=auto")


def reference_figures() -> list[Figure]:
    """Every figure the performance reference quotes, where its result prints it."""
    figures: list[Figure] = []
    for result in (BEYOND, "default.md", "algorithms.md", "clients.md", "hash-bits-64.md",
                   "scaling.md", "counts-10m.md"):
        figures += [Sentence(result, "", WRITTEN_ON), Sentence(result, "", CPU)]
    memory_10m = "Memory (k=100000, 9,988,319 entries)"
    for layout in LAYOUTS_32:
        figures += [Cell(BEYOND, memory_10m, layout, "bytes_per_entry")]
        figures += [Cell(BEYOND, BEYOND_10M, layout, column)
                    for column in ("scalar_ns median (min-max)", "batch_ns median (min-max)",
                                   "batch / one random access")]
    figures += [Sentence(BEYOND, BEYOND_10M, FLOOR),
                Sentence(BEYOND, BEYOND_10M_TUNING,
                         r"Chosen: window 16, depth 32, offsets 64 ahead, ([\d.]+x) as fast"),
                Cell(BEYOND, BEYOND_10M, "bucketed", "batch / one random access", whole=True)]
    memory_16k = "Memory (k=160, 16,000 entries)"
    for layout in ("tuples", "numpy-aligned", "numpy-packed", "numpy-soa", "cffi-aligned",
                   "cffi-packed", "bucketed"):
        figures += [Cell("default.md", memory_16k, layout, "bytes_per_entry"),
                    Cell("default.md", DEFAULT_16K, layout, "scalar_ns median (min-max)"),
                    Cell("default.md", DEFAULT_16K, layout, "batch_ns median (min-max)")]
    figures += [Sentence("default.md", DEFAULT_16K, FLOOR)]
    memory_16m = "Memory (k=160000, 16,000,000 entries)"
    for layout in LAYOUTS_64:
        figures += [Cell("hash-bits-64.md", memory_16m, layout, "bytes_per_entry"),
                    Cell("hash-bits-64.md", HASH64_16M, layout, "batch_ns median (min-max)"),
                    Cell("hash-bits-64.md", HASH64_16M, layout, "batch / one random access")]
    figures += [Sentence("hash-bits-64.md", HASH64_16M, FLOOR)]
    for layout in ("numpy-packed", "cffi-packed", "bucketed"):
        figures += [Cell("counts-10m.md", COUNTS, layout, column)
                    for column in ("batch instr/key", "batch L1 miss/key", "batch LL miss/key")]
    for recipe in ALGORITHM_ROWS:
        figures += [Cell("algorithms.md", ALGORITHMS, recipe, column)
                    for column in ("bytes (memray)", "scalar ns/key (min-max)",
                                   "batch ns/key (min-max)")]
    for algorithm in ("jump", "maglev"):
        target = f"{algorithm} batch against the ring's cffi-packed batch, 160 points per server"
        figures += [Cell("algorithms.md", TARGETS, target, "ratio")]
    # jump's verdict against its 5x and the high end of the interval it is judged on
    jump = r"(?m)^\| jump batch against the ring's .*\| "
    figures += [Sentence("algorithms.md", TARGETS, jump + r"(met|missed|within noise) \("),
                Sentence("algorithms.md", TARGETS, jump + r"[a-z ]+ \([\d.]+x to ([\d.]+x),")]
    for client in ("libmemcached", "groupcache", "spymemcached"):
        figures += [Cell("clients.md", CLIENTS, client, column)
                    for column in ("ns/key, its own clock (min-max)", "ns/key, our route",
                                   "ns/key, our lookup of hashes", "its own / ours")]
    for run, points in (("k=1000", "1,000,000"), ("k=10000", "10,000,000"),
                        ("k=100000", "100,000,000")):
        figures += [Cell("scaling.md", "Resources", run, "wall s", label=points),
                    Cell("scaling.md", "Resources", run, "peak RSS so far", label=points)]
    return figures


#: figures quoted on guide pages, with the page that quotes them
GUIDE_FIGURES: list[tuple[str, Figure]] = [
    ("guide/layouts.md", Cell(BEYOND, BEYOND_10M, "bucketed", "batch / one random access")),
    ("guide/layouts.md", Sentence(BEYOND, BEYOND_10M, FLOOR)),
    ("guide/layouts.md", Cell(BEYOND, "Memory (k=100000, 9,988,319 entries)", "bucketed",
                              "bytes_per_entry")),
    ("guide/layouts.md", Cell(BEYOND, "Memory (k=160, 16,000 entries)", "bucketed",
                              "bytes_per_entry")),
    ("guide/layouts.md", Cell("hash-bits-32.md", "Collisions", "k=80000", "collisions")),
    ("guide/layouts.md", Cell("hash-bits-32.md", "Collisions", "k=80000",
                              "collisions_expected")),
    *[("guide/clients.md", Cell("clients.md", CLIENTS, client, column))
      for client in ("libmemcached", "groupcache", "spymemcached")
      for column in ("ns/key, its own clock (min-max)", "its own / ours")],
    ("guide/clients.md", Cell("clients.md", CLIENTS, "libmemcached",
                              "ns/key, our lookup of hashes")),
    *[("guide/algorithms.md", Cell(result, "Balance", row, column))
      for result, row in (("cassandra-tokens.md", "cassandra num_tokens=256"),
                          ("cassandra-tokens.md", "cassandra num_tokens=16"),
                          ("allocated-100.md", "allocated k=16"))
      for column in ("cv_keys (key sample)", "max/mean (key sample)")],
    *[("guide/algorithms.md", Cell("cassandra-tokens.md", f"Movement (cassandra num_tokens={k})",
                                   row, "moved %"))
      for k in (16, 256) for row in ("add server-100", "remove server-50")],
    *[("guide/algorithms.md", Cell(result, "Balance", row, "cv_arcs (exact shares)"))
      for result, row in (("cassandra-tokens.md", "cassandra num_tokens=256"),
                          ("cassandra-tokens.md", "cassandra num_tokens=16"),
                          ("cassandra-allocator.md", "cassandra allocator num_tokens=256"),
                          ("cassandra-allocator.md", "cassandra allocator num_tokens=16"))],
    *[("guide/algorithms.md", Cell("cassandra-allocator.md", "Balance",
                                   f"cassandra allocator num_tokens={k}", column))
      for k in (16, 256) for column in ("cv_keys (key sample)", "max/mean (key sample)")],
    *[("guide/algorithms.md", Cell("cassandra-allocator.md",
                                   f"Movement (cassandra allocator num_tokens={k})",
                                   row, "moved %"))
      for k in (16, 256) for row in ("add server-100", "remove server-50 (as it falls)")],
    *[("guide/algorithms.md", Cell(f"cassandra-replicas-{name}.md", f"Replication ({label})",
                                   "plain", column))
      for name, label in (("random", "cassandra num_tokens=16"),
                          ("rf1", "cassandra allocator num_tokens=16"),
                          ("rf3", "cassandra allocator rf=3 num_tokens=16"))
      for column in ("copies cv", "copies peak-to-mean", "primary cv")],
    *[("guide/algorithms.md", Sentence(f"cassandra-replicas-{name}.md",
                                       f"Replication ({label})",
                                       r"\| server-100 joins +\|[^|]+\| ([\d.]+%) "))
      for name, label in (("random", "cassandra num_tokens=16"),
                          ("rf1", "cassandra allocator num_tokens=16"),
                          ("rf3", "cassandra allocator rf=3 num_tokens=16"))],
    *[("guide/replication.md", Cell("cassandra-tokens.md",
                                    f"Replication (cassandra num_tokens={k})",
                                    "network topology", "copies peak-to-mean"))
      for k in (16, 256)],
    *[("guide/replication.md", Sentence("cassandra-tokens.md",
                                        f"Replication (cassandra num_tokens={k})",
                                        r"\| server-0 fails +\|" + r"[^|]+\|" * skip
                                        + r" (\d+) "))
      for k in (16, 256) for skip in (5, 7)],
    *[("guide/algorithms.md", Cell("riak.md", "Movement (riak Q=64)", row, column))
      for row, column in (("add server-10", "moved %"),
                          ("remove server-5 (as it falls)", "moved %"),
                          ("remove server-5 (as it falls)", "changed server's share"))],
    *[("guide/algorithms.md", Cell("riak.md", "Balance", "riak Q=64", column))
      for column in ("cv_keys (key sample)", "max/mean (key sample)")],
    ("guide/replication.md", Sentence("riak.md", "Replication (riak Q=64)",
                                      r"\| server-3 fails +\|[^|]+\| ([\d.]+%) ")),
    *[("guide/replication.md", Sentence("riak.md", "Replication (riak Q=64)",
                                        r"\| server-3 fails +\|" + r"[^|]+\|" * skip
                                        + r" (\d+) "))
      for skip in (5, 7)],
    ("guide/reports.md", Cell("migration-120.md", MIGRATION_120,
                              "extra origin fetches in total, staged", "value")),
    ("guide/reports.md", Cell("migration-120.md", MIGRATION_120,
                              "extra origin fetches in total, all at once", "value")),
    ("guide/reports.md", Sentence("migration-120.md", MIGRATION_120,
                                  r"stage 5, 50% -> 100%: ([\d.]+x) steady")),
    ("guide/reports.md", Cell("tutorial-migration.md", MIGRATION_120,
                              "entries' own bytes before / after (cffi-packed)", "value",
                              whole=False)),
    *[("guide/fleet-rollout.md", Sentence("fleet-rollout.md", FLEET, pattern))
      for pattern in (r"Fleet memory: ([\d.,]+ MiB) before", r"MiB before, ([\d.,]+ MiB) at",
                      r"busiest window: ([\d,]+) staged", r"staged against ([\d,]+) all",
                      r"\): ([\d,]+) origin fetches above", r"first window ([\d.]+) misses",
                      r"against ([\d.]+) steady")],
    *[("guide/fleet-rollout.md", Sentence("fleet-cloudflare.md", FLEET, pattern))
      for pattern in (r"Fleet memory: ([\d.,]+ TiB) before", r"TiB at the peak .*?, "
                      r"([\d.,]+ TiB) after", r"old rings frees ([\d.,]+ TiB)")],
    ("guide/fleet-rollout.md", Cell("fleet-cloudflare.md", FLEET, "largest process",
                                    "before", whole=True)),
]

PROXIES = "proxies.md"
PROXIES_10 = "Will the clients agree? 10 servers, equal weights"
PROXIES_2000 = "Will the clients agree? 2,000 servers, weights 1 to 9, listed shuffled"
_PERCENT = r"([\d.]+%)"
_CELL = r"[\d.]+% +\| "


def moved(client: str, on_add: bool) -> str:
    """The keys `client` moves on the removal (or the addition), in a fleet's moves table."""
    return (rf"\| {client} +\| {_CELL}{_PERCENT} +\| built" if on_add
            else rf"\| {client} +\| {_PERCENT} +\| [\d.]+% +\| built")


GUIDE_FIGURES += [
    # nginx's agreement with envoy-ring-hash (4th column) and envoy-maglev (5th)
    ("guide/clients.md", Sentence(PROXIES, PROXIES_10, rf"\| nginx +\| {_CELL * 3}{_PERCENT}")),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_10, rf"\| nginx +\| {_CELL * 4}{_PERCENT}")),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_10, moved("nginx", False))),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_10, moved("envoy-maglev", False))),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_10, moved("envoy-ring-hash", False))),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_10, moved("envoy-ring-hash", True))),
    # pingora v1 against v2: measured on the keys, predicted from both rings' points
    ("guide/clients.md", Sentence(PROXIES, PROXIES_2000,
                                  rf"\| pingora-v1 / pingora-v2 +\| {_PERCENT}")),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_2000,
                                  rf"\| pingora-v1 / pingora-v2 +\| {_CELL}{_PERCENT}")),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_2000, moved("nginx", False))),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_2000, moved("envoy-maglev", False))),
    ("guide/clients.md", Sentence(PROXIES, PROXIES_2000, moved("envoy-maglev", True))),
]

CLIENTS_10 = "Will the clients agree? 10 servers, equal weights"
CLIENTS_100 = "Will the clients agree? 100 servers, weights 1:2:4"


def pair(a: str, b: str, predicted: bool = False) -> str:
    """A pair's measured (or predicted) share, in its state's first table (as it is)."""
    return rf"\| {re.escape(a)} / {re.escape(b)} +\| {_CELL if predicted else ''}{_PERCENT}"


#: the clients matrix as docs/guide/clients.md reads it (proxies included): agreements
#: with their predictions, the proxies' columns of nginx's row, and the keys each moves
GUIDE_FIGURES += [
    ("guide/clients.md", Sentence("clients.md", "", r"run took ([\d.]+) s\.")),
    *[("guide/clients.md", Sentence("clients.md", CLIENTS_10, pair(a, b, predicted)))
      for a, b in (("uhashring-ketama", "libmemcached"), ("groupcache", "nginx"))
      for predicted in (False, True)],
    ("guide/clients.md", Sentence("clients.md", CLIENTS_10, pair("uhashring-ketama",
                                                                 "twemproxy"))),
    # nginx's agreement with envoy-ring-hash (16th column) and envoy-maglev (17th)
    *[("guide/clients.md", Sentence("clients.md", CLIENTS_10,
                                    rf"\| nginx +\| {_CELL * skip}{_PERCENT}"))
      for skip in (15, 16)],
    *[("guide/clients.md", Sentence("clients.md", CLIENTS_100,
                                    pair("uhashring-ketama", "libmemcached", predicted)))
      for predicted in (False, True)],
    *[("guide/clients.md", Sentence("clients.md", CLIENTS_10, moved(client, False)))
      for client in ("uhashring-ketama", "nginx", "envoy-maglev", "jump-consistent-hash",
                     "haproxy", "envoy-ring-hash")],
    ("guide/clients.md", Sentence("clients.md", CLIENTS_10, moved("envoy-ring-hash", True))),
    *[("guide/clients.md", Sentence("clients.md", CLIENTS_100, moved(client, False)))
      for client in ("uhashring-ketama", "haproxy", "envoy-maglev", "envoy-ring-hash")],
    ("guide/clients.md", Sentence("clients.md", CLIENTS_100, moved("envoy-ring-hash", True))),
]

#: a rollout's total extra origin fetches, staged and all at once, in three migrations
GUIDE_FIGURES += [
    ("guide/processes-and-migrations.md", Cell(result, section, row, "value"))
    for result, section in (
        ("migration-100k-to-10k.md", "Migration (k=160 to k=16)"),
        ("process-cloudflare-6gb.md", "Migration (k=160 to k=16)"),
        ("switch-clients.md", "Migration (libmemcached to peer hashring-js)"))
    for row in ("extra origin fetches in total, staged",
                "extra origin fetches in total, all at once")]

#: the 6 GB process's timings in its committed run (the page gives earlier runs' too)
CLOUDFLARE_6GB = "process-cloudflare-6gb.md"
GUIDE_FIGURES += [
    ("guide/processes-and-migrations.md",
     Cell(CLOUDFLARE_6GB, "The process in each layout, and after the cut",
          "built and measured in numpy-aligned, s", "k=160")),
    ("guide/processes-and-migrations.md",
     Sentence(CLOUDFLARE_6GB, "Process (k=160): 64 rings",
              r"\| the process metric in all, checks included +\| ([\d.]+) ")),
    ("guide/processes-and-migrations.md",
     Sentence(CLOUDFLARE_6GB, "Process (k=160): 64 rings",
              r"\| its CPU time, over every thread +\| ([\d.]+) ")),
    ("guide/processes-and-migrations.md",
     Sentence(CLOUDFLARE_6GB, "Migration (k=160 to k=16)",
              r"\| measured in, s of wall time / of CPU time +\| ([\d.]+) / ")),
    ("guide/processes-and-migrations.md",
     Sentence(CLOUDFLARE_6GB, "Migration (k=160 to k=16)",
              r"\| measured in, s of wall time / of CPU time +\| [\d.]+ / ([\d.]+) ")),
    ("guide/processes-and-migrations.md",
     Sentence(CLOUDFLARE_6GB, "", r"run took ([\d.]+) s\.")),
]

#: the 6 GB process's run time and peak as the scenario table quotes them
GUIDE_FIGURES += [
    ("guide/scenarios.md", Sentence(CLOUDFLARE_6GB, "", r"run took ([\d.]+) s\.")),
    ("guide/scenarios.md", Sentence(CLOUDFLARE_6GB, "Resources",
                                    r"(?m)^\| k=160 +\|[^|]+\|[^|]+\| ([\d.,]+ MiB) ")),
    *[("guide/fleet-rollout.md", Sentence("fleet-cloudflare.md", FLEET, pattern))
      for pattern in (r"(?m)^\| dc-032 .*?\| ([\d.]+ TiB) / [\d.]+ TiB",
                      r"(?m)^\| dc-032 .*?\| [\d.]+ TiB / ([\d.]+ TiB)")],
    *[("guide/replication.md", Cell("replication.md", f"Replication (k={k})", "plain",
                                    "keys with two copies in one zone"))
      for k in (1, 160)],
]

RANGE_SCANS = "Range scans"
GUIDE_FIGURES += [
    *[("guide/algorithms.md", Cell("range-scans.md", RANGE_SCANS, row, column))
      for row in ("range 800 ranges", "jump")
      for column in ("servers per scan of 10 keys", "servers per scan of 1,000 keys")],
    *[("guide/algorithms.md", Sentence("range-scans.md", RANGE_SCANS,
                                       rf"(?m)^\| {row} +\| ([\d.]+%)"))
      for row in ("range 800 ranges", "jump")],
    ("guide/algorithms.md", Sentence("range-scans.md", RANGE_SCANS,
                                     r"(?m)^\| range 800 ranges .*\| 800 +\| ([\d.]+%)")),
    ("guide/algorithms.md", Sentence("range-scans.md", RANGE_SCANS,
                                     r"(?m)^\| range 800 ranges .*\| ([\d.]+%) +\|$")),
    *[("guide/scenarios.md", Cell("key-parts.md", "Balance", "k=160", column))
      for column in ("max/mean (key sample)", "cv_keys (key sample)", "cv_floor")],
]
#: the pipe's cost: the pair's row of the overhead table (library, pipe, its C call,
#: through the pipe, pipe minus the C call, the target, the same in CPU time, ...)
OVERHEAD, OVERHEAD_SECTION = "foreign-overhead.md", "Foreign peers (libmemcached)"
OVERHEAD_ROW = r"(?m)^\| libmemcached-abi +\| libmemcached-pipe +"
#: a signed difference as the table prints it, each of its three figures captured in turn
SIGNED = [r"([+-][\d.]+) \([+-][\d.]+ to [+-][\d.]+\)",
          r"[+-][\d.]+ \(([+-][\d.]+) to [+-][\d.]+\)",
          r"[+-][\d.]+ \([+-][\d.]+ to ([+-][\d.]+)\)"]
GUIDE_FIGURES += [
    *[("guide/foreign-peers.md", Sentence(OVERHEAD, OVERHEAD_SECTION, OVERHEAD_ROW + pattern))
      for pattern in (
          # its C call: median, min, max
          r"\| ([\d.]+) \(", r"\| [\d.]+ \(([\d.]+)-", r"\| [\d.]+ \([\d.]+-([\d.]+)\)",
          # pipe minus the C call, by the wall clock and in CPU time
          *[r"(?:\|[^|]*){2}\| " + signed for signed in SIGNED],
          *[r"(?:\|[^|]*){4}\| " + signed for signed in SIGNED])],
    # each figure's verdict against the target and its median's interval, by the wall clock
    # (after the difference) and in CPU time (after its twin)
    *[("guide/foreign-peers.md", Sentence(OVERHEAD, OVERHEAD_SECTION,
                                          OVERHEAD_ROW + rf"(?:\|[^|]*){{{skip}}}\| " + pattern))
      for skip in (3, 5) for pattern in (
          r"(met|missed|within noise) \(", r"[a-z ]+ \(([+-][\d.]+) to ",
          r"[a-z ]+ \([+-][\d.]+ to ([+-][\d.]+),")],
]
TUTORIAL_160 = "Lookup time (k=160, 12,160 entries)"
# layouts tied within noise: the lowest median with its range, the others' medians, and
# the runner-up's ratio interval from the table's note
GUIDE_FIGURES += [
    ("guide/reports.md", Cell("tutorial.md", TUTORIAL_160, "cffi-aligned",
                              "batch_ns median (min-max)", whole=True)),
    *[("guide/reports.md", Cell("tutorial.md", TUTORIAL_160, layout,
                                "batch_ns median (min-max)"))
      for layout in ("numpy-aligned", "cffi-packed")],
    *[("guide/reports.md", Sentence("tutorial.md", TUTORIAL_160, pattern))
      for pattern in (r"numpy-aligned / cffi-aligned [\d.]+x, ([\d.]+x) to ",
                      r"numpy-aligned / cffi-aligned [\d.]+x, [\d.]+x to ([\d.]+x)")],
]
ALL_FIGURES = [(REFERENCE, figure) for figure in reference_figures()] + GUIDE_FIGURES


def figure_id(entry: tuple[str, Figure]) -> str:
    page, figure = entry
    where = figure.row + " / " + figure.column if isinstance(figure, Cell) else figure.pattern
    return f"{page}: {figure.result} {figure.section} {where}"


@pytest.mark.parametrize("entry", ALL_FIGURES, ids=[figure_id(e) for e in ALL_FIGURES])
def test_quoted_figure_matches_the_committed_result(entry: tuple[str, Figure]) -> None:
    """The page quotes the figure exactly as the committed result prints it."""
    page, figure = entry
    value = read_figure(figure)
    assert found_in_page(figure, value, page), (
        f"docs/{page} should quote {value} from results/{figure.result} ({figure_id(entry)})")


def prose(text: str) -> str:
    return LINK_TARGET.sub("]", CODE_SPAN.sub("", FENCE.sub("", text)))


def test_every_decimal_in_the_reference_comes_from_a_result() -> None:
    """Each decimal figure on the performance reference is one read from a committed result."""
    values = [read_figure(figure) for figure in reference_figures()]
    quoted = set(values) | {number for value in values for number in DECIMAL.findall(value)}
    text = prose((DOCS / REFERENCE).read_text(encoding="utf-8"))
    unsourced = sorted({number for number in DECIMAL.findall(text) if number not in quoted})
    assert not unsourced, f"docs/{REFERENCE} quotes figures no result gives: {unsourced}"


def test_a_figure_is_found_only_whole() -> None:
    """A figure inside a longer number does not count as quoted."""
    assert appears("2.01x", "takes 2.01x the floor")
    assert not appears("2.01x", "takes 12.01x the floor")
    assert not appears("1.0", "took 1.01 s")
    assert not appears("1,403.1", "1,403.11 MiB")


#: where a guide page quotes results by name (`results/NAME.md`, or the `NAME.toml` that
#: writes it), a decimal figure of it that is not read from one of them, with why; every
#: other such figure must be
NOT_FROM_A_RESULT = {
    ("guide/foreign-peers.md", "70.2"): "the same scenario before protocol 2, not kept",
    ("guide/foreign-peers.md", "7.5"): "the same scenario before protocol 2, not kept",
    ("guide/foreign-peers.md", "29.0"): "the same scenario before protocol 2, not kept",
    ("guide/foreign-peers.md", "1.2"): "a second run with shared batches, not kept",
    ("guide/foreign-peers.md", "2.1"): "a second run with shared batches, not kept",
    ("guide/foreign-peers.md", "9.8"): "a second run with shared batches, not kept",
    ("guide/foreign-peers.md", "5.8"): "a second run with shared batches, not kept",
    ("guide/foreign-peers.md", "4.6"): "another run with the library in its worker, not kept",
    ("guide/foreign-peers.md", "32.2"): "another run with the library in its worker, not kept",
    ("guide/foreign-peers.md", "5.3"): "another run with the library in its worker, not kept",
    ("guide/foreign-peers.md", "41.2"): "another run with the library in its worker, not kept",
    ("guide/foreign-peers.md", "2.7"): "another run with the library in its worker, not kept",
    ("guide/foreign-peers.md", "2.8"): "another run with the library in its worker, not kept",
    ("guide/foreign-peers.md", "2.0"): "another run with the library in its worker, not kept",
    ("guide/foreign-peers.md", "30.3"): "the run with the library in our process, replaced",
    ("guide/foreign-peers.md", "3.7"): "the run with the library in our process, replaced",
    ("guide/foreign-peers.md", "18.9"): "the run with the library in our process, replaced",
    ("guide/foreign-peers.md", "51.7"): "the run with the library in our process, replaced",
    ("guide/layouts.md", "37.5%"): "arithmetic: 6 bytes of padding in 16",
    ("guide/algorithms.md", "16.0"): "arithmetic: the table's bytes over its slots",
    ("guide/clients.md", "2.5"): "a version: uhashring 2.5",
    ("guide/clients.md", "3.6"): "a version: jump-consistent-hash 3.6",
    ("guide/clients.md", "1.6"): "a version: memcached 1.6",
}
#: a number as a result prints it, with its unit sign
PRINTED = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)([x%]?)")
#: pages that are not quoting today's results: the log of past measurements, the
#: reference (checked figure by figure above) and generated pages
NOT_SCANNED = ("performance-log.md", REFERENCE)


def _rounds_to(figure: str, printed: str) -> bool:
    """Whether some number of `printed` (with the same unit sign) shows as `figure` at the
    figure's precision (a page may round 89.03% to 89.0%, half up)."""
    unit = figure[-1] if figure[-1] in "x%" else ""
    body = figure.rstrip("x%").replace(",", "")
    decimals = len(body.partition(".")[2])
    target = float(body)
    for match in PRINTED.finditer(printed):
        if unit and match.group(2) != unit:
            continue
        value = float(match.group(1).replace(",", ""))
        if abs(value - target) <= 0.5 * 10 ** -decimals + 1e-9:
            return True
    return False


def _guide_quotes() -> list[tuple[str, str, list[str]]]:
    """(page, figure, results it names) for each decimal figure of a paragraph of a docs
    page that names a committed result, by its file or by the scenario that writes it
    (figures in code are left out)."""
    quotes = []
    for path in sorted(DOCS.rglob("*.md")):
        page = path.relative_to(DOCS).as_posix()
        if page in NOT_SCANNED or page.startswith("reference/"):
            continue
        text = FENCE.sub("", path.read_text(encoding="utf-8"))
        named = sorted(named_results(text, ROOT / "results"))
        for paragraph in re.split(r"\n\s*\n", text):
            if not named_results(paragraph, ROOT / "results"):
                continue
            quotes += [(page, figure, named) for figure in DECIMAL.findall(prose(paragraph))]
    return quotes


def test_every_figure_beside_a_named_result_is_read_from_one() -> None:
    """A decimal figure in a docs paragraph that names a committed result is printed, to
    the page's precision, by one of the results its page names (or is listed, with why, in
    NOT_FROM_A_RESULT): a new quote cannot drift from its result silently."""
    quotes = _guide_quotes()
    assert len(quotes) > 100  # the scan finds the guides' quotes (148 today)
    printed: dict[str, str] = {}
    drifted = []
    for page, figure, named in quotes:
        if (page, figure) in NOT_FROM_A_RESULT:
            continue
        text = "".join(printed.setdefault(name, result_text(f"{name}.md")) for name in named)
        if not _rounds_to(figure, text):
            drifted.append(f"docs/{page}: {figure} (names {', '.join(named)})")
    assert not drifted, "figures no named result prints:\n" + "\n".join(drifted)


#: pages whose whole numbers are not today's results: the dated log of past measurements,
#: and the scenario reference, generated from the fields' own descriptions
WHOLE_NOT_SCANNED = ("performance-log.md", "reference/scenario.md")
#: a whole figure the rules of tests/docs_whole_figures.py cannot place, by page ("*": any)
#: and as the page writes it, with why it is not a result's figure
WHOLE_NOT_FROM_A_RESULT = {
    ("*", "256 KiB"): "the bucketed layout's fixed offset table: 65,537 offsets of 4 bytes",
    ("guide/ab-gate.md", "16 times"): "a setting: the round scales a suite picks (4 or 16)",
    ("guide/regression-gates.md", "16 times"): "a setting: the round scales (4 or 16)",
    ("guide/regression-gates.md", "4 ms"): "the scheduler's time slice, a fact of the machine",
    ("guide/regression-gates.md", "2x"): "the slowdown the gate's own tests inject and read",
    ("guide/algorithms.md", "16 to 32 bytes"): "arithmetic: 8-byte entries, at most half full",
    ("guide/algorithms.md", "4 to 15 nodes"): "the span of riak_core's own test cases",
    ("guide/algorithms.md", "1,000,000 slots"): "an example of a parameter to sweep",
    ("guide/clients.md", "103 points"): "arithmetic: Envoy's 1,024-point minimum over 10 hosts",
    ("guide/counts.md", "32 KiB"): "the cache geometry the run sets (--I1=32768,8,64)",
    ("guide/counts.md", "11%"): "arithmetic on the table above: 4.07 / 4.58, 260.7 / 235.3",
    ("guide/layouts.md", "25%"): "arithmetic: 2 padding bytes in 8",
    ("guide/layouts.md", "65,536 entries"): "the bucket count, 2**16 (n / 65,536 a bucket)",
    ("guide/planning.md", "330x"): "arithmetic: 9,900 random points against 30 tokens",
    ("guide/processes-and-migrations.md", "107 s"): "an earlier run, named as such, not kept",
    ("guide/processes-and-migrations.md", "28%"): "an earlier run, named as such, not kept",
    ("guide/processes-and-migrations.md", "18%"): "an earlier run, named as such, not kept",
    ("guide/processes-and-migrations.md", "65,536 keys"): "the peer protocol's batch size",
    ("guide/reproduction.md", "2 GB"): "arithmetic: 204.8 million points at 10 bytes",
    ("tutorial.md", "24 KB"): "arithmetic: 103,386 - 79,059 bytes, both quoted beside it",
    ("tutorial.md", "70%"): "arithmetic: the peak-to-mean 1.703, quoted beside it",
    ("tutorial.md", "87,552 bytes"): "arithmetic: 103,386 - 15,834 bytes, both quoted beside it",
}


def _whole_pages() -> list[tuple[str, str]]:
    """(page, text) of the README and every docs page the whole-number scan reads."""
    pages = [("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))]
    for path in sorted(DOCS.rglob("*.md")):
        page = path.relative_to(DOCS).as_posix()
        if page not in WHOLE_NOT_SCANNED:
            pages.append((page, path.read_text(encoding="utf-8")))
    return pages


@functools.cache
def _sources() -> Sources:
    """The committed results, each read once for all the whole-figure tests."""
    return Sources(ROOT / "results")


def _allowed(figure: WholeFigure) -> bool:
    return ((figure.page, figure.text) in WHOLE_NOT_FROM_A_RESULT
            or ("*", figure.text) in WHOLE_NOT_FROM_A_RESULT)


def test_every_whole_figure_comes_from_a_committed_result() -> None:
    """A whole number with a unit in the docs or the README ("about 4 minutes", "6 GB",
    "1,000 keys", "229x") is printed by a committed result it may quote, or is exempt by
    one of the scan's rules (code, a citation, a bound, the cost model, a test's set-up),
    or is listed, with why, in WHOLE_NOT_FROM_A_RESULT."""
    sources = _sources()
    stale = [figure for page, text in _whole_pages()
             for figure in unsourced(page, text, sources) if not _allowed(figure)]
    assert not stale, "whole figures no committed result gives:\n" + "\n".join(
        f"{'' if f.page == 'README.md' else 'docs/'}{f.page}:{f.line}: {f.text} "
        f"(may quote: {', '.join(f.sources) or 'no result named'})" for f in stale)


def test_the_whole_figure_scan_reads_the_docs() -> None:
    """The scan finds the docs' figures and checks most against results, and each entry
    of WHOLE_NOT_FROM_A_RESULT still names a figure that needs it (none left stale)."""
    sources = _sources()
    figures = [figure for page, text in _whole_pages()
               for figure in figures_of(page, text, sources.results)]
    checked = [f for f in figures if not f.exempt and (f.sources or f.measured)]
    assert len(figures) > 300 and len(checked) > 150  # 465 and 228 today
    needed = {(f.page, f.text) for page, text in _whole_pages()
              for f in unsourced(page, text, sources)}
    unused = [key for key in WHOLE_NOT_FROM_A_RESULT
              if key not in needed and not (key[0] == "*" and key[1] in {t for _, t in needed})]
    assert not unused, f"allowed figures the docs no longer state unsourced: {unused}"


def test_the_known_stale_run_time_is_caught() -> None:
    """The scenario table once gave the 6 GB process's run as "about 4 minutes on a busy
    machine"; its committed result records 110.3 s, so that wording fails the scan."""
    page = "guide/scenarios.md"
    text = (DOCS / page).read_text(encoding="utf-8")
    quoted = "the committed run took 110.3 s with a peak resident set of 1,732.04 MiB"
    assert quoted in text
    sources = _sources()
    assert not unsourced(page, text, sources)
    stale = text.replace(quoted, "a run of about 4 minutes on a busy machine")
    assert [f.text for f in unsourced(page, stale, sources)] == ["4 minutes"]
