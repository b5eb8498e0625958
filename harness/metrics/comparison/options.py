"""`[comparison]`: which fleets, which algorithm recipes and which peers to set side by side.

Read and checked when the scenario loads, before any work: fleet sizes,
weight patterns, algorithm names (and each recipe's parameters, checked by
the algorithm itself) and peer names; every problem is one line naming the
field (`comparison.servers`, `comparison.algorithms[2].name`, ...).

Recipes default to every registered algorithm (`harness.recipes.algorithms.ALGORITHMS`,
plugins included) with its default parameters, but for those that set
`compared_by_default = False` (the client families routed in plain Python); an
algorithm whose structure has layouts (the ring) is measured in `DEFAULT_LAYOUTS`:
`cffi-packed`, the classic ring (a sorted array of 6-byte entries searched in C), and
`bucketed`, the smallest per entry (4 bytes, plus a fixed
256 KiB of bucket offsets that small rings pay in full).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.ring import MAX_SERVERS
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.peers import PEERS

#: the layouts an algorithm with layouts (the ring) is compared in, unless recipes are listed
DEFAULT_LAYOUTS = ("cffi-packed", "bucketed")
#: the largest weight of a pattern (weights multiply points: 160 per unit for the ring)
MAX_WEIGHT = 1_000


@dataclass(frozen=True)
class RecipeSpec:
    """One algorithm with checked parameters (defaults filled in), and its table label."""

    algorithm: str
    params: dict[str, Any]
    label: str


@dataclass(frozen=True)
class FleetSpec:
    """One fleet measured: its size and weight pattern, and the keys it is measured with."""

    servers: int
    weights: tuple[float, ...]
    #: the first `keys` uniform keys and `zipf_requests` zipf requests of the table's
    keys: int
    zipf_requests: int
    parity_keys: int
    peers: tuple[str, ...]


@dataclass(frozen=True)
class ComparisonOptions:
    #: fleet sizes, each measured with every weight pattern
    servers: tuple[int, ...]
    #: weight patterns, repeated over a fleet's servers: (1,) equal, (1, 2, 5) ...
    weights: tuple[tuple[float, ...], ...]
    recipes: tuple[RecipeSpec, ...]
    peers: tuple[str, ...]
    #: server names: host:port text, as the memcached peers are configured
    name: str = "10.0.{i}.1:11211"
    #: uniform keys routed by every recipe (balance, weight shares, movement)
    keys: int = 200_000
    #: zipf requests (popularity rank**-zipf_exponent over zipf_universe keys)
    zipf_requests: int = 200_000
    zipf_universe: int = 100_000
    zipf_exponent: float = 1.0
    #: timed rounds (after one warm-up round), also the number of builds timed
    repeats: int = 3
    #: keys per round of a scalar (Python loop) timing, and per batch timing
    scalar_keys: int = 5_000
    batch_keys: int = 50_000
    #: keys checked against each recipe's reference (the C paths against plain Python)
    parity_keys: int = 500
    #: keys each peer is asked for its agreement, and per round of its scalar timing
    #: (pure-Python peers are slow: pymemcache scores every server in Python)
    peer_keys: int = 1_000
    peer_timing_keys: int = 200
    #: memray, one fresh process per recipe and peer (the slowest part)
    memory: bool = True
    seed: int = 1
    #: fleets measured after servers x weights, each with its own keys and peers (a
    #: fleet of 10,000 servers cannot afford what one of 100 can: rendezvous scores every
    #: server for every key)
    extra_fleets: tuple[FleetSpec, ...] = ()

    @property
    def fleets(self) -> tuple[FleetSpec, ...]:
        """Every fleet, in the order measured: servers x weights, then `extra_fleets`."""
        crossed = tuple(FleetSpec(count, pattern, self.keys, self.zipf_requests,
                                  self.parity_keys, self.peers)
                        for count in self.servers for pattern in self.weights)
        return crossed + self.extra_fleets


def recipe_label(algorithm: str, params: dict[str, Any]) -> str:
    """How a recipe is named in tables: "ring k=160 cffi-packed", "maglev M=65,537", "jump"."""
    parts = [algorithm]
    label = get_algorithm(algorithm).label_for(params)
    if label and label != algorithm:
        parts.append(label)
    if "layout" in params:
        parts.append(str(params["layout"]))
    return " ".join(parts)


def _recipe(fields: Fields) -> RecipeSpec:
    name = fields.take_choice("name", list(ALGORITHMS))
    params = get_algorithm(name).parse_params(fields)
    fields.finish()
    if params.get("layout") == "none":
        raise fields.error("layout", "a layout (the comparison measures a physical form)",
                           "none")
    return RecipeSpec(name, params, recipe_label(name, params))


def default_recipes(file: str, path: str = "comparison.algorithms",
                    layouts: tuple[str, ...] = DEFAULT_LAYOUTS) -> list[RecipeSpec]:
    """Every registered algorithm with default parameters; the ring in `layouts`.
    An algorithm that has no defaults (a plugin with required parameters) is left out."""
    recipes = []
    for name in ALGORITHMS:
        if not getattr(ALGORITHMS[name], "compared_by_default", True):
            continue  # a client family in plain Python (modulo, rendezvous-score): named only
        try:
            defaults = _recipe(Fields(file, path, {"name": name}))
        except ScenarioError:
            continue
        if "layout" not in defaults.params:
            recipes.append(defaults)
            continue
        for layout in layouts:
            try:
                recipes.append(_recipe(Fields(file, path, {"name": name, "layout": layout})))
            except ScenarioError:
                continue  # a layout this algorithm's defaults cannot take
    return recipes


def take_recipes(table: Fields, layouts: tuple[str, ...] = DEFAULT_LAYOUTS) -> list[RecipeSpec]:
    """`algorithms`: a list of names or tables of a name and parameters, each checked by its
    algorithm, all distinct; absent, every registered algorithm (`default_recipes`)."""
    if not table.has("algorithms"):
        return default_recipes(table.file, table.field("algorithms"), layouts)
    expected = ("a non-empty list of algorithm names or tables such as "
                "{ name = \"ring\", layout = \"bucketed\" }")
    listed = table.take_raw("algorithms", expected=expected)
    if not isinstance(listed, list) or not listed:
        raise table.error("algorithms", expected, listed)
    recipes = []
    for i, item in enumerate(listed):
        path = table.field(f"algorithms[{i}]")
        recipes.append(_recipe(Fields(table.file, path,
                                      {"name": item} if isinstance(item, str) else item)))
    labels = [r.label for r in recipes]
    if len(set(labels)) != len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise table.error("algorithms", "distinct recipes", twice)
    return recipes


def _weight_patterns(table: Fields) -> tuple[tuple[float, ...], ...]:
    expected = (f"a non-empty list of weight patterns, each a non-empty list of numbers "
                f"from 0 (excluded) to {MAX_WEIGHT:,}, such as [[1], [1, 2, 5]]")
    value = table.take_raw("weights", [[1]], expected=expected)
    if not isinstance(value, list) or not value:
        raise table.error("weights", expected, value)
    patterns = []
    for i, pattern in enumerate(value):
        ok = isinstance(pattern, list) and pattern and all(
            isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w)
            and 0 < w <= MAX_WEIGHT for w in pattern)
        if not ok:
            raise table.error_at(table.field(f"weights[{i}]"), expected, pattern)
        patterns.append(tuple(float(w) for w in pattern))
    if len(set(patterns)) != len(patterns):
        raise table.error("weights", "distinct weight patterns", value)
    return tuple(patterns)


def _extra_fleets(table: Fields, options: ComparisonOptions) -> tuple[FleetSpec, ...]:
    """`[[comparison.fleets]]`: servers, weights (equal by default), and keys,
    zipf_requests, parity_keys and peers (the table's by default; keys and requests at most
    the table's, whose first ones they are)."""
    fleets = []
    for entry in table.take_table_list("fleets"):
        count = entry.take_int("servers", minimum=1, maximum=MAX_SERVERS - 1)
        patterns = _weight_patterns(entry)
        keys = entry.take_int("keys", options.keys, minimum=1, maximum=10**8)
        if keys > options.keys:
            raise entry.error("keys", f"at most comparison.keys ({options.keys:,}), whose "
                              "first keys these are", keys)
        requests = entry.take_int("zipf_requests", options.zipf_requests, minimum=1,
                                  maximum=10**8)
        if requests > options.zipf_requests:
            raise entry.error("zipf_requests", "at most comparison.zipf_requests "
                              f"({options.zipf_requests:,}), whose first requests these are",
                              requests)
        parity = entry.take_int("parity_keys", options.parity_keys, minimum=1, maximum=10**6)
        peers = entry.take_str_list("peers", list(options.peers), choices=list(PEERS))
        entry.finish()
        fleets += [FleetSpec(count, pattern, keys, requests, parity, peers)
                   for pattern in patterns]
    sizes = [(f.servers, f.weights) for f in (*options.fleets, *fleets)]
    if len(set(sizes)) != len(sizes):
        twice = next(s for s in sizes if sizes.count(s) > 1)
        raise table.error("fleets", "fleets distinct from each other and from servers x "
                          "weights", f"{twice[0]} servers at weights {list(twice[1])}")
    return tuple(fleets)


def parse_comparison(table: Fields) -> ComparisonOptions:
    """`[comparison]`: servers (fleet sizes), weights (patterns), algorithms (names, or
    tables of a name and parameters), peers, name, keys, zipf_requests, zipf_universe,
    zipf_exponent, repeats, scalar_keys, batch_keys, parity_keys, peer_keys,
    peer_timing_keys, memory, seed, and fleets (each with its own keys)."""
    # One server is added in the movement figures, so a fleet leaves room for it.
    servers = table.take_int_or_list("servers", minimum=1, maximum=MAX_SERVERS - 1)
    if len(set(servers)) != len(servers):
        raise table.error("servers", "distinct fleet sizes", list(servers))
    weights = _weight_patterns(table)
    recipes = take_recipes(table)
    options = ComparisonOptions(
        servers=servers, weights=weights, recipes=tuple(recipes),
        peers=table.take_str_list("peers", list(PEERS), choices=list(PEERS)),
        name=table.take_template("name", ComparisonOptions.name, "i"),
        keys=table.take_int("keys", ComparisonOptions.keys, minimum=1, maximum=10**8),
        zipf_requests=table.take_int("zipf_requests", ComparisonOptions.zipf_requests,
                                     minimum=1, maximum=10**8),
        zipf_universe=table.take_int("zipf_universe", ComparisonOptions.zipf_universe,
                                     minimum=1, maximum=10**8),
        zipf_exponent=table.take_number("zipf_exponent", ComparisonOptions.zipf_exponent),
        repeats=table.take_int("repeats", ComparisonOptions.repeats, minimum=1, maximum=1000),
        scalar_keys=table.take_int("scalar_keys", ComparisonOptions.scalar_keys, minimum=1,
                                   maximum=10**7),
        batch_keys=table.take_int("batch_keys", ComparisonOptions.batch_keys, minimum=1,
                                  maximum=10**8),
        parity_keys=table.take_int("parity_keys", ComparisonOptions.parity_keys, minimum=1,
                                   maximum=10**6),
        peer_keys=table.take_int("peer_keys", ComparisonOptions.peer_keys, minimum=1,
                                 maximum=10**6),
        peer_timing_keys=table.take_int("peer_timing_keys", ComparisonOptions.peer_timing_keys,
                                        minimum=1, maximum=10**6),
        memory=_take_bool(table, "memory", ComparisonOptions.memory),
        seed=table.take_int("seed", ComparisonOptions.seed, minimum=0),
    )
    options = replace(options, extra_fleets=_extra_fleets(table, options))
    table.finish()
    return options


def _take_bool(table: Fields, key: str, default: bool) -> bool:
    value = table.take_raw(key, default, expected="true or false")
    if not isinstance(value, bool):
        raise table.error(key, "true or false", value)
    return value
