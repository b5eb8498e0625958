"""The generic recipe: every server's points named by a template and hashed.

Server `s` of weight `w` gets `max(1, round(points_per_weight * w))` points,
named `point_name.format(server=s, j=j)` for j = 0, 1, ... and placed at the
chosen hash of that name (`harness.recipes.constructions.generator.generate_ring`); keys are hashed
with the same hash. This is the ring of "Consistent Hashing from Scratch, and
Why Cloudflare Deleted 90% of It" and of the Semicolony simulator.

Client traits. The parameters after those four (`client_traits.trait_params`: the key's
hash and encoding, points per digest, point numbering and chaining, how a server's name is
written, weight rounding, ring size, collision winner, tie rule) describe the rings real
clients build; `known_clients.py` states some. At their defaults the ring is the one above,
generated in C; any trait set (or a hash only clients use, `trait_hashes`) builds it by
`client_traits.ClientTraits`. A result records only the traits that are set.

A keyed hash (SipHash) places points and keys under `hash_key`, a secret of 16
bytes in hex; a scenario that gives none gets one drawn for its run
(`settle_hash_key`), and results never record it.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.fleet_points import FleetPoints
from harness.core.hashing import HASH_NAMES, KEY_BYTES, hash_bits, hash_many, is_keyed
from harness.core.params import Param, parse_keywords
from harness.core.redact import HIDDEN_KEY
from harness.core.ring import Ring
from harness.core.servers import Server, require_servers
from harness.core.trait_hashes import TRAIT_HASH_NAMES
from harness.recipes.constructions.base import ConstructionBase
from harness.recipes.constructions.client_traits import ClientTraits, trait_params
from harness.recipes.constructions.generator import (
    DEFAULT_POINT_NAME,
    generate_fleet_points,
    generate_ring,
    points_for,
)

#: largest points_per_weight accepted (the estimate refuses what will not fit long before)
MAX_POINTS_PER_WEIGHT = 10**8


class PointsConstruction(ConstructionBase):
    """Points named by a template, placed by a hash, `points_per_weight` per unit weight."""

    name: ClassVar[str] = "points"
    params: ClassVar[tuple[Param, ...]] = (
        Param("hash", "choice", "blake2b-32", "hash of point names and keys",
              choices=(*HASH_NAMES, *(h for h in TRAIT_HASH_NAMES if h not in HASH_NAMES))),
        Param("hash_key", "secret_hex", None, "secret key of a keyed hash (siphash24-*)",
              byte_count=KEY_BYTES,
              shown_default="none; a keyed hash gets one drawn for the run"),
        Param("point_name", "template", DEFAULT_POINT_NAME,
              "name of point j of a server, hashed to place it", placeholders=("server", "j")),
        Param("points_per_weight", "int", 160, "points per unit of server weight",
              minimum=1, maximum=MAX_POINTS_PER_WEIGHT),
        *trait_params(),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        self.hash: str = values["hash"]
        key: str | None = values["hash_key"]
        if is_keyed(self.hash) and key is None:
            raise ScenarioError(f"construction {self.name!r}: hash_key is required for the "
                                f"keyed hash {self.hash!r} (a scenario draws one per run)")
        if key is not None and not is_keyed(self.hash):
            raise ScenarioError(f"construction {self.name!r}: hash_key must be left out: "
                                f"hash {self.hash!r} takes no key")
        self.hash_key: bytes | None = None if key is None else bytes.fromhex(key)
        self.point_name: str = values["point_name"]
        self.points_per_weight: int = values["points_per_weight"]
        problem = self.params_problem(values)
        if problem is not None:
            field, expected, got = problem
            raise ScenarioError(f"construction {self.name!r}: {field} must be {expected} "
                                f"(got {got!r})")
        #: the client traits, when any is set (or the hash is a client's): built by them
        self.traits: ClientTraits | None = (
            ClientTraits.from_params(values) if uses_traits(values) else None)

    @classmethod
    def params_problem(cls, values: dict[str, Any]) -> tuple[str, str, object] | None:
        """A combination of parameters no client has, as (field, expected, value)."""
        if not uses_traits(values):
            return None
        return ClientTraits.from_params(values).problem()

    @classmethod
    def recorded_params(cls, values: dict[str, Any]) -> dict[str, Any]:
        """The parameters a result records: a trait at its default is left out, so that a
        ring without traits is recorded as it always was."""
        defaults = {param.name: param.default for param in trait_params()}
        return {k: v for k, v in values.items() if k not in defaults or v != defaults[k]}

    @property
    def bits(self) -> int:
        return self.traits.bits if self.traits is not None else hash_bits(self.hash)

    @property
    def label(self) -> str:
        return f"k={self.points_per_weight}"

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        if self.traits is not None and self.traits.share_rounding and \
                sum(self.traits.name_counts(servers)) == 0:
            return "weights whose shares give at least one point"
        return None  # any positive weight rounds to at least one point

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        if self.traits is not None:
            return self.traits.point_counts(servers)
        return [points_for(s.weight, self.points_per_weight) for s in servers]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        if self.traits is not None:
            require_servers(self.name, servers)
            return self.traits.build_ring(servers)
        return generate_ring(servers, self.points_per_weight, self.hash, self.point_name,
                             self.hash_key)

    def fleet_points(self, servers: Sequence[Server]) -> FleetPoints | None:
        """A server's points are its own name's and weight's: any sub-fleet is a filter
        (not so for traits: a share depends on the fleet, a tie rule moves points)."""
        if self.traits is not None:
            return None
        return generate_fleet_points(servers, self.points_per_weight, self.hash,
                                     self.point_name, self.hash_key)

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        if self.traits is not None:
            return self.traits.key_hashes(keys)
        return hash_many(self.hash, keys, self.hash_key)


def uses_traits(values: dict[str, Any]) -> bool:
    """Whether a `points` ring is a client's: a trait set, or a hash only clients use."""
    defaults = {param.name: param.default for param in trait_params()}
    return (values.get("hash", "blake2b-32") not in HASH_NAMES
            or any(values.get(name, default) != default for name, default in defaults.items()))


def settle_hash_key(values: dict[str, Any], fields: Fields) -> dict[str, Any]:
    """The ring's parameters with the key settled: a keyed hash given none gets one drawn
    from the operating system's secret source (one per recipe, so that every rebuild of it
    routes alike); an unkeyed hash given one is refused, without showing it."""
    if "hash_key" not in values:
        return values
    keyed = is_keyed(values["hash"])
    if values["hash_key"] is not None and not keyed:
        raise ScenarioError(f"{fields.file}: {fields.field('hash_key')} must be left out: hash "
                            f"{values['hash']!r} takes no key (got a key, not shown)")
    if keyed and values["hash_key"] is None:
        return {**values, "hash_key": secrets.token_hex(KEY_BYTES)}
    return values


def public_params(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters as results may record them: a secret key replaced by `HIDDEN_KEY`."""
    if params.get("hash_key") is None:
        return params
    return {**params, "hash_key": HIDDEN_KEY}
