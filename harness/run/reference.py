"""The scenario reference, generated from the code that validates scenarios.

Every key a scenario may hold is read by a `Fields.take_*` call, which names
the key, what its value must be and its default (`harness.core.fields`). This
module parses a corpus of scenarios with those calls recorded: the shipped
scenarios, plus specimens for the branches they leave out (servers listed or
generated, each table metric, each algorithm and construction). What was
recorded is the reference; `docs/reference/scenario.md` is its rendering, and
a test regenerates it and fails when the committed page differs, when
validation accepts a key the page lacks, or when the page lists a key that
validation refuses.

Regenerate the page with `python -m harness.run.reference docs/reference/scenario.md`.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.fields import FieldRecord, Fields, recording
from harness.core.native.foreign import HEADER
from harness.metrics.registry import get_metric, table_metrics
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.constructions import CONSTRUCTIONS
from harness.recipes.constructions.known_clients import OTHER_CLIENTS
from harness.run.scenario import parse_scenario

#: the scenario's own tables, in the order the page gives them, with what each is for;
#: each table metric's follow (`TABLES`)
OWN_TABLES: dict[str, str] = {
    "": "The top level of the file.",
    "servers": "The fleet: `count` servers named from a template, or a `list`.",
    "servers.list[]": "One server of `servers.list` (a `[[servers.list]]` entry).",
    "servers.weights": "Weights drawn per server, for a generated fleet (`count` with it).",
    "servers.capabilities": "Capabilities drawn per server, for a generated fleet.",
    "generator": "The ring's recipe: its construction and that construction's parameters.",
    "algorithm": "An algorithm other than the ring, and its parameters.",
    "keys": "The workload: how many keys, their names, and their distribution.",
    "measure": "What to measure: layouts, metrics, timing rounds, peers.",
    "measure.peers[]": "A foreign peer in `measure.peers`: a shared library behind the C "
                       "ABI, or a command behind the process protocol "
                       "([foreign peers](../guide/foreign-peers.md)).",
    "measure.peers[].routes_like": "The recipe of ours the peer claims to route like: a "
                                   "recipe's table, or a known client by name.",
    "operations[]": "One change to the fleet (an `[[operations]]` entry): which keys move.",
    "gate": "The thresholds `ring-harness gate` judges a change by: the largest ratio, new "
            "over old, each figure may reach ([gate your ring](../guide/gate-your-ring.md)).",
}

#: tables whose keys are free names, described since no key is declared
OWN_FREE_FORM: dict[str, str] = {
    "servers.capabilities": "any capability name, set to the share of servers (0 to 1) "
                            "drawn to hold it",
    "measure.peers[].routes_like": "`algorithm` (default `\"ring\"`) and that recipe's "
                                   "parameters, as in `[generator]` or `[algorithm]`; or "
                                   "`client`, a known client's name alone ("
                                   + ", ".join(f'`"{name}"`' for name in OTHER_CLIENTS)
                                   + "), standing for its recipe",
}

#: branches the shipped scenarios leave out, each a small valid scenario (a table metric
#: gives specimens of its own branches: `SPECIMENS`)
OWN_SPECIMENS: tuple[str, ...] = (
    # Keys that share a part, hashed by a regular expression's group.
    """
    [servers]
    count = 3
    [keys]
    name = "tenant-{part}/key-{i}"
    parts = 10
    part_distribution = "uniform"
    hash_part = "regex"
    hash_part_regex = "^tenant-([0-9]+)/"
    """,
    # A foreign library: any existing file passes validation (it is loaded at run time).
    "[servers]\ncount = 2\n[measure]\n"
    f'peers = [{{ library = "{HEADER}", name = "lib", params = "x", exact = false, '
    'timeout = 5, routes_like = { algorithm = "jump" } }]\n',
    """
    [servers]
    count = 4
    weight = 2
    [keys]
    distribution = "zipf"
    [[operations]]
    kind = "add"
    server = "new"
    """,
    """
    [servers]
    count = 6
    seed = 3
    weights = { values = [1, 2], shares = [1, 1] }
    capabilities = { pci = 0.5 }
    """,
    """
    [[servers.list]]
    name = "a"
    weight = 1
    capabilities = ["pci"]
    zone = "rack-1"
    [[servers.list]]
    name = "b"
    [generator]
    requires = []
    [[operations]]
    kind = "remove"
    server = "b"
    """,
    # A keyed hash with its key given (the SipHash paper's example key, no secret), in
    # every table that takes a ring's recipe.
    """
    [servers]
    count = 3
    [generator]
    hash = "siphash24-32"
    hash_key = "000102030405060708090a0b0c0d0e0f"
    [comparison]
    servers = [3]
    [[comparison.algorithms]]
    name = "ring"
    hash = "siphash24-32"
    hash_key = "000102030405060708090a0b0c0d0e0f"
    [removals]
    servers = 3
    [[removals.algorithms]]
    name = "ring"
    hash = "siphash24-32"
    hash_key = "000102030405060708090a0b0c0d0e0f"
    [equivalence]
    fleets = [{ servers = 3 }]
    [equivalence.against]
    points_per_weight = [1, 2]
    hash = "siphash24-32"
    hash_key = "000102030405060708090a0b0c0d0e0f"
    """,
    """
    [servers]
    count = 3
    [gate]
    ns_per_key = 1.2
    structure_bytes = 1.0
    bytes_per_entry = 1.0
    peak_build_bytes = 1.5
    cv = 1.05
    moved = 1.05
    """,
    """
    [servers]
    count = 3
    [algorithm]
    name = "bounded-load"
    hash = "siphash24-64"
    hash_key = "000102030405060708090a0b0c0d0e0f"
    """,
)

#: the table metrics' own entries (`Metric.reference`), in the order scenarios read them
_REFERENCES = [get_metric(name).reference for name in table_metrics()]
#: tables, in the order the page gives them, with what each is for
TABLES: dict[str, str] = {**OWN_TABLES,
                          **{k: v for ref in _REFERENCES for k, v in ref.tables.items()}}
#: tables read under two paths (a default recipe is checked as a table of its own)
ALIASES: dict[str, str] = {k: v for ref in _REFERENCES for k, v in ref.aliases.items()}
FREE_FORM: dict[str, str] = {**OWN_FREE_FORM,
                             **{k: v for ref in _REFERENCES for k, v in ref.free_form.items()}}
SPECIMENS: tuple[str, ...] = (*OWN_SPECIMENS, *(text for ref in _REFERENCES
                                                for text in ref.specimens))


@dataclass(frozen=True)
class Entry:
    """One key of one table, as the page shows it."""

    table: str
    key: str
    expected: tuple[str, ...]
    defaults: tuple[str, ...]
    required: bool
    #: the constructions or algorithms that take it ((): every recipe)
    recipes: tuple[str, ...] = ()


def corpus(root: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file name, document) for every shipped scenario and every specimen."""
    for path in sorted((root / "scenarios").rglob("*.toml")):
        yield str(path.relative_to(root)), tomllib.loads(path.read_text(encoding="utf-8"))
    for i, text in enumerate(SPECIMENS):
        yield f"specimen-{i}.toml", tomllib.loads(_dedent(text))


def _dedent(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines()) + "\n"


def recorded(documents: Sequence[tuple[str, dict[str, Any]]]) -> list[FieldRecord]:
    """Every key read while validating the documents, each of which must be valid."""
    with recording() as records:
        for file, document in documents:
            parse_scenario(document, file)
    return records


def page_keys(found: Sequence[Entry]) -> set[tuple[str, str]]:
    """(table, key) of every key the page lists, tables named as records name them."""
    return {(e.table, e.key) for e in found}


def listed(record: FieldRecord, keys: set[tuple[str, str]]) -> bool:
    """Whether the page covers a key validation read: listed, or in a free-form table."""
    table = ALIASES.get(record.table, record.table)
    return table in FREE_FORM or (table, record.key) in keys


def recipe_records() -> dict[tuple[str, str], list[FieldRecord]]:
    """The keys each construction (in `[generator]`) and each algorithm (in `[algorithm]`)
    declares, read from its parameter declarations with every default taken."""
    found: dict[tuple[str, str], list[FieldRecord]] = {}
    for name in CONSTRUCTIONS:
        with recording() as records:
            RingAlgorithm.parse_ring_params(Fields("reference", "generator",
                                                   {"construction": name}))
        found["generator", name] = records
    for name, algorithm in ALGORITHMS.items():
        if name == "ring":
            continue
        with recording() as records:
            algorithm.parse_params(Fields("reference", "algorithm", {}))
        found["algorithm", name] = records
    return found


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, dict) and not value:
        return "{}"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_shown(v)}" for k, v in value.items()) + " }"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:.1f}"
    return str(value)


def entries(records: Sequence[FieldRecord],
            by_recipe: dict[tuple[str, str], list[FieldRecord]]) -> list[Entry]:
    """One entry per (table, key): the expected texts and defaults seen, in order."""
    takers: dict[tuple[str, str], list[str]] = {}
    for (table, recipe), taken in by_recipe.items():
        for record in taken:
            takers.setdefault((table, record.key), []).append(recipe)
    merged: dict[tuple[str, str], list[FieldRecord]] = {}
    for record in [*records, *(r for taken in by_recipe.values() for r in taken)]:
        table = ALIASES.get(record.table, record.table)
        merged.setdefault((table, record.key), []).append(record)
    found = []
    for (table, key), seen in merged.items():
        if table in FREE_FORM:
            continue
        recipes = takers.get((table, key), [])
        every = {recipe for t, recipe in by_recipe if t == table}
        found.append(Entry(
            table, key,
            tuple(dict.fromkeys(r.expected for r in seen)),
            tuple(dict.fromkeys(r.shown_default if r.shown_default else f"`{_shown(r.default)}`"
                                for r in seen if not r.required)),
            all(r.required for r in seen),
            () if set(recipes) >= every else tuple(dict.fromkeys(recipes))))
    order = list(TABLES)
    return sorted(found, key=lambda e: (order.index(e.table) if e.table in order
                                        else len(order), e.table))


def build_entries(root: Path) -> list[Entry]:
    return entries(recorded(list(corpus(root))), recipe_records())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(found: Sequence[Entry]) -> str:
    lines = [
        "# Scenario reference",
        "",
        "Every table and key a scenario file may hold: what its value must be and its",
        "default. This page is generated from the declarations that validate scenarios",
        "(`python -m harness.run.reference docs/reference/scenario.md`); a test fails when",
        "it differs from what validation accepts. A key not listed here is refused, with",
        "an error naming the file, the key and the keys valid in its table. For what",
        "the tables mean and how they combine, see [Scenario files](../guide/scenarios.md).",
        "",
    ]
    tables = list(dict.fromkeys([*(t for t in TABLES), *(e.table for e in found)]))
    for table in tables:
        rows = [e for e in found if e.table == table]
        if not rows and table not in FREE_FORM:
            continue
        title = "Top level" if table == "" else f"`[{table.replace('[]', '')}]`" if (
            not table.endswith("[]")) else f"`[[{table[:-2]}]]`"
        lines += [f"## {title}", ""]
        if table in TABLES:
            lines += [TABLES[table], ""]
        if table in FREE_FORM:
            lines += [f"Keys: {FREE_FORM[table]}.", ""]
        if not rows:
            continue
        with_recipes = any(e.recipes for e in rows)
        header = "| key | value | default |" + (" taken by |" if with_recipes else "")
        lines += [header, "|---|---|---|" + ("---|" if with_recipes else "")]
        for e in rows:
            default = "required" if e.required else " or ".join(e.defaults) or "none"
            row = f"| `{e.key}` | {_cell('; or '.join(e.expected))} | {_cell(default)} |"
            if with_recipes:
                row += f" {', '.join(e.recipes) or 'all'} |"
            lines.append(row)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    root = Path(__file__).resolve().parents[2]
    page = render(build_entries(root))
    if not args:
        sys.stdout.write(page)
        return 0
    Path(args[0]).write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
