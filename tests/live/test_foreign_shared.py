"""Protocol 2's shared batches: the new requests byte for byte, the region's layout and
seal, and peers/c/abi_pipe.c, which routes every batch alike through the pipe (version 1),
through the shared region (version 2) and in our process through the C ABI; a peer that
names a batch outside the region is refused by the bridge, in one line."""

from __future__ import annotations

import itertools
import os
import struct
import sys
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.peers.foreign import ForeignPeerSpec, ProcessPeer, open_foreign_peer, protocol
from harness.recipes.peers.foreign.base import ForeignPeer
from harness.recipes.peers.foreign.process import PeerProcess
from harness.recipes.peers.foreign.protocol import ProtocolError, SharedLookup, SharedRoute
from harness.recipes.peers.foreign.shared_region import SharedRegion
from tests.paths import ROOT, TESTS
from tests.toolchains import shipped_adapters

FAKE = TESTS / "fake_peer.py"
PYTHON_PEER = ROOT / "peers" / "python" / "ketama_peer.py"
SERVERS = [Server(f"10.0.{i}.1:11211", 1 + i % 3) for i in range(9)]


def test_shared_requests_are_laid_out_as_documented() -> None:
    """SHARE, ROUTE_SHARED, LOOKUP_SHARED and TIME_SHARED byte for byte, and the region's
    layout of a batch: offsets, then owners, then keys; hashes, then owners."""
    assert protocol.share(4096) == b"\x09\x00\x00\x00S" + struct.pack("<Q", 4096)
    route = SharedRoute.of(3, 5)
    assert (route.offsets_at, route.owners_at, route.keys_at, route.size) == (0, 32, 38, 43)
    assert protocol.route_shared(route) == (
        struct.pack("<I", 29) + b"r" + struct.pack("<IQQQ", 3, 0, 38, 32))
    assert protocol.time_shared(7, route) == (
        struct.pack("<I", 33) + b"t" + struct.pack("<IIQQQ", 7, 3, 0, 38, 32))
    lookup = SharedLookup.of(3)
    assert (lookup.hashes_at, lookup.owners_at, lookup.size) == (0, 24, 30)
    assert protocol.lookup_shared(lookup) == (
        struct.pack("<I", 21) + b"l" + struct.pack("<IQQ", 3, 0, 24))
    assert protocol.FEATURES[protocol.FEATURE_SHARED_BATCHES] == "shared batches"


@given(st.integers(0, 2**26), st.integers(0, 2**31))
def test_a_batchs_parts_are_aligned_and_apart(keys: int, key_bytes: int) -> None:
    """Offsets u64-aligned, owners u16-aligned, no two parts overlapping, all in `size`."""
    route = SharedRoute.of(keys, key_bytes)
    parts = sorted([(route.offsets_at, 8 * (keys + 1)), (route.owners_at, 2 * keys),
                    (route.keys_at, key_bytes)])
    assert route.offsets_at % 8 == 0 and route.owners_at % 2 == 0
    assert all(a + size <= b for (a, size), (b, _) in itertools.pairwise(parts))
    assert parts[-1][0] + parts[-1][1] == route.size
    lookup = SharedLookup.of(keys)
    assert lookup.hashes_at % 8 == 0 and lookup.owners_at % 2 == 0
    assert lookup.hashes_at + 8 * keys <= lookup.owners_at
    assert lookup.owners_at + 2 * keys == lookup.size


def test_a_shared_reply_counts_every_owner() -> None:
    protocol.parse_shared_count(struct.pack("<I", 5), 5, "ROUTE_SHARED")
    with pytest.raises(ProtocolError, match="ROUTE_SHARED of 5 keys with 4 owners"):
        protocol.parse_shared_count(struct.pack("<I", 4), 5, "ROUTE_SHARED")
    with pytest.raises(ProtocolError, match="cut short"):
        protocol.parse_shared_count(b"\x05", 5, "ROUTE_SHARED")
    with pytest.raises(ProtocolError, match="bytes more than"):
        protocol.parse_shared_count(struct.pack("<IB", 5, 0), 5, "ROUTE_SHARED")


def test_the_region_grows_by_pages_and_cannot_be_shrunk() -> None:
    """A peer that cut the file short would turn our next read into a SIGBUS: the seal
    refuses it; growing is ours, by whole pages."""
    region = SharedRegion()
    try:
        assert region.fit(10) and region.size % 4096 == 0
        assert not region.fit(region.size)
        region.write(0, b"abc")
        assert bytes(region.view(np.uint8, 0, 3)) == b"abc"
        with pytest.raises(PermissionError):
            os.ftruncate(region.fd, 0)
        before = region.size
        assert region.fit(before + 1) and region.size >= before + 1
        assert bytes(region.view(np.uint8, 0, 3)) == b"abc"  # the same file, grown
    finally:
        region.close()


@pytest.fixture(scope="module")
def doors() -> Iterator[tuple[ForeignPeer, ProcessPeer, ProcessPeer]]:
    """libmemcached's ketama in process, behind abi_pipe with shared batches, and behind
    abi_pipe kept to version 1."""
    built = shipped_adapters()
    library = str(built / "libmemcached_ketama.so")
    spec = ForeignPeerSpec("pipe", command=(str(built / "abi_pipe"), library))
    in_process = open_foreign_peer(ForeignPeerSpec("abi", library=library), SERVERS)
    shared = ProcessPeer(spec, SERVERS)
    piped = ProcessPeer(spec, SERVERS, shared_batches=False)
    try:
        assert shared.shares_batches and not piped.shares_batches
        assert shared.hello.version == 2 and piped.hello.version == 2
        yield in_process, shared, piped
    finally:
        shared.close()
        piped.close()
        in_process.close()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(max_size=300), max_size=400))
def test_abi_pipe_routes_alike_through_every_door(
        doors: tuple[ForeignPeer, ProcessPeer, ProcessPeer], keys: list[bytes]) -> None:
    """Any batch, empty keys and an empty batch included, gets the same owners in process,
    through the region and through the pipe; batches of every size reuse or grow the
    region."""
    in_process, shared, piped = doors
    expected = in_process.route_many(keys)
    assert np.array_equal(shared.route_many(keys), expected)
    assert np.array_equal(piped.route_many(keys), expected)


def test_held_batches_and_a_growing_region_route_right(
        doors: tuple[ForeignPeer, ProcessPeer, ProcessPeer]) -> None:
    """Two batches prepared, then routed in turn: each is written into the region again
    when the other was there; a batch larger than the region grows it (SHARE again). The
    bridge's TIME_SHARED times the route from the region."""
    in_process, shared, _ = doors
    small = [f"small-{i}".encode() for i in range(1_000)]
    large = [f"a rather longer key, number {i}".encode() for i in range(60_000)]
    first = shared.prepare(*protocol.packed_keys(small))
    size = shared._region.size if shared._region else 0
    second = shared.prepare(*protocol.packed_keys(large))
    assert shared._region is not None and shared._region.size > size
    for batch, keys in ((first, small), (second, large), (first, small)):
        assert np.array_equal(shared.route_prepared(batch), in_process.route_many(keys))
    times = shared.self_timed(*protocol.packed_keys(small), 3)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert np.array_equal(shared.route_prepared(second), in_process.route_many(large))


def _bridge(region: SharedRegion, door: str) -> PeerProcess:
    """abi_pipe over libmemcached's ketama, or the Python example, given the region, past
    HELLO and BUILD."""
    if door == "abi_pipe":
        built = shipped_adapters()
        command = [str(built / "abi_pipe"), str(built / "libmemcached_ketama.so")]
    else:
        command = [sys.executable, str(PYTHON_PEER)]
    peer = PeerProcess("bridge", command, 10.0, region.fd)
    peer.request(protocol.hello(), "HELLO")
    peer.request(protocol.build([s.name for s in SERVERS], [1.0] * len(SERVERS), ""),
                 "BUILD")
    return peer


@pytest.mark.parametrize("door", ["abi_pipe", "ketama_peer.py"])
@pytest.mark.parametrize(("payload", "offsets", "said"), [
    (struct.pack("<IQQQ", 10, 0, 0, 1 << 40), [0], "a shared batch outside the region"),
    (struct.pack("<IQQQ", 10, 4, 200, 100), [0], "a shared batch outside the region"),
    (struct.pack("<IQQQ", 1 << 30, 0, 0, 0), [0], "a shared batch outside the region"),
    (struct.pack("<IQQQ", 2, 0, 64, 32), [0, 9, 3], "shared offsets that go backwards"),
    (struct.pack("<IQQQ", 1, 0, 64, 32), [0, 1 << 20], "shared keys outside the region"),
], ids=["owners past the end", "unaligned", "too many keys", "backwards", "keys past the end"])
def test_the_bridge_checks_every_bound_of_a_shared_batch(
        payload: bytes, offsets: list[int], said: str, door: str) -> None:
    """Garbage where a batch lies (past the end, unaligned, too many keys, offsets that go
    backwards or past the end) is refused by the bridge in an error reply, not read or
    written outside its mapping; so is a batch before SHARE, and a SHARE larger than the
    file. The Python example checks the same, in the same words."""
    region = SharedRegion()
    region.fit(4096)
    region.view(np.uint64, 0, len(offsets))[:] = offsets
    try:
        peer = _bridge(region, door)
        try:
            with pytest.raises(HarnessError, match="refused ROUTE_SHARED: a shared batch "
                                                   "before SHARE"):
                peer.request(protocol.frame(protocol.ROUTE_SHARED, payload), "ROUTE_SHARED")
        finally:
            peer.stop()
        peer = _bridge(region, door)
        try:
            with pytest.raises(HarnessError, match="refused SHARE: SHARE of a size the "
                                                   "region does not have"):
                peer.request(protocol.share(region.size + 1), "SHARE")
        finally:
            peer.stop()
        peer = _bridge(region, door)
        try:
            peer.request(protocol.share(region.size), "SHARE")
            with pytest.raises(HarnessError,
                               match=f"^peer 'bridge': refused ROUTE_SHARED: {said}$"):
                peer.request(protocol.frame(protocol.ROUTE_SHARED, payload), "ROUTE_SHARED")
        finally:
            peer.stop()
    finally:
        region.close()


def test_a_version_2_peer_routes_and_looks_up_through_the_region() -> None:
    """tests/fake_peer.py in shared-ok mode writes owner i mod n for key i into the region:
    we read exactly those, for ROUTE_SHARED and LOOKUP_SHARED."""
    peer = ProcessPeer(ForeignPeerSpec("fake", command=(sys.executable, str(FAKE),
                                                        "shared-ok")), SERVERS)
    try:
        assert peer.shares_batches
        keys = [f"k{i}".encode() for i in range(5_000)]
        assert peer.route_many(keys).tolist() == [i % len(SERVERS) for i in range(5_000)]
        hashes = np.arange(777, dtype=np.uint64)
        assert peer.lookup_hashes(hashes).tolist() == [i % len(SERVERS) for i in range(777)]
    finally:
        peer.close()
