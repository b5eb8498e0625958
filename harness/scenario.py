"""Scenario files (TOML): what ring to build, which keys to route, what to measure.

`load_scenario(path)` parses and validates the whole file before any work
starts; every problem is a `ScenarioError` naming the file, the field, what
was expected and what was received. The format is documented in README.md
and `scenarios/default.toml` is a fully commented example.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from harness.constructions import CONSTRUCTIONS
from harness.errors import ScenarioError
from harness.generator import DEFAULT_POINT_NAME, Server
from harness.hashing import HASHES
from harness.layouts import LAYOUTS
from harness.peers import PEERS
from harness.ring import MAX_SERVERS
from harness.toml_fields import Fields

FORMAT_VERSION = 1
METRICS = ("balance", "collisions", "movement", "memory", "throughput")
#: metrics measured on built layouts (the others are measured on the ring itself)
LAYOUT_METRICS = ("memory", "throughput")
DISTRIBUTIONS = ("uniform", "zipf")
OPERATIONS = ("add", "remove")


@dataclass(frozen=True)
class ServerSpec:
    name: str
    weight: float = 1.0
    capabilities: tuple[str, ...] = ()

    def server(self) -> Server:
        return Server(self.name, self.weight)


POINTS = "points"  # the generic generator: naming scheme x hash x points per weight


@dataclass(frozen=True)
class GeneratorSpec:
    #: "points", or a production construction (harness.constructions) that fixes the rest
    construction: str = POINTS
    hash: str = "blake2b-32"
    point_name: str = DEFAULT_POINT_NAME
    #: one value, or several to sweep
    points_per_weight: tuple[int, ...] = (160,)
    #: only servers holding all these capabilities are on the ring
    requires: tuple[str, ...] = ()

    @property
    def bits(self) -> int:
        # Every construction so far builds a 32-bit ring.
        return HASHES[self.hash].bits if self.construction == POINTS else 32


@dataclass(frozen=True)
class KeysSpec:
    count: int = 200_000
    name: str = "key-{i}"
    distribution: str = "uniform"
    #: zipf only: popularity of the key of rank r is proportional to r**-zipf_exponent
    zipf_exponent: float = 1.0
    #: zipf only: number of distinct keys requests are drawn from
    universe: int = 100_000
    seed: int = 1


@dataclass(frozen=True)
class Operation:
    kind: str
    server: str
    weight: float = 1.0


@dataclass(frozen=True)
class MeasureSpec:
    layouts: tuple[str, ...]
    metrics: tuple[str, ...] = METRICS
    #: timed rounds per layout, after one warm-up round
    repeats: int = 5
    #: keys per round of the scalar (Python loop) timing
    scalar_keys: int = 20_000
    #: layout that ratio columns compare against
    base_layout: str = "numpy-aligned"
    #: third-party ring libraries measured beside the layouts (harness.peers)
    peers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    path: str
    sha256: str
    servers: tuple[ServerSpec, ...]
    generator: GeneratorSpec
    keys: KeysSpec
    measure: MeasureSpec
    operations: tuple[Operation, ...] = field(default=())

    def ring_servers(self) -> list[Server]:
        """The servers on the ring: those with every required capability."""
        need = set(self.generator.requires)
        return [s.server() for s in self.servers if need <= set(s.capabilities)]


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; raise ScenarioError on the first problem."""
    path = Path(path)
    file = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{file}: cannot read scenario file ({exc.strerror})") from None
    try:
        document = tomllib.loads(raw.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{file}: not valid TOML: {exc}") from None
    return parse_scenario(document, file, hashlib.sha256(raw).hexdigest())


def parse_scenario(document: dict[str, object], file: str, sha256: str = "") -> Scenario:
    top = Fields(file, "", document)
    top.take_int("format_version", FORMAT_VERSION, minimum=FORMAT_VERSION, maximum=FORMAT_VERSION)
    name = top.take_str("name", Path(file).stem, check=_check_file_name)
    description = top.take_str("description", name)
    servers = _servers(top.take_table("servers"))
    generator = _generator(top.take_table("generator"))
    keys = _keys(top.take_table("keys"))
    measure = _measure(top.take_table("measure"), generator.bits)
    operations = tuple(_operation(t) for t in top.take_table_list("operations"))
    top.finish()
    scenario = Scenario(name, description, file, sha256, servers, generator, keys, measure,
                        operations)
    _check_consistency(scenario, top)
    return scenario


def _check_file_name(value: str) -> str | None:
    ok = value.replace("-", "").replace("_", "").replace(".", "").isalnum()
    return None if ok else "letters, digits, '-', '_' or '.' (it names the result files)"


def _check_template(*placeholders: str) -> object:
    def check(value: str) -> str | None:
        try:
            value.format(**{p: 0 for p in placeholders})
        except (KeyError, IndexError, ValueError):
            return "a name template using only " + ", ".join(f"{{{p}}}" for p in placeholders)
        return None

    return check


def _servers(table: Fields) -> tuple[ServerSpec, ...]:
    if table.has("list") == table.has("count"):
        raise ScenarioError(
            f"{table.file}: servers needs either count (with name and weight) or list, "
            f"not {'both' if table.has('list') else 'neither'}"
        )
    if table.has("count"):
        count = table.take_int("count", minimum=1, maximum=MAX_SERVERS)
        template = table.take_str("name", "server-{i}", check=_check_template("i"))  # type: ignore[arg-type]
        weight = table.take_number("weight", 1.0)
        table.finish()
        return tuple(ServerSpec(template.format(i=i), weight) for i in range(count))
    specs = []
    for item in table.take_table_list("list"):
        specs.append(ServerSpec(
            item.take_str("name"),
            item.take_number("weight", 1.0),
            item.take_str_list("capabilities", []),
        ))
        item.finish()
    table.finish()
    if not specs or len(specs) > MAX_SERVERS:
        raise table.error("list", f"1 to {MAX_SERVERS} servers (owners are 16-bit)", len(specs))
    names = [s.name for s in specs]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise table.error("list", "servers with distinct names", duplicate)
    return tuple(specs)


def _generator(table: Fields) -> GeneratorSpec:
    construction = table.take_choice("construction", [POINTS, *CONSTRUCTIONS], POINTS)
    if construction != POINTS:
        for key in ("hash", "point_name", "points_per_weight"):
            if table.has(key):
                raise table.error(
                    key, f"left out: construction {construction!r} fixes its own points "
                    "and hash", table.table[key]
                )
    spec = GeneratorSpec(
        construction=construction,
        hash=table.take_choice("hash", sorted(HASHES), "blake2b-32"),
        point_name=table.take_str("point_name", DEFAULT_POINT_NAME,
                                  check=_check_template("server", "j")),  # type: ignore[arg-type]
        points_per_weight=table.take_int_or_list("points_per_weight", 160, maximum=10**8),
        requires=table.take_str_list("requires", []),
    )
    table.finish()
    return spec


def _keys(table: Fields) -> KeysSpec:
    spec = KeysSpec(
        count=table.take_int("count", 200_000, minimum=1, maximum=10**9),
        name=table.take_str("name", "key-{i}", check=_check_template("i")),  # type: ignore[arg-type]
        distribution=table.take_choice("distribution", DISTRIBUTIONS, "uniform"),
        zipf_exponent=table.take_number("zipf_exponent", 1.0),
        universe=table.take_int("universe", 100_000, minimum=1, maximum=10**9),
        seed=table.take_int("seed", 1, minimum=0),
    )
    table.finish()
    return spec


def _measure(table: Fields, bits: int) -> MeasureSpec:
    fitting = [name for name, cls in LAYOUTS.items() if cls.hash_bits == bits]
    layouts = table.take_str_list("layouts", fitting, choices=list(LAYOUTS))
    for name in layouts:
        if LAYOUTS[name].hash_bits != bits:
            raise table.error(
                "layouts", f"layouts that store {bits}-bit hashes ({', '.join(fitting)})", name
            )
    metrics = table.take_str_list("metrics", list(METRICS), choices=METRICS)
    # Balance, collisions and movement are measured on the ring itself, so they need no
    # layout: this is how 64-bit rings (which no layout stores yet) are measured.
    if not layouts and set(metrics) & set(LAYOUT_METRICS):
        raise table.error("layouts", "at least one layout when measuring "
                          + " or ".join(LAYOUT_METRICS), [])
    spec = MeasureSpec(
        layouts=layouts,
        metrics=metrics,
        repeats=table.take_int("repeats", 5, minimum=1, maximum=1000),
        scalar_keys=table.take_int("scalar_keys", 20_000, minimum=1),
        base_layout=table.take_choice(
            "base_layout", layouts or [""],
            "numpy-aligned" if "numpy-aligned" in layouts else (layouts or [""])[0],
        ),
        peers=table.take_str_list("peers", [], choices=list(PEERS)),
    )
    table.finish()
    return spec


def _operation(table: Fields) -> Operation:
    operation = Operation(
        kind=table.take_choice("kind", OPERATIONS),
        server=table.take_str("server"),
        weight=table.take_number("weight", 1.0),
    )
    table.finish()
    return operation


def _check_consistency(scenario: Scenario, top: Fields) -> None:
    names = {s.name for s in scenario.servers}
    on_ring = scenario.ring_servers()
    if not on_ring:
        raise ScenarioError(
            f"{top.file}: generator.requires must leave at least one server on the ring "
            f"(got {list(scenario.generator.requires)!r}, which no server has in full)"
        )
    for i, op in enumerate(scenario.operations):
        field_name = f"operations[{i}].server"
        if op.kind == "remove" and op.server not in {s.name for s in on_ring}:
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
    if any(op.kind == "add" for op in scenario.operations) and len(on_ring) >= MAX_SERVERS:
        raise ScenarioError(f"{top.file}: operations need room for one more server "
                            f"(at most {MAX_SERVERS - 1} servers on the ring)")
