"""Our MD5 (cext/md5_many.c) and the batch CRC-32 (cext/crc32_many.c) against hashlib,
zlib and RFC 1321's test suite, and the recipes' key hashes against their references."""

import hashlib
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.hashing import hash_many
from harness.core.native.crc32_many import crc32_many
from harness.core.native.md5_many import md5_digest, md5_prefix32_many
from harness.core.ring import reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions.libketama import (
    LibketamaConstruction,
    md5_key_hashes,
    md5_key_hashes_reference,
)
from harness.recipes.constructions.libmemcached import MODES, LibmemcachedConstruction
from harness.recipes.constructions.twemproxy import TwemproxyConstruction

pytestmark = pytest.mark.c_core

#: RFC 1321, appendix A.5 (the test suite): message and digest
RFC1321_SUITE = [
    (b"", "d41d8cd98f00b204e9800998ecf8427e"),
    (b"a", "0cc175b9c0f1b6a831c399e269772661"),
    (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
    (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    (b"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
    (b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
     "d174ab98d277d9f5a5611c2c9f419d9f"),
    (b"1234567890" * 8, "57edf4a22be3c955ac49da2e2107b67a"),
]


@pytest.mark.parametrize(("message", "digest"), RFC1321_SUITE)
def test_rfc1321_test_suite(message: bytes, digest: str) -> None:
    """The digests of RFC 1321's test suite, whole and as both 4-byte prefixes."""
    assert md5_digest(message).hex() == digest
    assert md5_prefix32_many([message], "little")[0] == int.from_bytes(
        bytes.fromhex(digest)[:4], "little")
    assert md5_prefix32_many([message], "big")[0] == int(digest[:8], 16)


def test_every_length_to_200_around_the_block_boundaries() -> None:
    """Every length 0..200 (one block up to 55 bytes, two from 56, three from 120, ...),
    in one batch, so that names of every length sit next to each other in the buffer."""
    names = [bytes((7 * i + n) % 256 for i in range(n)) for n in range(201)]
    assert [md5_digest(name) for name in names] == [hashlib.md5(n).digest() for n in names]
    little = md5_prefix32_many(names, "little")
    assert little.tolist() == [int.from_bytes(hashlib.md5(n).digest()[:4], "little")
                               for n in names]


@given(st.binary(max_size=200))
def test_digest_matches_hashlib(data: bytes) -> None:
    """Any bytes up to 200 long: the same digest as hashlib.md5."""
    assert md5_digest(data) == hashlib.md5(data).digest()


@given(st.lists(st.binary(max_size=200), max_size=40))
def test_batch_prefixes_match_hashlib(names: list[bytes]) -> None:
    """A batch of names of any lengths: both byte orders of the first 4 digest bytes."""
    for order in ("little", "big"):
        batch = md5_prefix32_many(names, order)
        assert batch.dtype == np.uint32
        assert batch.tolist() == [int.from_bytes(hashlib.md5(n).digest()[:4], order)
                                  for n in names]


@given(st.lists(st.binary(max_size=70), max_size=40))
def test_one_block_lanes_and_long_names_mixed(names: list[bytes]) -> None:
    """Names of one block (up to 55 bytes) are hashed eight side by side, a group with a
    longer name one by one: batches that mix both, and end in a partial group."""
    assert md5_prefix32_many(names, "big").tolist() == [
        int.from_bytes(hashlib.md5(n).digest()[:4], "big") for n in names]


def test_md5_32_is_big_endian_prefix() -> None:
    """The harness's md5-32 batch reads the prefix big-endian, libketama's little-endian."""
    names = [b"", b"abc", b"key:1"]
    assert hash_many("md5-32", names).tolist() == md5_prefix32_many(names, "big").tolist()
    assert md5_key_hashes(names).tolist() == md5_key_hashes_reference(names).tolist()
    assert md5_key_hashes([b"abc"])[0] == 0x98500190  # 90 01 50 98, little-endian


def test_crc32_check_value_and_empty() -> None:
    """CRC-32 of "123456789" is 0xCBF43926; of nothing, 0."""
    assert crc32_many([b"123456789", b""]).tolist() == [0xCBF43926, 0]
    assert crc32_many([]).shape == (0,)


@given(st.lists(st.binary(max_size=200), max_size=40))
def test_crc32_batch_matches_zlib(names: list[bytes]) -> None:
    """Any batch: the same CRC-32 as Python's zlib.crc32, name by name."""
    batch = crc32_many(names)
    assert batch.dtype == np.uint32
    assert batch.tolist() == [zlib.crc32(n) for n in names]


KEYS = [f"key:{i}".encode() for i in range(2000)] + [b"", "ключ".encode(), b"k" * 300]


@pytest.mark.parametrize("construction", [
    LibketamaConstruction(),
    *[LibmemcachedConstruction(mode=mode) for mode in MODES],
    TwemproxyConstruction(key_hash="md5"),
])
def test_ketama_clients_key_hashes_match_hashlib(construction: LibketamaConstruction) -> None:
    """libketama, libmemcached in every mode and twemproxy's md5 hash keys as hashlib does
    (twemproxy hashes an empty key to 0, whatever the hash)."""
    expected = md5_key_hashes_reference(KEYS)
    if isinstance(construction, TwemproxyConstruction):
        expected[np.array([not key for key in KEYS])] = 0
    assert construction.key_hashes(KEYS).tolist() == expected.tolist()


def test_routes_from_names_match_the_reference_ring() -> None:
    """The whole route from names: C key hashes on the C ring give the owners that hashlib's
    key hashes give on the Python reference ring."""
    servers = [Server(f"10.0.0.{i}:11211", float(1 + i % 3)) for i in range(12)]
    construction = LibketamaConstruction()
    ring = construction.build_ring(servers)
    reference = construction.build_ring_reference(servers)
    owners = reference_lookup_many(ring, construction.key_hashes(KEYS))
    assert owners == reference_lookup_many(reference, md5_key_hashes_reference(KEYS))
