"""cext/trait_hashes.c against the plain-Python definitions (harness/core/trait_hashes.py)
and the xxhash library: every length around the stripe and lane boundaries, any bytes,
any seed; an unknown kind refused."""

from __future__ import annotations

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.native import _c
from harness.core.native.trait_hashes import TRAIT_HASH_KINDS, trait_hash_many
from harness.core.trait_hashes import TRAIT_HASHES, murmur3_32

pytestmark = pytest.mark.c_core

#: lengths on both sides of xxHash32's 16-byte and xxHash64's 32-byte stripes, and of the
#: 4- and 8-byte lanes of the tails
LENGTHS = [*range(0, 70), 127, 128, 129, 1000]


@pytest.mark.parametrize("name", list(TRAIT_HASH_KINDS))
def test_every_length_is_the_plain_hash(name: str) -> None:
    names = [bytes((7 * i + n) % 256 for i in range(n)) for n in LENGTHS]
    assert trait_hash_many(names, name).tolist() == [TRAIT_HASHES[name].one(n) for n in names]


@settings(max_examples=200, deadline=None)
@given(names=st.lists(st.binary(max_size=80), max_size=8),
       seed=st.integers(0, 2**64 - 1))
def test_seeded_hashes_are_the_references(names: list[bytes], seed: int) -> None:
    low = seed & 0xFFFFFFFF
    assert trait_hash_many(names, "xxh64", seed).tolist() == [
        xxhash.xxh64_intdigest(n, seed) for n in names]
    assert trait_hash_many(names, "xxh32", seed).tolist() == [
        xxhash.xxh32_intdigest(n, low) for n in names]
    assert trait_hash_many(names, "murmur3-32", seed).tolist() == [
        murmur3_32(n, low) for n in names]


def test_unknown_kind_refused() -> None:
    out = _c.ffi.new("uint64_t[1]", [123])
    offsets = _c.ffi.new("uint64_t[2]", [0, 1])
    assert _c.lib.trait_hash_many(b"a", offsets, 1, 8, 0, out) == -1
    assert _c.lib.trait_hash_many(b"a", offsets, 1, -1, 0, out) == -1
    assert out[0] == 123
