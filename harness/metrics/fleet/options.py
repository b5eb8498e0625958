"""`[fleet]` and `[rollout]`, read and checked before any work.

    [fleet]
    data_centres = 20                # generated (or [[fleet.list]], each named)
    name = "dc-{i}"
    sizes = { values = [20, 60, 200], shares = [0.5, 0.3, 0.2] }   # servers per DC
    weights = { values = [1, 5, 25], shares = [0.5, 0.3, 0.2] }    # as [servers]
    capabilities = { pci = 0.5, video = 0.5 }                      # as [servers]
    eligibility = "combinations"     # as [process]: one ring per set, in every process
    bytes_per_entry = 8
    cache_objects = 1_000            # traffic and caches as [migration]
    universe = 200_000
    requests_per_window = 100_000

    [rollout]
    to = { points_per_weight = 16 }  # as [migration].to
    stages = [0.05, 0.25, 1.0]       # as [migration].stages, inside each data centre
    waves = [{ name = "canary", count = 1 }, { name = "10%", share = 0.1 }, ...]
    windows_per_stage = 2
    windows_between_waves = 6
    rollback = { wave = "50%", stage = 2 }

Data centres of one size share one draw of servers (seeded from the fleet's seed and
the size's index): they are the same shape, so they share one computation.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from harness.core.fields import Fields
from harness.core.ring import MAX_SERVERS

#: the most data centres a fleet may have (each is a row of the report)
MAX_DATA_CENTRES = 5_000
#: the most windows a rollout's timeline may have
MAX_WINDOWS = 2_000
WEIGHT_BOUNDS = (1e-3, 1e6)
DISTRIBUTION = ("{{ values = [{what}], shares = [as many non-negative numbers, of a finite "
                "positive sum] }}")
STAGES_EXPECTED = "rising shares in (0, 1] ending at 1, such as [0.01, 0.1, 0.5, 1]"
WAVE_EXPECTED = ("a table with name and one of count (data centres), share (of the fleet, "
                 "reached by the end of this wave) or data_centres (names)")


@dataclass(frozen=True)
class Distribution:
    """Values drawn with the given shares (normalised)."""

    values: tuple[float, ...]
    shares: tuple[float, ...]


@dataclass(frozen=True)
class Shape:
    """Data centres of one shape: their servers, drawn from these distributions."""

    servers: int
    weights: Distribution | None
    #: the share of servers holding each capability, drawn independently per server
    capabilities: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class DataCentre:
    name: str
    #: index into FleetOptions.shapes
    shape: int


@dataclass(frozen=True)
class FleetOptions:
    shapes: tuple[Shape, ...]
    data_centres: tuple[DataCentre, ...]
    seed: int = 1
    #: eligibility sets, as [process] reads them (empty: every combination present)
    eligibility: tuple[tuple[str, ...], ...] = ()
    bytes_per_entry: int = 8
    cache_objects: int = 1_000
    universe: int = 100_000
    zipf_exponent: float = 1.0
    requests_per_window: int = 50_000
    warmup_requests: int = 200_000
    #: "generated" or "listed" (the report says how the fleet was made)
    made: str = "generated"
    #: servers per data centre, with how many data centres drew each (generated fleets)
    drawn_sizes: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Wave:
    name: str
    #: data centres in this wave, by index in the fleet's order
    members: tuple[int, ...]


@dataclass(frozen=True)
class RolloutOptions:
    to: dict[str, Any] = field(default_factory=dict)
    stages: tuple[float, ...] = (0.05, 0.25, 1.0)
    #: as given, resolved against the fleet by the fleet metric
    waves: tuple[dict[str, Any], ...] = ()
    windows_per_stage: int = 1
    #: windows from one wave's start to the next's (0: when the last stage ends)
    windows_between_waves: int = 0
    #: windows kept after the last change, so that its misses settle
    windows_after: int = 2
    #: (wave name, stage): traffic goes back to the old ring after that stage
    rollback: tuple[str, int] | None = None


def _distribution(table: Fields, key: str, what: str, low: float, high: float,
                  integer: bool = False) -> Distribution:
    spec = table.take_table(key)
    values = spec.take_raw("values", expected=f"a non-empty list of {what}")
    shares = spec.take_raw("shares", expected="as many non-negative numbers")
    spec.finish()
    kind = int if integer else (int, float)
    ok = (isinstance(values, list) and isinstance(shares, list) and values
          and len(values) == len(shares)
          and all(isinstance(v, kind) and not isinstance(v, bool) and low <= v <= high
                  for v in values)
          and all(isinstance(p, int | float) and not isinstance(p, bool)
                  and math.isfinite(p) and p >= 0 for p in shares)
          and 0 < sum(shares) < math.inf)
    if not ok:
        raise table.error(key, DISTRIBUTION.format(what=what), spec.table)
    return Distribution(tuple(float(v) for v in values), tuple(float(p) for p in shares))


def _capabilities(table: Fields) -> tuple[tuple[str, float], ...]:
    spec = table.take_table("capabilities")
    found = []
    for capability, share in sorted(spec.table.items()):
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
            raise spec.error(capability, "a share between 0 and 1", share)
        found.append((capability, float(share)))
    spec.take_rest()
    spec.finish()
    return tuple(found)


def _weights(table: Fields) -> Distribution | None:
    if not table.has("weights"):
        table.take_raw("weights", {}, expected=DISTRIBUTION.format(what="server weights"))
        return None
    return _distribution(table, "weights", f"weights from {WEIGHT_BOUNDS[0]:g} to "
                         f"{WEIGHT_BOUNDS[1]:g}", *WEIGHT_BOUNDS)


def drawn_sizes(count: int, sizes: Distribution, seed: int) -> list[int]:
    """Servers per data centre for `count` generated data centres (seeded, numpy's PCG64)."""
    import numpy as np

    rng = np.random.default_rng([seed, 0xF1EE7])
    p = np.asarray(sizes.shares) / sum(sizes.shares)
    drawn = rng.choice(np.asarray(sizes.values), size=count, p=p / p.sum())
    return [int(v) for v in drawn]


def parse_fleet(table: Fields) -> FleetOptions:
    """`[fleet]`: generated (data_centres, name, sizes, weights, capabilities) or listed
    (list, each with name, servers, weights, capabilities); eligibility, bytes_per_entry
    and the traffic."""
    seed = table.take_int("seed", 1, minimum=0, maximum=2**63 - 1)
    if table.has("list") == table.has("data_centres"):
        raise table.error("data_centres", "either data_centres (a count, generated) or "
                          "list (data centres named one by one), not "
                          + ("both" if table.has("list") else "neither"),
                          table.table.get("data_centres"))
    shapes: list[Shape] = []
    centres: list[DataCentre] = []
    sizes_drawn: tuple[tuple[int, int], ...] = ()
    if table.has("data_centres"):
        count = table.take_int("data_centres", minimum=1, maximum=MAX_DATA_CENTRES)
        template = table.take_template("name", "dc-{i}", "i")
        sizes = _distribution(table, "sizes", f"server counts from 1 to {MAX_SERVERS}", 1,
                              MAX_SERVERS, integer=True)
        weights, capabilities = _weights(table), _capabilities(table)
        drawn = drawn_sizes(count, sizes, seed)
        by_size = {int(v): i for i, v in enumerate(sorted(set(drawn)))}
        shapes = [Shape(size, weights, capabilities) for size in sorted(by_size)]
        centres = [DataCentre(template.format(i=i), by_size[size])
                   for i, size in enumerate(drawn)]
        sizes_drawn = tuple((size, drawn.count(size)) for size in sorted(by_size))
        made = "generated"
    else:
        for item in table.take_table_list("list"):
            name = item.take_label("name")
            servers = item.take_int("servers", minimum=1, maximum=MAX_SERVERS)
            shapes.append(Shape(servers, _weights(item), _capabilities(item)))
            item.finish()
            centres.append(DataCentre(name, len(shapes) - 1))
        if not centres or len(centres) > MAX_DATA_CENTRES:
            raise table.error("list", f"1 to {MAX_DATA_CENTRES} data centres", len(centres))
        names = [c.name for c in centres]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise table.error("list", "data centres with distinct names", dup)
        made = "listed"
    eligibility: tuple[tuple[str, ...], ...] = ()
    expected = "'combinations' or a non-empty list of lists of capability names"
    if table.has("eligibility") and table.table["eligibility"] != "combinations":
        value = table.take_raw("eligibility", expected=expected)
        if not isinstance(value, list) or not value or not all(
                isinstance(s, list) and all(isinstance(c, str) for c in s) for s in value):
            raise table.error("eligibility", expected, value)
        eligibility = tuple(tuple(s) for s in value)
    else:
        table.take_choice("eligibility", ["combinations"], "combinations")
    options = FleetOptions(
        shapes=tuple(shapes), data_centres=tuple(centres), seed=seed, eligibility=eligibility,
        bytes_per_entry=table.take_int("bytes_per_entry", 8, minimum=1, maximum=64),
        cache_objects=table.take_int("cache_objects", 1_000, minimum=1, maximum=10**7),
        universe=table.take_int("universe", 100_000, minimum=1, maximum=10**7),
        zipf_exponent=table.take_number("zipf_exponent", 1.0, bounds=(0.01, 10.0)),
        requests_per_window=table.take_int("requests_per_window", 50_000, minimum=10,
                                           maximum=10**7),
        warmup_requests=table.take_int("warmup_requests", 200_000, minimum=0,
                                       maximum=10**8),
        made=made, drawn_sizes=sizes_drawn,
    )
    table.finish()
    return options


def _stages(table: Fields) -> tuple[float, ...]:
    stages = table.take_raw("stages", [0.05, 0.25, 1.0], expected=STAGES_EXPECTED)
    if (not isinstance(stages, list) or not stages
            or not all(isinstance(s, int | float) and not isinstance(s, bool) and 0 < s <= 1
                       for s in stages)
            or any(b <= a for a, b in itertools.pairwise(stages)) or stages[-1] != 1):
        raise table.error("stages", STAGES_EXPECTED, stages)
    return tuple(float(s) for s in stages)


def _wave(item: Fields) -> dict[str, Any]:
    name = item.take_label("name")
    given = [k for k in ("count", "share", "data_centres") if item.has(k)]
    if len(given) != 1:
        raise item.error("name", WAVE_EXPECTED, item.table)
    wave: dict[str, Any] = {"name": name}
    if given[0] == "count":
        wave["count"] = item.take_int("count", minimum=1, maximum=MAX_DATA_CENTRES)
    elif given[0] == "share":
        wave["share"] = item.take_number("share", bounds=(1e-9, 1.0))
    else:
        names = item.take_str_list("data_centres")
        if not names:
            raise item.error("data_centres", "a non-empty list of data centre names", names)
        wave["data_centres"] = list(names)
    item.finish()
    return wave


def parse_rollout(table: Fields) -> RolloutOptions:
    """`[rollout]`: to, stages, waves, windows_per_stage, windows_between_waves,
    windows_after, rollback."""
    to = table.take_raw("to", expected="a table of the new recipe's parameters (any key "
                        "of [generator], or of [algorithm] with algorithm naming another)")
    if not isinstance(to, dict) or not to or "peer" in to:
        raise table.error("to", "a non-empty table of the new recipe's parameters (a peer "
                          "cannot be rolled out across a fleet)", to)
    stages = _stages(table)
    waves = tuple(_wave(item) for item in table.take_table_list("waves"))
    if not waves:
        raise table.error("waves", "a non-empty list of waves, such as [{ name = \"canary\", "
                          "count = 1 }, { name = \"all\", share = 1.0 }]", [])
    names = [w["name"] for w in waves]
    if len(set(names)) != len(names):
        raise table.error("waves", "waves with distinct names",
                          next(n for n in names if names.count(n) > 1))
    rollback: tuple[str, int] | None = None
    if table.has("rollback"):
        spec = table.take_table("rollback")
        wave = spec.take_str("wave", check=lambda v: None if v in names else
                             "the name of a wave: " + ", ".join(repr(n) for n in names))
        stage = spec.take_int("stage", minimum=1, maximum=len(stages),
                              expected=f"a stage of the wave, 1 to {len(stages)}")
        spec.finish()
        rollback = (wave, stage)
    options = RolloutOptions(
        to=dict(to), stages=stages, waves=waves,
        windows_per_stage=table.take_int("windows_per_stage", 1, minimum=1, maximum=100),
        windows_between_waves=table.take_int("windows_between_waves", 0, minimum=0,
                                             maximum=MAX_WINDOWS),
        windows_after=table.take_int("windows_after", 2, minimum=1, maximum=100),
        rollback=rollback,
    )
    table.finish()
    return options
