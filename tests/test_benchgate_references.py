"""The timing gate's references compute what they claim: the C scalar reference is a plain
lower bound, equal to `bisect_left` on every key, for 32- and 64-bit positions."""

from __future__ import annotations

import bisect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import _cbindings
from harness.errors import HarnessError


@given(
    bits=st.sampled_from([32, 64]),
    positions=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=200, unique=True),
    keys=st.lists(st.integers(0, 2**32 - 1), max_size=50),
)
def test_c_search_reference_is_bisect_left(bits: int, positions: list[int],
                                           keys: list[int]) -> None:
    shift = bits - 32  # 64-bit positions spread over the whole width
    ordered = sorted(p << shift for p in positions)
    search = _cbindings.search_reference(np.array(ordered, dtype=f"uint{bits}"))
    for key in [k << shift for k in keys] + [0, ordered[0], ordered[-1], 2**bits - 1]:
        assert search(key) == bisect.bisect_left(ordered, key)


def test_c_search_reference_refuses_what_it_cannot_search() -> None:
    with pytest.raises(HarnessError, match="16 bits"):
        _cbindings.search_reference(np.arange(4, dtype=np.uint16))
    with pytest.raises(HarnessError, match="0 of them"):
        _cbindings.search_reference(np.array([], dtype=np.uint32))

