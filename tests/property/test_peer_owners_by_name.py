"""A process peer's owners are compared with ours by server name, whatever its ADD and
REMOVE did to its own numbering (#38, class 10): a peer closes the gap of a removed server
and appends an added one, so after a server is removed and added back, or any sequence of
changes, its index of a server is not the index in the list we hold. Hypothesis draws the
sequences of changes and the order of the list we compare with; the shipped example peer
(peers/python/ketama_peer.py) must agree with our libketama ring on every key of every
state, through `owners_by_name`, which every comparison of a foreign peer's owners uses."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers.foreign import ForeignPeerSpec, ProcessPeer
from harness.recipes.peers.foreign.claims import check_claim, owners_by_name
from tests.paths import ROOT

pytestmark = pytest.mark.c_core

ADAPTER = ROOT / "peers" / "python" / "ketama_peer.py"
KEYS = [f"key-{i}".encode() for i in range(1500)]
ROUTES_LIKE = {"algorithm": "ring", "construction": "libketama"}


def _spec() -> ForeignPeerSpec:
    ring = get_algorithm("ring")
    params = ring.parse_params(Fields("test", "routes_like", {"construction": "libketama"}))
    return ForeignPeerSpec("ketama", command=(sys.executable, str(ADAPTER)),
                           routes_like=ROUTES_LIKE, recipe_params=params, timeout_s=30.0)


@settings(max_examples=25, deadline=None)
@given(changes=st.lists(st.tuples(st.booleans(), st.integers(0, 9)), min_size=1,
                        max_size=6),
       seed=st.integers(0, 2**32 - 1))
def test_owners_by_name_agree_after_any_changes(changes: list[tuple[bool, int]],
                                                seed: int) -> None:
    pool = [Server(f"10.0.{i}.1:11211", 1 + i % 3) for i in range(10)]
    held = pool[:5]
    peer = ProcessPeer(_spec(), held, shared_batches=False)
    try:
        for remove, at in changes:
            names = [s.name for s in held]
            if remove and len(held) > 1:
                server = held[at % len(held)]
                peer.remove(server.name)
                held = [s for s in held if s.name != server.name]
            else:
                absent = [s for s in pool[at:] + pool[:at] if s.name not in names]
                if not absent:
                    continue
                peer.add(absent[0].name, absent[0].weight)
                held = [*held, absent[0]]
            # The list we compare with in an order of its own: names, not places, match.
            ours = list(held)
            random.Random(seed).shuffle(ours)
            owners = owners_by_name(peer, ours, peer.route_many(KEYS))
            agreement = check_claim(peer.spec, ours, KEYS, owners)  # ParityError if not
            assert agreement is not None and agreement.agreement == 1.0
            names_by_peer = np.array(peer.server_names)[peer.route_many(KEYS)]
            assert list(names_by_peer) == [ours[int(o)].name for o in owners]
    finally:
        peer.close()


def test_owners_by_name_refuses_a_different_server_list() -> None:
    """Compared with a list that is not the servers it holds: one line naming it."""
    servers = [Server(f"s{i}", 1) for i in range(3)]
    peer = ProcessPeer(_spec(), servers, shared_batches=False)
    try:
        with pytest.raises(HarnessError, match="peer 'ketama': holds servers"):
            owners_by_name(peer, servers[:2], peer.route_many(KEYS[:10]))
    finally:
        peer.close()
