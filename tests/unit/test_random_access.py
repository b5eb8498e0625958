"""The one-random-access reference: what it reads, and that it can be timed."""

from __future__ import annotations

import numpy as np
import pytest

from harness.metrics.instruments.floor import RandomAccess, random_access_ns


def test_reads_one_element_per_key_at_the_scaled_index() -> None:
    """Key h reads element (h * entries) >> 32: the whole array is reachable, in order."""
    reference = RandomAccess(1000)
    keys = np.array([0, 2**31, 2**32 - 1, 123_456_789], dtype=np.uint32)
    expected = [(int(k) * 1000) >> 32 for k in keys]
    assert reference.lookup_many(keys).tolist() == expected
    assert reference.nbytes == 4000


def test_64_bit_keys_are_read_by_their_top_bits() -> None:
    """A 64-bit key hash spreads over the array by its top 32 bits."""
    reference = RandomAccess(10)
    keys = np.array([2**63, 2**64 - 1], dtype=np.uint64)
    assert reference.lookup_many(keys).tolist() == [5, 9]


def test_random_access_ns_is_a_positive_time() -> None:
    """The reference times in nanoseconds per key, a positive number."""
    keys = np.random.default_rng(0).integers(0, 2**32, 10_000, dtype=np.uint32)
    assert random_access_ns(100_000, keys, repeats=3) > 0


def test_an_empty_array_is_refused() -> None:
    """An array of no entries has nothing to read."""
    with pytest.raises(ValueError, match="at least 1"):
        RandomAccess(0)
