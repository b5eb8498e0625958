"""What an algorithm costs in a run (`harness.core.cost.Cost`), from its own estimates.

A ring is its sorted arrays and its reference layout, held, and each measured layout
(`LayoutCost.cost`), built beside those built before it; before all that, its points are
generated, and released (`then`). An algorithm without a ring holds its reference and
one built form per measured form (`Algorithm.estimated_bytes`, at the fleet where it is
largest). The seconds of its lookups are priced by `Algorithm.estimated_seconds`
(`routing_cost`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from harness.core.cost import Cost, total
from harness.core.hashing import is_keyed
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.ring import NO_LAYOUT
from harness.recipes.constructions.client_traits import (
    GENERATION_BYTES_PER_POINT as TRAITS_BYTES_PER_POINT,
)
from harness.recipes.constructions.client_traits import (
    GENERATION_FIXED_BYTES as TRAITS_FIXED_BYTES,
)
from harness.recipes.constructions.generator import (
    GENERATION_BYTES_PER_POINT,
    PYTHON_GENERATION_BYTES_PER_POINT,
    parse_template,
)
from harness.recipes.constructions.points import uses_traits
from harness.recipes.layouts.costs import layout_cost

#: Cassandra's token allocator: the most bytes a token held while allocating (tracemalloc
#: peak, 103 to 752 per token over 100 x 16, 100 x 256, 300 x 64 and 50 x 1,536 nodes x
#: tokens), and CPU seconds per node and token of the ring each join reads (0.8 to 5.2 us
#: over the same fleets, the most at 1,536 tokens)
ALLOCATOR_BYTES_PER_TOKEN = 800
ALLOCATOR_SECONDS_PER_STEP = 6e-6
#: Cassandra's allocator for several copies (`replication_factor` above 1): tracemalloc peak
#: 1,158 to 2,446 bytes per token, and CPU seconds per node and token each join reads, per
#: copy and per 16 tokens a node, 2.2 to 4.2 us (100 x 16 and 200 x 16 at 3 copies, 100 x 16
#: at 2, 50 x 16 at 5; 30 x 64 and 20 x 256 at 3 took 14.8 and 58.5 us, 3.7 per 16 tokens;
#: 2 shared cores, load 4 to 6, 2026-12-05), priced with a margin of 1.5
REPLICATED_ALLOCATOR_BYTES_PER_TOKEN = 3_500
REPLICATED_ALLOCATOR_SECONDS_PER_STEP = 6.5e-6


def entries_of(name: str, params: dict[str, Any], fleets: Sequence[Sequence[Server]]) -> int:
    """Entries of its largest structure over the fleets it is measured on."""
    algorithm = get_algorithm(name)
    return max(algorithm.estimated_entries(fleet, params) for fleet in fleets)


def build_seconds(name: str, params: dict[str, Any], fleets: Sequence[Sequence[Server]]
                  ) -> tuple[float, str]:
    """Seconds one build of the recipe takes on the first of `fleets`
    (`Algorithm.estimated_build_seconds`), and what sets them."""
    return get_algorithm(name).estimated_build_seconds(fleets[0], params)


def generation_cost(params: dict[str, Any], entries: int, nodes: int = 1,
                    builds: int = 1) -> Cost:
    """Generating a ring's points: names C does not format, or a keyed hash (the C generator
    takes no key), are formatted by Python; a client's traits build by their own figures.
    Cassandra's token allocator places the nodes' tokens one node at a time, each step
    reading the whole ring so far: its seconds grow as nodes x entries (`builds` rings, one
    per fleet)."""
    if params.get("construction") == "points" and uses_traits(params):
        return Cost(peak=float(TRAITS_BYTES_PER_POINT * entries + TRAITS_FIXED_BYTES))
    copies = int(params.get("replication_factor", 1))
    if params.get("allocation") == "allocator" and copies > 1:
        # every candidate is scored each join, its walk visiting `copies` groups; a node of
        # more tokens re-scores more candidates while it places them
        per_node = entries / max(nodes, 1)
        return Cost(peak=float(REPLICATED_ALLOCATOR_BYTES_PER_TOKEN * entries),
                    seconds=(REPLICATED_ALLOCATOR_SECONDS_PER_STEP * copies * nodes * entries
                             / 2 * max(1.0, per_node / 16) * builds),
                    why_seconds=f"Cassandra's token allocator for {copies} copies (servers x "
                                "their tokens x copies)")
    if params.get("allocation") == "allocator":
        return Cost(peak=float(ALLOCATOR_BYTES_PER_TOKEN * entries),
                    seconds=ALLOCATOR_SECONDS_PER_STEP * nodes * entries / 2 * builds,
                    why_seconds="Cassandra's token allocator (servers x their tokens)")
    template = params.get("point_name")
    per_point = (PYTHON_GENERATION_BYTES_PER_POINT
                 if template is not None and (parse_template(template) is None
                                              or is_keyed(params.get("hash", "")))
                 else GENERATION_BYTES_PER_POINT)
    return Cost(peak=float(per_point * entries))


def ring_cost(params: dict[str, Any], entries: int, bits: int,
              layouts: Sequence[str]) -> Cost:
    """A ring held with its reference layout and every measured layout; each form is built
    beside those built before it, so the most a build holds beyond what it keeps (the
    tuples' lists of Python ints, 30 MiB at 800,000 entries) is one transient among them."""
    base = params["layout"]
    reference = float((bits // 8 + 2) * entries) + (
        layout_cost(base).held_bytes(entries) if base != NO_LAYOUT else 0.0)
    return Cost(held=reference) + total([layout_cost(name).cost(entries) for name in layouts])


def algorithm_cost(name: str, params: dict[str, Any], fleets: Sequence[Sequence[Server]],
                   forms: int) -> Cost:
    """An algorithm without a ring: its reference and each measured form, held."""
    one = max(get_algorithm(name).estimated_bytes(fleet, params) for fleet in fleets)
    return Cost(held=one * (1 + forms))


def routing_cost(name: str, params: dict[str, Any], servers: Sequence[Server], *,
                 reference_keys: int, fast_keys: int, plain_keys: int,
                 label: str = "") -> Cost:
    """Its lookups' seconds (`Algorithm.estimated_seconds`): `reference_keys` by its
    vectorised reference, `fast_keys` by its fastest form, `plain_keys` by its plain-Python
    reference; `label` says whose keys they are (a table metric's objects)."""
    seconds, why = get_algorithm(name).estimated_seconds(
        servers, params, reference_keys=reference_keys, fast_keys=fast_keys,
        plain_keys=plain_keys)
    return Cost(seconds=seconds, why_seconds=f"{label}{why}" if why else "")


def recipe_cost(name: str, params: dict[str, Any], fleets: Sequence[Sequence[Server]], *,
                keys: int, builds: int, why: str, references: bool = False) -> Cost:
    """A recipe built outside the sweep's ring (a `[clients]` recipe, a peer's claimed
    `routes_like`), priced by the algorithm's own estimates for its parameters on the
    largest of `fleets`: a ring's points generated and released, then its arrays and
    reference held; any other algorithm's built form, as a client builds it, with no
    plain-Python reference (`Algorithm.estimated_client_bytes`), or with its references
    when the caller routes by them (`references`: `Algorithm.estimated_bytes`); and
    the seconds of `builds` builds (`Algorithm.estimated_build_seconds`), each routing
    `keys` keys by its fastest form (by its reference with `references`;
    `Algorithm.estimated_seconds`, which prices a reference's table filling). `why` names
    the fields that set it, for both texts."""
    algorithm = get_algorithm(name)
    entries = entries_of(name, params, fleets)
    if "layout" in params:  # a ring: its widest hash, its own reference layout
        held = ring_cost(params, entries, 64, ()).held
        built = generation_cost(params, entries).then(Cost(held=held))
    else:
        bytes_of = algorithm.estimated_bytes if references else \
            algorithm.estimated_client_bytes
        built = Cost(held=max(bytes_of(fleet, params) for fleet in fleets))
    largest = max(fleets, key=lambda fleet: algorithm.estimated_entries(fleet, params))
    # A client routes by its fastest form; a caller routing by the reference builds it.
    seconds, _ = algorithm.estimated_seconds(
        largest, params, reference_keys=keys if references else 0,
        fast_keys=0 if references else keys, plain_keys=0)
    seconds += algorithm.estimated_build_seconds(largest, params)[0]
    return replace(built, seconds=builds * seconds, why=why, why_seconds=why).whole()
