"""Scenario files (TOML): what ring to build, which keys to route, what to measure.

`load_scenario(path)` parses and validates the whole file before any work
starts; every problem is a `ScenarioError` naming the file, the field, what
was expected and what was received. Every key is read by a `Fields.take_*` call,
which also declares it: docs/reference/scenario.md is generated from those
declarations (`harness.run.reference`), and `scenarios/default.toml` is a fully
commented example.
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.redact import HIDDEN_KEY, without_keys
from harness.core.regex_cost import backtracking_problem
from harness.core.ring import MAX_SERVERS
from harness.core.safe_read import read_regular_file
from harness.core.servers import (
    WEIGHT_BOUNDS,
    Operation,
    Server,
    servers_after,
    servers_with,
)
from harness.core.workload import DISTRIBUTIONS, HASH_PARTS, KeysSpec
from harness.metrics.context import Settings
from harness.metrics.registry import (
    default_metrics,
    get_metric,
    metric_names,
    table_metrics,
)
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.algorithms.ring import NO_LAYOUT, RingAlgorithm, layouts_for
from harness.recipes.constructions import CONSTRUCTIONS
from harness.recipes.layouts import LAYOUTS
from harness.recipes.peers import PEERS
from harness.recipes.peers.foreign import ForeignPeerSpec, parse_foreign_peer
from harness.run.builtin import recorded_path
from harness.run.gate_table import GateThresholds, parse_gate

#: the version of the scenario file format (a result's format is `harness.core.model`'s)
SCENARIO_FORMAT_VERSION = 1
OPERATIONS = ("add", "remove")
#: a scenario is a few kilobytes of TOML; a larger file is a mistake (or /dev/zero)
MAX_SCENARIO_BYTES = 1 << 20


@dataclass(frozen=True)
class ServerSpec:
    name: str
    weight: float = 1.0
    capabilities: tuple[str, ...] = ()
    #: its rack or data centre, which replicas spread over; "" (none given): a zone of its own
    zone: str = ""

    def server(self) -> Server:
        return Server(self.name, self.weight)


@dataclass(frozen=True)
class Recipe:
    """One point of the sweep: an algorithm and its parameters, checked."""

    algorithm: str
    params: dict[str, Any]
    label: str


@dataclass(frozen=True)
class GeneratorSpec:
    """The ring's recipe as the scenario gives it: one set of ring parameters per sweep point."""

    #: ring parameters (construction, hash, point_name, points_per_weight) per sweep point
    sweep: tuple[dict[str, Any], ...]
    #: only servers holding all these capabilities are on the ring
    requires: tuple[str, ...] = ()
    #: a keyed hash's key: True when the scenario gave it, False when drawn for the run
    key_given: bool = False

    @property
    def construction(self) -> str:
        return str(self.sweep[0]["construction"])

    @property
    def points_per_weight(self) -> tuple[int, ...]:
        return tuple(p["points_per_weight"] for p in self.sweep if "points_per_weight" in p)


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm other than the ring (`[algorithm]`): its name and checked parameters."""

    name: str
    params: dict[str, Any]


@dataclass(frozen=True)
class MeasureSpec:
    #: the ring's layouts measured side by side (its forms)
    layouts: tuple[str, ...]
    metrics: tuple[str, ...] = field(default_factory=default_metrics)
    #: timed rounds per layout, after one warm-up round
    repeats: int = 5
    #: keys per round of the scalar (Python loop) timing
    scalar_keys: int = 20_000
    #: layout that ratio columns compare against
    base_layout: str = "numpy-aligned"
    #: third-party ring libraries measured beside the layouts (harness.recipes.peers)
    peers: tuple[str, ...] = ()
    #: foreign peers (a library behind the C ABI, or a command behind the process protocol)
    foreign_peers: tuple[ForeignPeerSpec, ...] = ()
    distribution: str = "uniform"
    #: an algorithm other than the ring is measured in its one form, named after it
    algorithm: str | None = None
    #: options of the metrics configured by their own table ([process], [migration])
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def forms(self) -> tuple[str, ...]:
        return self.layouts if self.algorithm is None else (self.algorithm,)

    @property
    def settings(self) -> Settings:
        return Settings(self.repeats, self.scalar_keys, self.distribution)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    #: as given, or relative to the current directory when inside it
    path: str
    sha256: str
    servers: tuple[ServerSpec, ...]
    generator: GeneratorSpec
    keys: KeysSpec
    measure: MeasureSpec
    operations: tuple[Operation, ...] = field(default=())
    #: None: the ring, as `[generator]` describes it
    algorithm: AlgorithmSpec | None = None
    #: `[gate]`: the thresholds `ring-harness gate` judges it by (None: the defaults)
    gate: GateThresholds | None = None

    def ring_servers(self) -> list[Server]:
        """The servers on the ring: those with every required capability."""
        return servers_with([s.server() for s in self.servers],
                            [s.capabilities for s in self.servers], self.generator.requires)

    def ring_zones(self) -> list[str]:
        """The zone of each server on the ring, in the same order (a server given none is a
        zone of its own, under its name)."""
        need = set(self.generator.requires)
        return [s.zone or s.name for s in self.servers if need <= set(s.capabilities)]

    def ring_capabilities(self) -> list[tuple[str, ...]]:
        """The capabilities of each server on the ring, in the same order."""
        need = set(self.generator.requires)
        return [s.capabilities for s in self.servers if need <= set(s.capabilities)]

    def recipes(self) -> list[Recipe]:
        """The sweep: the ring, held in the base layout, once per set of parameters; or the
        one algorithm `[algorithm]` names."""
        if self.algorithm is not None:
            cls = get_algorithm(self.algorithm.name)
            return [Recipe(self.algorithm.name, self.algorithm.params,
                           cls.label_for(self.algorithm.params))]
        recipes = []
        # With no layout to measure, the ring is routed by the reference on its own arrays.
        base = self.measure.base_layout if self.measure.layouts else NO_LAYOUT
        for params in self.generator.sweep:
            full = {**params, "layout": base}
            recipes.append(Recipe("ring", full, RingAlgorithm.label_for(full)))
        return recipes

    def as_record(self) -> dict[str, Any]:
        """The scenario as results echo it (defaults filled in)."""
        record = asdict(self)
        for key in ("path", "sha256"):
            record.pop(key)
        generator = record["generator"]
        generator.pop("key_given")
        sweep = generator.pop("sweep")
        generator.update({k: v for k, v in sweep[0].items() if k != "points_per_weight"})
        if "points_per_weight" in sweep[0]:
            generator["points_per_weight"] = [p["points_per_weight"] for p in sweep]
        for foreign in record["measure"]["foreign_peers"]:
            foreign.pop("recipe_params")  # the checked form of routes_like, for building it
            # A key there is always the scenario's own (none is drawn for a claim), whatever
            # the generator's key was.
            foreign["routes_like"] = without_keys(foreign["routes_like"],
                                                  f"{HIDDEN_KEY}: given in the scenario")
        if not record["measure"]["foreign_peers"]:
            # Results of scenarios without foreign peers read as they did before them.
            record["measure"].pop("foreign_peers")
        record["measure"].pop("distribution")
        record["measure"].pop("algorithm")
        # Results of scenarios that hash whole keys without parts read as they did before.
        keys = record["keys"]
        if not keys["parts"]:
            for key in ("parts", "part_distribution", "part_exponent"):
                keys.pop(key)
        if keys["hash_part"] == "whole":
            for key in ("hash_part", "hash_part_regex"):
                keys.pop(key)
        elif keys["hash_part"] == "tag":
            keys.pop("hash_part_regex")
        options = record["measure"].pop("options")
        record.update({name: options[name] for name in options})
        if self.algorithm is None:
            record.pop("algorithm")
        # The gate's thresholds judge runs; they change nothing a run measures.
        record.pop("gate")
        hidden = (f"{HIDDEN_KEY}: given in the scenario" if self.generator.key_given
                  else f"{HIDDEN_KEY}: drawn for this run")
        redacted: dict[str, Any] = without_keys(record, hidden)
        return redacted


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; raise ScenarioError on the first problem."""
    path = Path(path)
    file = str(path)
    raw = read_regular_file(path, MAX_SCENARIO_BYTES, "scenario file")
    try:
        document = tomllib.loads(raw.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{file}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{file}: arrays or tables nested too deeply to read; expected a "
                            "scenario (a few levels of tables)") from None
    return parse_scenario(document, file, hashlib.sha256(raw).hexdigest())


def parse_scenario(document: dict[str, object], file: str, sha256: str = "") -> Scenario:
    top = Fields(file, "", document)
    top.take_int("format_version", SCENARIO_FORMAT_VERSION, minimum=SCENARIO_FORMAT_VERSION,
                 maximum=SCENARIO_FORMAT_VERSION)
    name = top.take_str("name", Path(file).stem, check=_check_file_name,
                        expected="letters, digits, '-', '_' or '.', at most 200 bytes (it names "
                                 "the result files)",
                        shown_default="the file's name without .toml")
    description = top.take_str("description", name, shown_default="the name")
    servers = _servers(top.take_table("servers"))
    algorithm = _algorithm(top.take_table("algorithm"))
    if algorithm is not None and top.has("generator"):
        raise top.error("generator", f"left out: algorithm {algorithm.name!r} is not a ring "
                        "(its parameters go in [algorithm])", top.table["generator"])
    generator = _generator(top.take_table("generator"))
    keys = _keys(top.take_table("keys"))
    bits = RingAlgorithm.construction_of(generator.sweep[0]).bits
    measure = _measure(top.take_table("measure"), bits, keys.distribution,
                       None if algorithm is None else algorithm.name)
    operations = tuple(_operation(t) for t in top.take_table_list("operations"))
    gate = parse_gate(top.take_table("gate"))
    for metric_name in table_metrics():
        metric = get_metric(metric_name)
        if top.has(metric.table):
            measure.options[metric_name] = metric.parse_options(top.take_table(metric.table))
            if metric_name not in measure.metrics:
                measure = replace(measure, metrics=(*measure.metrics, metric_name))
    top.finish()
    scenario = Scenario(name, description, recorded_path(file), sha256, servers, generator,
                        keys, measure, operations, algorithm, gate)
    _check_consistency(scenario, top)
    return scenario


def _check_file_name(value: str) -> str | None:
    ok = value.replace("-", "").replace("_", "").replace(".", "").isalnum()
    if ok and len(value.encode()) > 200:
        return "at most 200 bytes (it names the result files)"
    return None if ok else "letters, digits, '-', '_' or '.' (it names the result files)"


def _servers(table: Fields) -> tuple[ServerSpec, ...]:
    if table.has("list") == table.has("count"):
        raise ScenarioError(
            f"{table.file}: servers needs either count (with name and weight) or list, "
            f"not {'both' if table.has('list') else 'neither'}"
        )
    if table.has("count"):
        count = table.take_int("count", minimum=1, maximum=MAX_SERVERS)
        template = table.take_template("name", "server-{i}", "i")
        names = [template.format(i=i) for i in range(count)]
        if len(set(names)) != count:  # the template rule makes names injective; say so if not
            raise table.error("name", "a template giving each server its own name", template)
        zones = _zones(table)
        if table.has("weights") or table.has("capabilities"):
            generated = generated_servers(table, names)
            table.finish()
            return _in_zones(generated, zones)
        weight = table.take_number("weight", 1.0, bounds=WEIGHT_BOUNDS)
        table.finish()
        return _in_zones(tuple(ServerSpec(name, weight) for name in names), zones)
    specs = []
    for item in table.take_table_list("list"):
        name = item.take_str("name")
        specs.append(ServerSpec(
            name,
            item.take_number("weight", 1.0, bounds=WEIGHT_BOUNDS),
            item.take_str_list("capabilities", []),
            item.take_str("zone", name, expected="a non-empty string: the server's rack or "
                          "data centre", shown_default="the server's name (a zone of its own)"),
        ))
        item.finish()
    table.finish()
    if not specs or len(specs) > MAX_SERVERS:
        raise table.error("list", f"1 to {MAX_SERVERS} servers (owners are 16-bit)", len(specs))
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise table.error("list", "servers with distinct names", spec.name)
        seen.add(spec.name)
    return tuple(specs)


def _zones(table: Fields) -> tuple[str, ...]:
    """`zones`: names given to generated servers in turn (server i in zone i mod len), as
    racks of equal size are filled; none (or []): each server a zone of its own."""
    zones = table.take_str_list("zones", [])
    if any(not z for z in zones) or len(set(zones)) != len(zones):
        raise table.error("zones", "a list of distinct non-empty zone names",
                          table.table["zones"])
    return zones


def _in_zones(specs: tuple[ServerSpec, ...], zones: tuple[str, ...]) -> tuple[ServerSpec, ...]:
    if not zones:
        return specs
    return tuple(replace(spec, zone=zones[i % len(zones)]) for i, spec in enumerate(specs))


def _algorithm(table: Fields) -> AlgorithmSpec | None:
    """`[algorithm]`: `name` (default "ring", described by `[generator]`) and the named
    algorithm's own parameters, checked by the algorithm."""
    name = table.take_choice("name", list(ALGORITHMS), "ring")
    if name == "ring":
        rest = table.take_rest()
        if rest:
            key = sorted(rest)[0]
            raise table.error(key, "left out: the ring's parameters go in [generator]",
                              rest[key])
        table.finish()
        return None
    params = get_algorithm(name).parse_params(table)
    table.finish()
    return AlgorithmSpec(name, params)


def generated_servers(table: Fields, names: list[str]) -> tuple[ServerSpec, ...]:
    """Servers drawn from stated distributions (seeded): `weights = { values = [...],
    shares = [...] }` (for example disk sizes as weights) and `capabilities = { name =
    share, ... }` (the share of servers holding each, drawn independently)."""
    rng = np.random.default_rng(table.take_int("seed", 1, minimum=0))
    weights = np.ones(len(names))
    if table.has("weights"):
        spec = table.take_table("weights")
        values = spec.take_raw("values", expected=f"a non-empty list of numbers from "
                                                  f"{WEIGHT_BOUNDS[0]:g} to {WEIGHT_BOUNDS[1]:g}")
        shares = spec.take_raw("shares", expected="as many non-negative numbers, the share "
                               "of servers drawn with each value")
        spec.finish()
        ok = (isinstance(values, list) and isinstance(shares, list) and values
              and len(values) == len(shares)
              and all(isinstance(v, int | float) and not isinstance(v, bool)
                      and WEIGHT_BOUNDS[0] <= v <= WEIGHT_BOUNDS[1] for v in values)
              and all(isinstance(p, int | float) and not isinstance(p, bool)
                      and math.isfinite(p) and p >= 0 for p in shares)
              and 0 < sum(shares) < math.inf)
        if not ok:
            raise table.error("weights", f"{{ values = [numbers from {WEIGHT_BOUNDS[0]:g} to "
                              f"{WEIGHT_BOUNDS[1]:g}], shares = [as many non-negative numbers, "
                              "of a finite positive sum] }", spec.table)
        probabilities = np.asarray(shares, dtype=np.float64) / sum(shares)
        weights = rng.choice(np.asarray(values, dtype=np.float64), size=len(names),
                             p=probabilities / probabilities.sum())
    held: list[list[str]] = [[] for _ in names]
    if table.has("capabilities"):
        spec = table.take_table("capabilities")
        for capability, share in sorted(spec.table.items()):
            if (isinstance(share, bool) or not isinstance(share, int | float)
                    or not 0 <= share <= 1):
                raise spec.error(capability, "a share between 0 and 1", share)
            for i in np.flatnonzero(rng.random(len(names)) < share):
                held[int(i)].append(capability)
        spec.take_rest()
        spec.finish()
    return tuple(ServerSpec(name, float(w), tuple(caps))
                 for name, w, caps in zip(names, weights, held, strict=True))


def _generator(table: Fields) -> GeneratorSpec:
    """The ring's parameters, checked by the ring itself, once per swept points_per_weight."""
    requires = table.take_str_list("requires", [])
    construction = table.take_choice("construction", list(CONSTRUCTIONS), "points")
    sweeps = any(p.name == "points_per_weight" for p in CONSTRUCTIONS[construction].params)
    sweep: tuple[int | None, ...] = (None,)
    if sweeps:
        sweep = table.take_int_or_list("points_per_weight", 160, maximum=10**8)
    rest = table.take_rest()
    if "layout" in rest:
        raise table.error("layout", "left out: layouts are listed in measure.layouts",
                          rest["layout"])
    params = []
    for ppw in sweep:
        values = {"construction": construction, **rest}
        if ppw is not None:
            values["points_per_weight"] = ppw
        fields = Fields(table.file, table.path, values)
        # The ring's own parameters: its layouts are measure.layouts, not a generator key.
        parsed = RingAlgorithm.parse_ring_params(fields)
        fields.finish()
        params.append(parsed)
    table.finish()
    return GeneratorSpec(tuple(params), requires, key_given="hash_key" in rest)


def _keys(table: Fields) -> KeysSpec:
    distribution = table.take_choice("distribution", DISTRIBUTIONS, "uniform")
    count = table.take_int("count", 200_000, minimum=1, maximum=10**9)
    # Read before the template, whose {part} field it requires.
    parts = table.take_int("parts", 0, minimum=0, maximum=10**8,
                           expected="0 (no {part} field) or the distinct parts that fill "
                                    "the name's {part} field, at most 100,000,000")
    spec = KeysSpec(
        count=count,
        name=table.take_template("name", "key-{i}", *(("i", "part") if parts else ("i",))),
        distribution=distribution,
        zipf_exponent=table.take_number("zipf_exponent", 1.0),
        universe=table.take_int("universe", 100_000, minimum=1, maximum=10**9),
        seed=table.take_int("seed", 1, minimum=0),
        parts=parts,
        part_distribution=table.take_choice("part_distribution", DISTRIBUTIONS, "uniform"),
        part_exponent=table.take_number("part_exponent", 1.0),
        hash_part=table.take_choice("hash_part", HASH_PARTS, "whole"),
        hash_part_regex=_hash_part_regex(table),
    )
    if distribution == "uniform":
        for key in ("zipf_exponent", "universe"):
            if table.has(key):
                raise table.error(key, "left out: it applies to distribution = 'zipf' only",
                                  table.table[key])
    if not parts:
        for key in ("part_distribution", "part_exponent"):
            if table.has(key):
                raise table.error(key, "left out: it applies when parts is given",
                                  table.table[key])
    if spec.part_distribution == "uniform" and table.has("part_exponent"):
        raise table.error("part_exponent", "left out: it applies to part_distribution = "
                          "'zipf' only", table.table["part_exponent"])
    if (spec.hash_part == "regex") != bool(spec.hash_part_regex):
        raise table.error("hash_part_regex",
                          "given exactly when hash_part = 'regex'" if spec.hash_part == "regex"
                          else "left out: it applies to hash_part = 'regex' only",
                          table.table.get("hash_part_regex", ""))
    table.finish()
    return spec


#: what `hash_part_regex` must be
ONE_GROUP_REGEX = ("a Python regular expression with exactly one group, the part of the key "
                   "that is hashed")


def _hash_part_regex(table: Fields) -> str:
    """`hash_part_regex`: a pattern that compiles with exactly one group, or "" if absent."""
    value = table.take_raw("hash_part_regex", "", expected=ONE_GROUP_REGEX,
                           shown_default="none")
    if value == "" and not table.has("hash_part_regex"):
        return ""
    if not isinstance(value, str) or not value:
        raise table.error("hash_part_regex", ONE_GROUP_REGEX, value)
    try:
        groups = re.compile(value).groups
    except (re.error, RecursionError, OverflowError, ValueError):
        raise table.error("hash_part_regex", ONE_GROUP_REGEX + " (it does not compile)",
                          value) from None
    if groups != 1:
        raise table.error("hash_part_regex", f"{ONE_GROUP_REGEX} (it has {groups})", value)
    # Exponential backtracking no budget can price is refused; the rest is priced
    # (workload.key_seconds).
    problem = backtracking_problem(value)
    if problem:
        raise table.error("hash_part_regex", f"{ONE_GROUP_REGEX}, with {problem}", value)
    return value


def _measure(table: Fields, bits: int, distribution: str, algorithm: str | None) -> MeasureSpec:
    fitting = layouts_for(bits)
    if algorithm is not None:
        # Layouts are the ring's forms; another algorithm is measured as it is.
        if table.has("layouts") or table.has("base_layout"):
            key = "layouts" if table.has("layouts") else "base_layout"
            raise table.error(key, f"left out: algorithm {algorithm!r} has no layouts",
                              table.table[key])
        fitting = []
    layouts = table.take_str_list("layouts", fitting, choices=list(LAYOUTS),
                                  shown_default="every layout of the ring's hash width")
    for name in layouts:
        if LAYOUTS[name].hash_bits != bits:
            raise table.error(
                "layouts", f"layouts that store {bits}-bit hashes ({', '.join(fitting)})", name
            )
    # Whether this machine can run them (counts needs valgrind) is run's question, not the
    # file's: harness.run.machine_check.
    metrics = table.take_str_list("metrics", list(default_metrics()),
                                  choices=list(metric_names()))
    # Some metrics are measured on the algorithm itself and need no layout: this is how
    # rings too large for a layout are measured.
    on_forms = [m for m in metrics if "forms" in get_metric(m).needs]
    if not layouts and on_forms and algorithm is None:
        raise table.error("layouts", "at least one layout when measuring "
                          + " or ".join(on_forms), [])
    peers, foreign = _peers(table, layouts)
    if foreign and "foreign" not in metrics:
        # A foreign peer's own figures (pipe and self-timed, PSS) come with it.
        metrics = (*metrics, "foreign")
    spec = MeasureSpec(
        layouts=layouts,
        metrics=metrics,
        repeats=table.take_int("repeats", 5, minimum=1, maximum=1000),
        scalar_keys=table.take_int("scalar_keys", 20_000, minimum=1),
        base_layout=algorithm if algorithm is not None else table.take_choice(
            "base_layout", layouts or [fitting[0]],
            "numpy-aligned" if "numpy-aligned" in layouts else (layouts or fitting)[0],
            described=("one of the measured layouts",
                       "numpy-aligned if measured, else the first measured layout"),
        ),
        peers=peers,
        foreign_peers=foreign,
        distribution=distribution,
        algorithm=algorithm,
    )
    table.finish()
    return spec


PEERS_EXPECTED = ("a list of peer names (" + ", ".join(PEERS) + ") or foreign peer tables "
                  "({ library = ... } or { command = [...] })")


def _peers(table: Fields, forms: tuple[str, ...]) -> tuple[tuple[str, ...],
                                                           tuple[ForeignPeerSpec, ...]]:
    """Peers by name (our registry) and foreign peers (tables), each name used once."""
    listed = table.take_raw("peers", [], expected=PEERS_EXPECTED)
    if not isinstance(listed, list):
        raise table.error("peers", PEERS_EXPECTED, listed)
    names: list[str] = []
    foreign: list[ForeignPeerSpec] = []
    for i, item in enumerate(listed):
        where = f"{table.field('peers')}[{i}]"
        if isinstance(item, str):
            if item not in PEERS:
                raise table.error_at(where, "a peer name from " + ", ".join(PEERS), item)
            names.append(item)
        elif isinstance(item, dict):
            foreign.append(parse_foreign_peer(Fields(table.file, where, item)))
        else:
            raise table.error_at(where, "a peer name or a foreign peer table", item)
    seen = set(forms)
    for i, name in enumerate([*names, *(spec.name for spec in foreign)]):
        if name in seen:
            raise table.error_at(f"{table.field('peers')}[{i}]", "a peer whose name is "
                                 "unique among the peers and layouts (set its name)", name)
        seen.add(name)
    return tuple(names), tuple(foreign)


def _operation(table: Fields) -> Operation:
    operation = Operation(
        kind=table.take_choice("kind", OPERATIONS),
        server=table.take_str("server"),
        weight=table.take_number("weight", 1.0, bounds=WEIGHT_BOUNDS),
    )
    table.finish()
    return operation


def _check_consistency(scenario: Scenario, top: Fields) -> None:
    """Rules across sections, each asked of the component it belongs to, before any work."""
    names = {s.name for s in scenario.servers}
    on_ring = scenario.ring_servers()
    if not on_ring:
        raise ScenarioError(
            f"{top.file}: generator.requires must leave at least one server on the ring "
            f"(got {list(scenario.generator.requires)!r}, which no server has in full)"
        )
    on_ring_names = {s.name for s in on_ring}
    for i, op in enumerate(scenario.operations):
        field_name = f"operations[{i}].server"
        if op.kind == "remove" and op.server not in on_ring_names:
            raise ScenarioError(
                f"{top.file}: {field_name} must name a server on the ring to remove "
                f"(got {op.server!r})"
            )
        if op.kind == "add" and op.server in names:
            raise ScenarioError(
                f"{top.file}: {field_name} must be a new server name to add "
                f"(got {op.server!r}, already a server)"
            )
        if op.kind == "remove" and len(on_ring) == 1:
            raise ScenarioError(f"{top.file}: {field_name} would leave the ring empty")
    for recipe in scenario.recipes():
        algorithm = get_algorithm(recipe.algorithm)
        problem = algorithm.check_servers(on_ring, recipe.params)
        if problem:
            raise ScenarioError(f"{top.file}: servers must be {problem} for "
                                f"{recipe.algorithm} {recipe.label}")
        _check_metrics_apply(recipe.algorithm, scenario.measure.metrics, top)
        for i, op in enumerate(scenario.operations):
            # An algorithm that cannot measure a removal says why (jump: not the last).
            if op.kind == "remove":
                reason = algorithm.removal_problem(on_ring, op.server)
                if reason:
                    raise ScenarioError(f"{top.file}: operations[{i}].server must be a server "
                                        f"{recipe.algorithm} can remove: {reason}")
            problem = algorithm.check_servers(servers_after(on_ring, op), recipe.params)
            if problem:
                raise ScenarioError(f"{top.file}: operations[{i}] must leave servers that are "
                                    f"{problem} (got {op.kind} {op.server!r})")
    for metric_name, options in scenario.measure.options.items():
        get_metric(metric_name).check_scenario(scenario, options, top)
    for peer in scenario.measure.peers:
        problem = PEERS[peer].check_servers(on_ring)
        if problem:
            raise ScenarioError(f"{top.file}: servers must be {problem} for peer {peer!r}")
    for foreign in scenario.measure.foreign_peers:
        if foreign.routes_like is None:
            continue
        problem = get_algorithm(foreign.routes_like["algorithm"]).check_servers(
            on_ring, foreign.recipe_params)
        if problem:
            raise ScenarioError(f"{top.file}: servers must be {problem} for the recipe peer "
                                f"{foreign.name!r} routes like")


def _check_metrics_apply(name: str, metrics: tuple[str, ...], top: Fields) -> None:
    """An algorithm that a metric cannot measure says why (bounded-load: a migration, whose
    model gives every object one owner), as jump says which server it cannot remove."""
    algorithm = get_algorithm(name)
    for metric in metrics:
        reason = algorithm.metric_problem(metric)
        if not reason:
            continue
        if metric in table_metrics():
            raise ScenarioError(f"{top.file}: {metric} must be left out for {name}: {reason}")
        raise ScenarioError(f"{top.file}: measure.metrics must leave out {metric!r} for "
                            f"{name}: {reason}")
