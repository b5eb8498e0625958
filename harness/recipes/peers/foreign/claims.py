"""What a foreign peer claims: that it routes like a recipe of ours. Checked on every key.

With `exact` (the default) the claim is parity: a single key routed differently stops the
run with a ParityError naming the peer, the key and both owners, before anything is
measured. Without it the agreement is a figure of the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.core.errors import ParityError
from harness.core.redact import without_keys
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers.foreign.base import Batch, ForeignPeer
from harness.recipes.peers.foreign.process_peer import ProcessPeer
from harness.recipes.peers.foreign.protocol import packed_keys
from harness.recipes.peers.foreign.spec import ForeignPeerSpec


@dataclass(frozen=True)
class Agreement:
    #: our recipe, named as in tables ("ring construction=libketama")
    recipe: str
    agreement: float
    keys: int


def recipe_name(spec: ForeignPeerSpec) -> str | None:
    """The claimed recipe as tables and messages name it; a secret key is hidden, since a
    name is a string the results' redaction of `hash_key` fields cannot see into."""
    if spec.routes_like is None:
        return None
    params = " ".join(f"{key}={value}" for key, value in without_keys(spec.routes_like,
                                                                        "(secret)").items()
                      if key != "algorithm")
    return f"{spec.routes_like['algorithm']} {params}".strip()


def recipe_owners(spec: ForeignPeerSpec, servers: Sequence[Server],
                  keys: Sequence[bytes]) -> npt.NDArray[np.uint16] | None:
    """Owners by the recipe the peer claims to route like; None when it claims none."""
    if spec.routes_like is None:
        return None
    algorithm = get_algorithm(spec.routes_like["algorithm"])
    return algorithm.from_params(servers, spec.recipe_params).route(keys)


def batch_for(peer: ForeignPeer, servers: Sequence[Server], keys: Sequence[bytes]) -> Batch:
    """The keys as the peer takes them: packed, and for a peer given key hashes, hashed by
    the recipe it routes like (widened to 64 bits)."""
    blob, offsets = packed_keys(keys)
    hashes = None
    if peer.spec.input == "hashes" and peer.spec.routes_like is not None:
        algorithm = get_algorithm(peer.spec.routes_like["algorithm"])
        built = algorithm.from_params(servers, peer.spec.recipe_params)
        hashes = np.ascontiguousarray(built.hash_keys(keys), dtype=np.uint64)
    return peer.prepare(blob, offsets, hashes)


def owners_by_name(peer: ForeignPeer, servers: Sequence[Server],
                   owners: npt.NDArray[np.uint16]) -> npt.NDArray[np.uint16]:
    """The peer's owners as indexes of `servers`, matched by server name: a process peer
    numbers the servers in its own order, which its ADD and REMOVE change (a server
    removed and added back comes last), so its numbers are not the list's. Every
    comparison of a foreign peer's owners with ours goes through this. A library peer is
    built for `servers` and numbers them as they are."""
    return peer.owners_in(owners, servers) if isinstance(peer, ProcessPeer) else owners


def check_claim(spec: ForeignPeerSpec, servers: Sequence[Server], keys: Sequence[bytes],
                owners: npt.NDArray[np.uint16]) -> Agreement | None:
    """The peer's agreement with its claimed recipe; a ParityError if it claims parity and
    some key differs."""
    expected = recipe_owners(spec, servers, keys)
    name = recipe_name(spec)
    if expected is None or name is None:
        return None
    differ = np.flatnonzero(expected != owners)
    if spec.exact and len(differ):
        at = int(differ[0])
        raise ParityError(
            f"peer {spec.name!r}: claims to route like {name} but routes {len(differ):,} of "
            f"{len(keys):,} keys differently (first: {keys[at].decode(errors='replace')!r} "
            f"to {servers[int(owners[at])].name!r}, ours to "
            f"{servers[int(expected[at])].name!r}); set exact = false to report the "
            "agreement instead")
    return Agreement(name, 1.0 - len(differ) / max(1, len(keys)), len(keys))
