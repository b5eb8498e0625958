"""Known-answer and consistency tests for the hash functions."""

import hashlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.errors import UnknownNameError
from harness.core.hashing import HASHES, fmix32, fnv1a32, get_hash, hash_many, hash_one

pytestmark = pytest.mark.c_core


def test_crc32_check_value() -> None:
    """CRC-32 of "123456789" is the published check value 0xCBF43926."""
    assert hash_one("crc32", b"123456789") == 0xCBF43926


def test_fnv1a32_published_vectors() -> None:
    """FNV-1a 32 matches the published vectors for "", "a" and "foobar"."""
    assert fnv1a32(b"") == 0x811C9DC5
    assert fnv1a32(b"a") == 0xE40C292C
    assert fnv1a32(b"foobar") == 0xBF9CF968


def test_fmix32_is_murmur3_finalizer() -> None:
    """fmix32 maps 0 to 0 and matches MurmurHash3_x86_32's finalizer on a known input."""
    assert fmix32(0) == 0
    # MurmurHash3_x86_32(b"", seed=1) = fmix32(1 ^ 0) = 0x514E28B7 (published test vector).
    assert fmix32(1) == 0x514E28B7


def test_fnv1a_fmix32_composes() -> None:
    """fnv1a-fmix32 is fmix32 applied to FNV-1a 32."""
    assert hash_one("fnv1a-fmix32", b"a") == fmix32(0xE40C292C)


def test_md5_32_is_first_four_digest_bytes_big_endian() -> None:
    """md5-32 of "" is the first 4 bytes of d41d8cd98f00b204e9800998ecf8427e."""
    assert hash_one("md5-32", b"") == 0xD41D8CD9


def test_blake2b_truncations_match_rfc7693_vector() -> None:
    """BLAKE2b-512("abc") starts ba80a53f981c4d0d (RFC 7693, appendix A)."""
    assert hashlib.blake2b(b"abc").hexdigest().startswith("ba80a53f981c4d0d")
    assert hash_one("blake2b-32", b"abc") == 0xBA80A53F
    assert hash_one("blake2b-64", b"abc") == 0xBA80A53F981C4D0D


@pytest.mark.parametrize("name", sorted(HASHES))
@given(names=st.lists(st.binary(max_size=40), max_size=50))
def test_batch_agrees_with_single(name: str, names: list[bytes]) -> None:
    """The batch form of every hash returns exactly the single-name values, in its dtype."""
    batch = hash_many(name, names)
    assert batch.dtype == get_hash(name).dtype
    assert batch.tolist() == [hash_one(name, n) for n in names]


@pytest.mark.parametrize("name", sorted(HASHES))
def test_hash_width(name: str) -> None:
    """Every hash stays within its declared width."""
    values = hash_many(name, [f"k{i}".encode() for i in range(2000)])
    assert int(values.max()) < 2 ** get_hash(name).bits
    assert len(np.unique(values)) > 1990  # and spreads names out


def test_unknown_hash_lists_valid_names() -> None:
    """An unknown hash name gets an error that lists the valid ones."""
    with pytest.raises(UnknownNameError, match=r"valid hash names: .*blake2b-32.*crc32"):
        get_hash("sha7")
