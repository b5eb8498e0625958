"""BLAKE2b-512 in SIMD lanes (cext/blake2b_lanes.c) against hashlib, at every name length.

The C generator and `hash_many` hash names of up to one 128-byte block eight at a time
and send longer ones to OpenSSL (hashlib for `hash_many`); these tests reach both sides
of that limit, batches cut short at a server's end and names whose length changes
inside a batch (j from 9 to 10).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from harness.core.errors import HarnessError
from harness.core.hashing import get_hash, hash_many
from harness.core.native import generate as c_generate
from harness.recipes.constructions.generator import parse_template

pytestmark = pytest.mark.c_core


def _hashlib_position(name: bytes, width: int) -> int:
    return int.from_bytes(hashlib.blake2b(name).digest()[:width], "big")


def _generated(hash_name: str, template: str, servers: list[bytes], counts: list[int],
               threads: int = 1) -> list[int]:
    literals, segments = parse_template(template) or (b"", [])
    positions, owners = c_generate.generate_points(hash_name, literals, segments, servers,
                                                   counts, threads)
    if owners is None:  # packed words: position << 16 | owner
        return [int(word) >> 16 for word in positions]
    return [int(p) for p in positions]


@pytest.mark.parametrize(("hash_name", "width"), [("blake2b-32", 4), ("blake2b-64", 8)])
@pytest.mark.parametrize("literal_length", range(0, 136))
def test_every_name_length_equals_hashlib(hash_name: str, width: int,
                                          literal_length: int) -> None:
    """Names of 1 to 137 bytes: one block or more (OpenSSL), 12 names per server."""
    template = "x" * literal_length + "{server}{j}"
    servers, counts = [b"", b"s"], [12, 5]
    expected = [_hashlib_position(template.format(server=s.decode(), j=j).encode(), width)
                for s, count in zip(servers, counts, strict=True) for j in range(count)]
    assert _generated(hash_name, template, servers, counts) == expected


def test_empty_name_equals_hashlib() -> None:
    """A zero-length message is one compression of a zero block with a zero counter."""
    assert _generated("blake2b-32", "", [b"a", b"b"], [1, 1]) == [
        _hashlib_position(b"", 4)] * 2


@pytest.mark.parametrize("threads", [1, 2])
def test_mixed_block_counts_equal_hashlib(threads: int) -> None:
    """One server's names fit a block and the other's do not: each is hashed its own way."""
    servers = [b"short", b"l" * 130, b"", b"m" * 120]
    counts = [30, 9, 1, 101]
    expected = [_hashlib_position(f"{s.decode()}:{j}".encode(), 4)
                for s, count in zip(servers, counts, strict=True) for j in range(count)]
    assert _generated("blake2b-32", "{server}:{j}", servers, counts, threads) == expected


def test_j_fields_carry_in_place() -> None:
    """Names are updated in place from j to j+1: carries through 9s in every {j} field."""
    counts = [1_205]
    got = _generated("blake2b-64", "{j}-{server}-{j}9", [b"9"], counts)
    expected = [_hashlib_position(f"{j}-9-{j}9".encode(), 8) for j in range(counts[0])]
    np.testing.assert_array_equal(np.array(got, dtype=np.uint64),
                                  np.array(expected, dtype=np.uint64))


@pytest.mark.parametrize("hash_name", ["blake2b-32", "blake2b-64"])
def test_batch_keys_equal_hashlib_at_every_length(hash_name: str) -> None:
    """`hash_many` of keys of 0 to 140 bytes (in C up to a block, hashlib past it) and of
    a batch that all fits (in C alone) against hashlib one key at a time."""
    width = get_hash(hash_name).bits // 8
    keys = [bytes(range(1, length + 1)) for length in range(141)]
    for batch in (keys, keys[:129], keys[:13]):
        assert hash_many(hash_name, batch).tolist() == [
            _hashlib_position(key, width) for key in batch]


def test_batch_refuses_a_name_over_one_block() -> None:
    """The C batch takes names of one block at most; hash_many sends longer ones to hashlib."""
    with pytest.raises(HarnessError, match="over one block"):
        c_generate.blake2b_prefixes_many([b"x" * 129], 4)
