"""SipHash-2-4, the keyed hash: the paper's vectors, the library against our C, keyed rings."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.hashing import (
    HASH_NAMES,
    KEYED_HASHES,
    get_hash,
    hash_many,
    hash_numbered,
    hash_one,
    is_keyed,
)
from harness.core.native import hashes as c_hashes
from harness.core.ring import reference_owners
from harness.core.servers import numbered_servers
from harness.recipes.algorithms.ring import RingAlgorithm, layouts_for
from harness.recipes.constructions.generator import generate_ring, generate_ring_reference
from harness.recipes.constructions.points import PointsConstruction, public_params
from harness.recipes.layouts import LAYOUTS

pytestmark = pytest.mark.c_core

#: the reference implementation's vectors (its vectors.h, also in the paper's appendix for
#: the 15-byte message): SipHash-2-4 digests, as little-endian bytes, of the messages
#: 00, 00 01, ... (0 to 63 bytes) under the key 00 01 .. 0f
PAPER_KEY = bytes(range(16))
VECTORS = [
    "310e0edd47db6f72", "fd67dc93c539f874", "5a4fa9d909806c0d", "2d7efbd796666785",
    "b7877127e09427cf", "8da699cd64557618", "cee3fe586e46c9cb", "37d1018bf50002ab",
    "6224939a79f5f593", "b0e4a90bdf82009e", "f3b9dd94c5bb5d7a", "a7ad6b22462fb3f4",
    "fbe50e86bc8f1e75", "903d84c02756ea14", "eef27a8e90ca23f7", "e545be4961ca29a1",
    "db9bc2577fcc2a3f", "9447be2cf5e99a69", "9cd38d96f0b3c14b", "bd6179a71dc96dbb",
    "98eea21af25cd6be", "c7673b2eb0cbf2d0", "883ea3e395675393", "c8ce5ccd8c030ca8",
    "94af49f6c650adb8", "eab8858ade92e1bc", "f315bb5bb835d817", "adcf6b0763612e2f",
    "a5c91da7acaa4dde", "716595876650a2a6", "28ef495c53a387ad", "42c341d8fa92d832",
    "ce7cf2722f512771", "e37859f94623f3a7", "381205bb1ab0e012", "ae97a10fd434e015",
    "b4a31508beff4d31", "81396229f0907902", "4d0cf49ee5d4dcca", "5c73336a76d8bf9a",
    "d0a704536ba93e0e", "925958fcd6420cad", "a915c29bc8067318", "952b79f3bc0aa6d4",
    "f21df2e41d4535f9", "87577519048f53a9", "10a56cf5dfcd9adb", "eb75095ccd986cd0",
    "51a9cb9ecba312e6", "96afadfc2ce666c7", "72fe52975a4364ee", "5a1645b276d592a1",
    "b274cb8ebf87870a", "6f9bb4203de7b381", "eaecb2a30b22a87f", "9924a43cc1315724",
    "bd838d3aafbf8db7", "0b1a2a3265d51aea", "135079a3231ce660", "932b2846e4d70666",
    "e1915f5cb1eca46c", "f325965ca16d629f", "575ff28e60381be5", "724506eb4c328a95",
]


def test_paper_appendix_vector() -> None:
    """The paper's worked example: the 15-byte message 00..0e gives 0xa129ca6149be45e5."""
    assert hash_one("siphash24-64", bytes(range(15)), PAPER_KEY) == 0xA129CA6149BE45E5
    assert hash_one("siphash24-32", bytes(range(15)), PAPER_KEY) == 0x49BE45E5


@pytest.mark.parametrize("length", range(64))
def test_reference_vectors_library_and_c(length: int) -> None:
    """The library (hash_one), our C (one name) and our C batch give every reference vector."""
    expected = int.from_bytes(bytes.fromhex(VECTORS[length]), "little")
    message = bytes(range(length))
    assert hash_one("siphash24-64", message, PAPER_KEY) == expected
    assert c_hashes.siphash24(message, PAPER_KEY) == expected
    assert int(hash_many("siphash24-64", [message], PAPER_KEY)[0]) == expected


def test_batch_of_all_vectors_at_once() -> None:
    """One C batch over the 64 messages (every length mod 8, several blocks) gives them all."""
    got = c_hashes.siphash24_many([bytes(range(n)) for n in range(64)], PAPER_KEY)
    assert [int(v).to_bytes(8, "little").hex() for v in got] == VECTORS


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=30), st.binary(min_size=16, max_size=16))
def test_c_batch_equals_library(names: list[bytes], key: bytes) -> None:
    """For any names and key, the C batch equals the library name by name, 64 and 32 bits."""
    for name in ("siphash24-64", "siphash24-32"):
        batch = hash_many(name, names, key)
        assert batch.dtype == get_hash(name, key).dtype
        assert batch.tolist() == [hash_one(name, n, key) for n in names]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(HASH_NAMES), st.binary(max_size=40), st.integers(0, 3000),
       st.binary(min_size=16, max_size=16))
def test_numbered_candidates_equal_named_ones(name: str, prefix: bytes, count: int,
                                              key: bytes) -> None:
    """hash_numbered (names formatted in C) equals hash_many over prefix + str(j), every hash."""
    secret = key if is_keyed(name) else None
    got = hash_numbered(name, prefix, count, secret)
    expected = hash_many(name, [prefix + str(j).encode() for j in range(count)], secret)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_key_rules() -> None:
    """A keyed hash needs a 16-byte key; an unkeyed one takes none; names are listed."""
    with pytest.raises(HarnessError, match="is keyed"):
        get_hash("siphash24-32")
    with pytest.raises(HarnessError, match="16 bytes"):
        get_hash("siphash24-32", b"short")
    with pytest.raises(HarnessError, match="takes no key"):
        get_hash("blake2b-32", PAPER_KEY)
    with pytest.raises(HarnessError, match="at most 200 bytes"):
        c_hashes.siphash24_numbered(b"x" * 201, 1, PAPER_KEY)
    assert set(KEYED_HASHES) <= set(HASH_NAMES)


def test_another_key_places_names_elsewhere() -> None:
    """Two keys give unrelated hashes: about 1 in 2**32 agree, none of 10,000 here."""
    names = [f"key-{i}".encode() for i in range(10_000)]
    a = hash_many("siphash24-32", names, PAPER_KEY)
    b = hash_many("siphash24-32", names, bytes(16))
    assert int((a == b).sum()) == 0


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 12), st.integers(1, 40), st.sampled_from(sorted(KEYED_HASHES)),
       st.binary(min_size=16, max_size=16))
def test_keyed_ring_parity_across_layouts(servers: int, points: int, name: str,
                                          key: bytes) -> None:
    """A keyed ring equals its Python reference, and every layout of its width routes keys
    (wrap-around included) exactly as the plain reference lookup."""
    fleet = numbered_servers(servers)
    ring = generate_ring(fleet, points, name, hash_key=key)
    reference = generate_ring_reference(fleet, points, name, hash_key=key)
    assert np.array_equal(ring.positions, reference.positions)
    assert np.array_equal(ring.owners, reference.owners)
    hashes = hash_many(name, [f"k{i}".encode() for i in range(500)], key)
    top = np.iinfo(hashes.dtype).max
    hashes = np.concatenate([hashes, np.array([0, top], dtype=hashes.dtype),
                             ring.positions[:3], ring.positions[-1:]])
    expected = reference_owners(ring, hashes)
    for layout in layouts_for(ring.bits):
        built = LAYOUTS[layout].build(ring.positions, ring.owners)
        assert np.array_equal(built.lookup_many(hashes), expected), layout


def test_points_construction_key_rules() -> None:
    """The construction needs a key for a keyed hash, refuses one for another hash, and
    records none."""
    with pytest.raises(ScenarioError, match="hash_key is required"):
        PointsConstruction(hash="siphash24-32")
    with pytest.raises(ScenarioError, match="must be left out"):
        PointsConstruction(hash="crc32", hash_key=PAPER_KEY.hex())
    ring = RingAlgorithm.build(numbered_servers(3), hash="siphash24-32",
                               hash_key=PAPER_KEY.hex(), points_per_weight=4)
    assert ring.params["hash_key"] == PAPER_KEY.hex()
    assert PAPER_KEY.hex() not in str(public_params(ring.params))


def test_drawn_keys_differ_and_rebuilds_agree() -> None:
    """A ring given no key draws one; rebuilding from its parameters routes alike."""
    fleet = numbered_servers(5)
    a = RingAlgorithm.build(fleet, hash="siphash24-32", points_per_weight=8)
    b = RingAlgorithm.build(fleet, hash="siphash24-32", points_per_weight=8)
    assert a.params["hash_key"] != b.params["hash_key"]
    again = RingAlgorithm.from_params(fleet, a.params)
    assert np.array_equal(again.ring.positions, a.ring.positions)
