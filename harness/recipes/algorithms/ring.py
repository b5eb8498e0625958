"""The ring: a construction's sorted points, held in one of the layouts.

`ALGORITHMS["ring"].build(servers, construction=..., hash=..., points_per_weight=...,
point_name=..., layout=...)` builds the construction's ring (`points`, `nginx`,
`libketama`; see `harness.recipes.constructions`) and holds it in a layout (any name
in `LAYOUTS` that stores hashes of the construction's width). The owner of
key hash h is the first point at or after h, wrapping (`harness.core.ring`).

The layouts are the ring's physical forms: `forms(names)` gives the same
ring in each named layout, sharing the points, so that they are measured
side by side and checked against one reference.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.fleet_points import FleetPoints
from harness.core.params import parse_params
from harness.core.ring import Ring, reference_lookup_many, reference_owners
from harness.core.servers import Server, server_list_problem
from harness.core.stats import arc_shares
from harness.recipes.algorithms.base import Algorithm, Routing, checked_keywords
from harness.recipes.constructions import CONSTRUCTIONS, Construction, get_construction
from harness.recipes.constructions.base import Rebalanced
from harness.recipes.constructions.build_time import build_seconds as ring_build_seconds
from harness.recipes.constructions.points import settle_hash_key
from harness.recipes.layouts import LAYOUTS, Layout
from harness.recipes.layouts.costs import (
    NUMPY_FLAT_LOOKUPS,
    build_seconds_per_entry,
    lookup_rates,
)

#: the layout a ring is held in when none is named, by hash width
DEFAULT_LAYOUT = {32: "numpy-aligned", 64: "numpy-aligned-64"}
#: `layout = "none"`: no physical form, lookups through the reference on the ring's own
#: sorted arrays (for runs that measure the ring itself, where a layout would only cost
#: memory: a 204.8M-point ring in tuples would take 30 GB)
NO_LAYOUT = "none"
#: seconds the plain-Python reference takes a key (`reference_lookup_many`: a bisect of
#: a Python list a key); priced as the slowest Python lookup of the layouts' rates
#: (tuples, 1.8 us at 16,777,216 entries, benchmarks/run_rates.py) with margin
PLAIN_SECONDS_PER_KEY = 3e-6


class ReferenceForm:
    """The ring's own arrays, searched by the vectorised reference: no extra memory."""

    name = NO_LAYOUT

    def __init__(self, ring: Ring) -> None:
        self._ring = ring

    @property
    def entries(self) -> int:
        return self._ring.entries

    @property
    def entry_size(self) -> int:
        return int(self._ring.positions.itemsize + self._ring.owners.itemsize)

    @property
    def nbytes(self) -> int:
        return 0  # it shares the ring's arrays

    def lookup(self, key_hash: int) -> int:
        return reference_lookup_many(self._ring, np.array([key_hash]))[0]

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return reference_owners(self._ring, key_hashes)


def layouts_for(bits: int) -> list[str]:
    """Registered layouts that store hashes of this width."""
    return [name for name, cls in LAYOUTS.items() if cls.hash_bits == bits]


class RingAlgorithm(Routing):
    """A construction's ring in one layout."""

    name: ClassVar[str] = "ring"
    ring: Ring
    construction: Construction

    def __init__(self, servers: Sequence[Server], params: dict[str, Any],
                 construction: Construction, ring: Ring, layout: Layout | ReferenceForm) -> None:
        self._servers, self._params = tuple(servers), params
        self.construction, self.ring, self.layout = construction, ring, layout

    @classmethod
    def parse_params(cls, fields: Fields) -> dict[str, Any]:
        ring = cls.parse_ring_params(fields)
        bits = cls.construction_of(ring).bits
        fitting = layouts_for(bits)
        layout = fields.take_choice("layout", [*LAYOUTS, NO_LAYOUT], DEFAULT_LAYOUT[bits])
        if layout not in fitting and layout != NO_LAYOUT:
            raise fields.error("layout", f"a layout that stores {bits}-bit hashes "
                               f"({', '.join(fitting)})", layout)
        return {**ring, "layout": layout}

    @classmethod
    def parse_ring_params(cls, fields: Fields) -> dict[str, Any]:
        """The ring's own parameters (the construction and its points, hash and names), without
        the layout: what every algorithm built on a ring reads (bounded-load does too)."""
        construction_name = fields.take_choice("construction", list(CONSTRUCTIONS), "points")
        construction_class = CONSTRUCTIONS[construction_name]
        own = {param.name for param in construction_class.params}
        for other in CONSTRUCTIONS.values():
            for param in other.params:
                if param.name not in own and fields.has(param.name):
                    raise fields.error(
                        param.name, f"left out: construction {construction_name!r} fixes its "
                        "own points and hash", fields.table[param.name])
        values = settle_hash_key(parse_params(construction_class.params, fields), fields)
        # A construction's rule across its parameters (client traits that do not combine, a
        # minimum above a maximum), named at one of them with the value it got; and what of
        # them a result records (traits at their defaults left out).
        problem = getattr(construction_class, "params_problem", lambda v: None)(values)
        if problem is not None:
            key, expected, *got = problem
            raise fields.error(key, expected, got[0] if got else values[key])
        values = getattr(construction_class, "recorded_params", lambda v: v)(values)
        return {"construction": construction_name, **values}

    @classmethod
    def construction_of(cls, params: dict[str, Any]) -> Construction:
        """The construction the ring parameters name, built from its own parameters (the
        others, such as the layout, are ignored)."""
        own = {param.name for param in CONSTRUCTIONS[params["construction"]].params}
        return get_construction(params["construction"],
                                **{k: v for k, v in params.items() if k in own})

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return server_list_problem(servers) or cls.construction_of(params).check_servers(servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return sum(cls.construction_of(params).point_counts(servers))

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """Its lookups: the vectorised reference is numpy's search of the ring's sorted
        arrays (priced as a numpy layout's batch), the fast form its own layout's batch,
        the plain-Python reference a bisect a key (`PLAIN_SECONDS_PER_KEY`)."""
        entries = cls.estimated_entries(servers, params)
        layout = params.get("layout", NO_LAYOUT)
        fast = (lookup_rates(layout) if layout != NO_LAYOUT else NUMPY_FLAT_LOOKUPS)
        seconds = (reference_keys * NUMPY_FLAT_LOOKUPS.batch(entries)
                   + fast_keys * fast.batch(entries) + plain_keys * PLAIN_SECONDS_PER_KEY)
        keys = reference_keys + fast_keys + plain_keys
        return seconds, (f"{keys:,} lookups in a ring of {entries:,} entries"
                         if seconds else "")

    @classmethod
    def estimated_build_seconds(cls, servers: Sequence[Server], params: dict[str, Any]
                                ) -> tuple[float, str]:
        """Its points built by its construction (`constructions.build_time`), then held in
        its own layout (`layouts.costs.build_seconds_per_entry`); no run builds the
        construction's plain-Python reference."""
        counts = cls.construction_of(params).point_counts(servers)
        entries = sum(counts)
        seconds, why = ring_build_seconds(params, counts)
        layout = params.get("layout", NO_LAYOUT)
        if layout != NO_LAYOUT:
            seconds += build_seconds_per_entry(layout) * entries
        return seconds, why

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls.from_params(servers, checked_keywords(cls, servers, params))

    @classmethod
    def from_params(cls, servers: Sequence[Server], params: dict[str, Any]) -> Self:
        construction = cls.construction_of(params)
        ring = construction.build_ring(servers)
        return cls(servers, dict(params), construction, ring, _layout_of(params, ring))

    @classmethod
    def parts_of(cls, servers: Sequence[Server], params: dict[str, Any],
                 cache: dict[str, FleetPoints | None] | None = None,
                 ) -> Callable[[Sequence[Server]], RingAlgorithm] | None:
        """A builder of this recipe's ring for parts of `servers` (each listed in their
        order) that hashes and sorts every server's points once, then filters each part's
        ring from them (`FleetPoints`); None when the construction's points of a server
        depend on the others, so that each part is built afresh. `cache` keeps the points
        by construction parameters for the builders of the same fleet that follow (a
        process and its migration, whatever layout each asks for)."""
        construction = cls.construction_of(params)
        own = {param.name for param in type(construction).params}
        key = json.dumps({"construction": params["construction"],
                          **{k: v for k, v in params.items() if k in own}}, sort_keys=True)
        if cache is not None and key in cache:
            points = cache[key]
        else:
            points = construction.fleet_points(servers)
            if cache is not None:
                cache[key] = points
        if points is None:
            return None
        index = {server.name: i for i, server in enumerate(servers)}

        def build(part: Sequence[Server]) -> RingAlgorithm:
            members = [index.get(server.name, -1) for server in part]
            if any(i < 0 or servers[i] != server for i, server in zip(members, part,
                                                                        strict=True)):
                raise HarnessError("a part of a fleet must be some of its servers")
            ring = points.ring_of(members)
            return cls(part, dict(params), construction, ring, _layout_of(params, ring))

        return build

    def with_layout(self, name: str) -> RingAlgorithm:
        """The same ring (sharing its points) held in another layout."""
        if name == self.layout.name:
            return self
        layout = LAYOUTS[name].build(self.ring.positions, self.ring.owners)
        return RingAlgorithm(self._servers, {**self._params, "layout": name},
                             self.construction, self.ring, layout)

    @property
    def servers(self) -> tuple[Server, ...]:
        return self._servers

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return cls.construction_of(params).label

    @property
    def form(self) -> str:
        return self.layout.name

    @property
    def key_bits(self) -> int:
        return self.construction.bits

    @property
    def entries(self) -> int:
        return self.layout.entries

    @property
    def entry_size(self) -> int:
        return self.layout.entry_size

    @property
    def nbytes(self) -> int:
        return self.layout.nbytes

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return self.construction.key_hashes(keys)

    def lookup(self, key_hash: int) -> int:
        return self.layout.lookup(key_hash)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self.layout.lookup_many(key_hashes)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        return reference_owners(self.ring, key_hashes)

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        return reference_lookup_many(self.ring, key_hashes)

    def forms(self, names: Sequence[str]) -> dict[str, Algorithm]:
        return {name: self.with_layout(name) for name in names}

    def exact_shares(self) -> npt.NDArray[np.float64]:
        return arc_shares(self.ring, len(self._servers))

    def without(self, index: int) -> RingAlgorithm | None:
        """The ring after server `index` leaves, when its construction says how a deployment
        loses a server (allocated tokens: the others stay put, its arcs fall to their
        successors) rather than rebuilding from the shorter list; None when rebuilding is
        what happens (hashed points: the same ring, collisions aside)."""
        fallen = self.construction.remove_server(self.ring, index)
        if fallen is None:
            return None
        servers = self._servers[:index] + self._servers[index + 1:]
        return self._holding(fallen, servers)

    def rebalanced(self, cv_target: float) -> tuple[RingAlgorithm, Rebalanced] | None:
        """This ring with the fewest points re-placed to bring its arc CV (per weight) to
        `cv_target`, and what that moved; None when the construction cannot re-place points
        (hashed points sit where their names hash)."""
        done = self.construction.rebalance(self.ring, [s.weight for s in self._servers],
                                           cv_target)
        if done is None:
            return None
        return self._holding(done.ring, self._servers), done

    def _holding(self, ring: Ring, servers: Sequence[Server]) -> RingAlgorithm:
        """Another ring of the same recipe, in the same layout."""
        return RingAlgorithm(servers, self._params, self.construction, ring,
                             _layout_of(self._params, ring))


def _layout_of(params: dict[str, Any], ring: Ring) -> Layout | ReferenceForm:
    """The ring held in the layout its parameters name."""
    name = params["layout"]
    if name == NO_LAYOUT:
        return ReferenceForm(ring)
    return LAYOUTS[name].build(ring.positions, ring.owners)
