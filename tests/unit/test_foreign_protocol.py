"""The process protocol: its codec (frames as docs/guide/foreign-peers.md lays them out)
and a whole conversation with the Python example adapter (peers/python/ketama_peer.py),
which must route every key as our libketama construction, before and after ADD and
REMOVE."""

from __future__ import annotations

import struct
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.fields import Fields
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers.foreign import ForeignPeerSpec, ProcessPeer, protocol
from harness.recipes.peers.foreign.protocol import ProtocolError
from tests.paths import ROOT

ADAPTER = ROOT / "peers" / "python" / "ketama_peer.py"
KEYS = [f"key-{i}".encode() for i in range(20_000)]


def test_frames_are_laid_out_as_documented() -> None:
    """HELLO, BUILD and ROUTE byte for byte: length (opcode included), opcode, payload."""
    assert protocol.hello() == b"\x05\x00\x00\x00H\x02\x00\x00\x00"
    assert protocol.build(["a"], [2.0], "") == (
        struct.pack("<I", 1 + 4 + 4 + 1 + 8 + 4) + b"B" + struct.pack("<I", 1)
        + struct.pack("<I", 1) + b"a" + struct.pack("<d", 2.0) + struct.pack("<I", 0))
    blob, offsets = protocol.packed_keys([b"k1", b"", b"key"])
    assert protocol.route(blob, offsets) == (
        struct.pack("<I", 1 + 4 + 16 + 5) + b"R" + struct.pack("<5I", 3, 0, 2, 2, 5)
        + b"k1key")
    assert protocol.quit_() == b"\x01\x00\x00\x00Q"


@given(st.lists(st.integers(0, 9), max_size=50))
def test_owners_decode_and_are_checked(owners: list[int]) -> None:
    """A reply of n owners, each < servers, decodes to them; one more or less owner, or
    one out of range, is a ProtocolError saying so."""
    payload = struct.pack(f"<I{len(owners)}H", len(owners), *owners)
    assert protocol.parse_owners(payload, len(owners), 10, "ROUTE").tolist() == owners
    with pytest.raises(ProtocolError, match="owners"):
        protocol.parse_owners(payload, len(owners) + 1, 10, "ROUTE")
    if owners:
        # One server fewer than the largest owner needs.
        with pytest.raises(ProtocolError, match=f"out of range for {max(owners)} servers"):
            protocol.parse_owners(payload, len(owners), max(owners), "ROUTE")
    with pytest.raises(ProtocolError, match="bytes more than"):
        protocol.parse_owners(payload + b"\0", len(owners), 10, "ROUTE")


def _libketama(servers: list[Server]) -> np.ndarray:
    ring = get_algorithm("ring")
    params = ring.parse_params(Fields("test", "routes_like", {"construction": "libketama"}))
    return ring.from_params(servers, params).route(KEYS)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("weights", [(1,), (1, 2, 4)])
def test_python_adapter_routes_like_libketama(weights: tuple[int, ...], shared: bool) -> None:
    """The example adapter answers every request; its routes equal our libketama ring on
    20,000 keys at equal weights and at 1:2:4, also after ADD and REMOVE; LOOKUP of our
    key hashes agrees; TIME and MEMORY give figures; all of it through the shared region
    (protocol 2) and, given no region, through the pipe alone (as a version-1 peer)."""
    servers = [Server(f"10.0.{i}.1:11211", weights[i % len(weights)]) for i in range(12)]
    peer = ProcessPeer(ForeignPeerSpec("ketama", command=(sys.executable, str(ADAPTER))),
                       servers, shared_batches=shared)
    try:
        assert peer.hello.name == "ketama_peer.py"
        assert peer.shares_batches == shared
        assert peer.entries == 160 * 12 if weights == (1,) else peer.entries > 0
        assert np.array_equal(peer.route_many(KEYS), _libketama(servers))
        ring = get_algorithm("ring")
        ours = ring.from_params(servers, ring.parse_params(
            Fields("test", "r", {"construction": "libketama"})))
        hashes = ours.hash_keys(KEYS[:2000]).astype(np.uint64)
        assert np.array_equal(peer.lookup_hashes(hashes), ours.lookup_many(hashes))
        blob, offsets = protocol.packed_keys(KEYS[:500])
        times = peer.self_timed(blob, offsets, 3)
        assert len(times) == 3 and all(t > 0 for t in times)
        assert peer.nbytes > 0
        peer.add("10.0.99.1:11211", 2)
        grown = [*servers, Server("10.0.99.1:11211", 2)]
        assert np.array_equal(peer.route_many(KEYS), _libketama(grown))
        peer.remove(servers[3].name)
        shrunk = [s for s in grown if s.name != servers[3].name]
        assert np.array_equal(peer.route_many(KEYS), _libketama(shrunk))
    finally:
        peer.close()
    assert peer._process._process.returncode == 0  # QUIT ended it of its own accord
