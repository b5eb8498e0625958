"""The two sides of a migration: a recipe of ours, or a peer the scenario measures.

A migration between recipes changes the ring's parameters. Switching clients is the same
change seen from a service: it moves from one client library to another (spymemcached to
libmemcached, a Python client to a Go one), or between a client and a recipe of ours, and
every object the two route differently is a cache miss. `[migration] from = { peer = NAME }`
and `to = { peer = NAME }` name a peer of `measure.peers`: a registry peer (a Python library)
or a foreign peer (a library behind the C ABI, or a process behind the pipe protocol).

Each side comes down to the owner of every object of the universe, numbered as the
scenario's servers are, which is all the moved-keys figures and the cache model take; a
recipe adds what a peer cannot give (its exact balance, whether the two are nested). A
peer's bytes are what it says of itself (None when it does not say).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.recipes.changes import changed_params
from harness.recipes.peers.owners import foreign_peer_owners, registry_peer_owners

if TYPE_CHECKING:
    from harness.metrics.context import RunContext
    from harness.recipes.algorithms.base import Algorithm


@dataclass(frozen=True)
class Side:
    """One side of a migration, with its owner of every object of the universe."""

    #: how tables name it: the recipe's label, or "peer NAME"
    label: str
    #: the physical form its bytes count (the ring's layout, the algorithm, or the peer)
    form: str
    #: bytes of its structure; None for a peer that does not say
    nbytes: int | None
    owners: npt.NDArray[np.uint16]
    #: the recipe (None for a peer): its exact balance and parameters
    algorithm: Algorithm | None = None
    #: the peer's name (None for a recipe)
    peer: str | None = None


@dataclass(frozen=True)
class SortedKeys:
    """The objects' hashes for one recipe, in rising order: searched in that order, a
    ring's binary searches share their first steps and stay in cache (1M objects over a
    ring of 43M entries: 0.53 s against 5.8 s in object order). A key's hash is its
    recipe's, whatever the servers: one sorting serves every ring of a process."""

    hashes: npt.NDArray[np.unsignedinteger]
    #: object index of each sorted hash
    order: npt.NDArray[np.intp]

    @classmethod
    def of(cls, algorithm: Algorithm, names: Sequence[bytes]) -> SortedKeys:
        hashes = algorithm.hash_keys(names)
        order = np.argsort(hashes, kind="stable")
        return cls(hashes[order], order)

    def owners(self, algorithm: Algorithm) -> npt.NDArray[np.uint16]:
        """Each object's owner by the algorithm's reference, in object order."""
        owners = np.empty(len(self.order), dtype=np.uint16)
        owners[self.order] = algorithm.reference_owners(self.hashes)
        return owners


def target_params(old: Algorithm, to: dict[str, Any]) -> dict[str, Any]:
    """The new recipe's parameters (`recipes.changes.changed_params`), naming its algorithm
    when it is another one."""
    algorithm, params = changed_params(type(old).name, old.params, to)
    return params if algorithm == type(old).name else {"algorithm": algorithm, **params}


def recipe_label(scenario: Algorithm, recipe: Algorithm) -> str:
    """A recipe named as the run's label is (k=16), with its algorithm's name when it is
    another one than the scenario's (maglev M=4,099)."""
    label = type(recipe).label_for(recipe.params)
    return label if type(recipe) is type(scenario) else f"{type(recipe).name} {label}"


def recipe_side(algorithm: Algorithm, label: str,
                names: Sequence[bytes]) -> Side:
    """A recipe of ours, routing the universe through its plain reference."""
    owners = SortedKeys.of(algorithm, names).owners(algorithm)
    return Side(label, algorithm.form, int(algorithm.nbytes), owners, algorithm=algorithm)


def peer_side(context: RunContext, name: str, names: Sequence[bytes]) -> Side:
    """A peer of the run (built for its servers when the run began), routing the universe."""
    context.stage(f"{context.label}: migration, peer {name} routing {len(names):,} objects")
    foreign = context.foreign_peers.get(name)
    if foreign is not None:
        owners = foreign_peer_owners(foreign, context.servers, names)
        nbytes = foreign.nbytes
    else:
        peer = context.peers[name]  # the scenario checked that the run lists it
        owners = registry_peer_owners(name, peer, context.servers, names)
        nbytes = peer.nbytes
    return Side(f"peer {name}", f"peer {name}", nbytes or None, owners, peer=name)


TO_EXPECTED = ("a table of the new recipe's parameters, such as { points_per_weight = 16 }, "
               "or { peer = NAME } naming a peer of measure.peers")
FROM_EXPECTED = ("{ peer = NAME }, naming a peer of measure.peers the service moves from "
                 "(left out: the scenario's recipe)")
PEER_EXPECTED = "the name of a peer listed in measure.peers"


def _peer_of(table: Fields, key: str, value: object) -> str:
    """The peer a side's table names: `{ peer = NAME }` and nothing beside it."""
    side = Fields(table.file, table.field(key), value)
    name = side.take_str("peer", expected=PEER_EXPECTED)
    side.finish()  # a peer routes by its own recipe: no parameters go beside it
    return name


def parse_sides(table: Fields) -> tuple[str | None, dict[str, Any]]:
    """`[migration]`'s `from` (a peer, or None: the scenario's recipe) and `to` (the new
    recipe's parameters, {"peer": NAME}, or {} for the scenario's recipe when `from` is a
    peer), checked in shape; whether each peer is listed is the scenario's to check."""
    raw_from = table.take_raw("from", None, expected=FROM_EXPECTED,
                              shown_default="the scenario's recipe")
    if raw_from is not None and not (isinstance(raw_from, dict) and "peer" in raw_from):
        raise table.error("from", FROM_EXPECTED, raw_from)
    from_peer = None if raw_from is None else _peer_of(table, "from", raw_from)
    to = table.take_raw("to", None, expected=TO_EXPECTED,
                        shown_default="required, unless from names a peer: then the "
                                      "scenario's recipe")
    if to is None:
        if from_peer is None:
            raise ScenarioError(f"{table.file}: {table.field('to')} is required but missing "
                                "(the new recipe, or { peer = NAME }; only a migration from a "
                                "peer may leave it out, to go to the scenario's recipe)")
        return from_peer, {}
    if not isinstance(to, dict) or not to:
        raise table.error("to", TO_EXPECTED, to)
    if "peer" not in to:
        return from_peer, dict(to)
    to_peer = _peer_of(table, "to", to)
    if to_peer == from_peer:
        raise table.error("to", "another side than migration.from (a switch from a peer to "
                          "itself moves nothing)", to)
    return from_peer, {"peer": to_peer}
