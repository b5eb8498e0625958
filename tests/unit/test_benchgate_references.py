"""The timing gate's references compute what they claim: the C scalar reference is a plain
lower bound, equal to `bisect_left` on every key, for 32- and 64-bit positions; a quick
batch looks up more keys to fill a timed round; a layout that builds an index table is
timed against a reference that computes the same table."""

from __future__ import annotations

import bisect
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.apps.benchgate.plan import MAX_ROUND_SCALE, MIN_ROUND_SECONDS, PLANS, round_scale
from harness.apps.benchgate.references import build_reference
from harness.core.errors import HarnessError
from harness.core.native import scalar as c_scalar
from harness.recipes.layouts import LAYOUTS

pytestmark = pytest.mark.c_core


@given(
    bits=st.sampled_from([32, 64]),
    positions=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=200, unique=True),
    keys=st.lists(st.integers(0, 2**32 - 1), max_size=50),
)
def test_c_search_reference_is_bisect_left(bits: int, positions: list[int],
                                           keys: list[int]) -> None:
    shift = bits - 32  # 64-bit positions spread over the whole width
    ordered = sorted(p << shift for p in positions)
    search = c_scalar.search_reference(np.array(ordered, dtype=f"uint{bits}"))
    for key in [k << shift for k in keys] + [0, ordered[0], ordered[-1], 2**bits - 1]:
        assert search(key) == bisect.bisect_left(ordered, key)


def test_c_search_reference_refuses_what_it_cannot_search() -> None:
    with pytest.raises(HarnessError, match="16 bits"):
        c_scalar.search_reference(np.arange(4, dtype=np.uint16))
    with pytest.raises(HarnessError, match="0 of them"):
        c_scalar.search_reference(np.array([], dtype=np.uint32))



@given(st.floats(min_value=1e-9, max_value=1.0, allow_nan=False))
def test_round_scale_is_the_fewest_power_of_four_reaching_the_minimum(seconds: float) -> None:
    """A quick batch looks up just enough more keys to fill a round; a slow one keeps the
    plan's keys."""
    scale = round_scale(seconds)
    assert scale in (1, 4, 16)
    assert scale * seconds >= MIN_ROUND_SECONDS or scale == 16
    assert scale == 1 or (scale // 4) * seconds < MIN_ROUND_SECONDS


def test_round_scale_for_the_calls_the_suite_times() -> None:
    """The bucketed batch on the 16k ring (~15 us) looks up 16 times the keys; a
    search-based batch (~0.4 ms) the plan's keys."""
    assert round_scale(15e-6) == 16
    assert round_scale(0.4e-3) == 1


def test_every_timed_plan_has_keys_for_the_largest_scale() -> None:
    """A timed plan draws a scaled batch from its parity keys, so it must hold enough of
    them; a plan that does not is refused when it is defined."""
    for plan in PLANS.values():
        if plan.measures == "time":
            assert plan.parity_keys >= plan.batch_keys * MAX_ROUND_SCALE
    with pytest.raises(ValueError, match="parity_keys"):
        replace(PLANS["smoke"], parity_keys=PLANS["smoke"].batch_keys)



@given(positions=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=300, unique=True))
def test_build_reference_of_an_indexed_layout_computes_its_index(positions: list[int]) -> None:
    """The bucketed layout's build reference computes the layout's offset table (where each
    bucket ends), so it does the scalar pass the build does, not only the copies; a
    layout without an index gets the copies and the fill alone."""
    bucketed = LAYOUTS["bucketed"]
    assert bucketed.index_bits == 16 and LAYOUTS["numpy-packed"].index_bits == 0
    ordered = np.array(sorted(positions), dtype=np.uint32)
    owners = np.arange(len(ordered), dtype=np.uint16)
    layout = bucketed.build(ordered, owners)
    done = build_reference(ordered, owners, layout.nbytes,
                           index_bits=bucketed.index_bits)()
    assert isinstance(done, tuple) and len(done) == 4
    copied, _, filled, ends = done
    # bucketed.h: bucket b's entries end where the positions above b's top 16 bits begin
    buckets = {p >> 16 for p in positions} | {0, 2**16 - 1}
    assert len(ends) == 2**16
    assert all(ends[b] == bisect.bisect_right(list(ordered), (b << 16) | 0xFFFF)
               for b in buckets)
    assert list(copied) == list(ordered) and len(filled) == layout.nbytes
    plain = build_reference(ordered, owners, layout.nbytes)()
    assert isinstance(plain, tuple) and len(plain) == 3


def test_build_reference_of_object_entries_makes_the_objects() -> None:
    """The tuples layout's build reference makes a list of (position, owner) tuples of
    Python ints, the kind of work its build does, besides the copies and the fill."""
    tuples = LAYOUTS["tuples"]
    assert tuples.object_entries and not LAYOUTS["bucketed"].object_entries
    positions = np.array([3, 70_000, 2**32 - 1], dtype=np.uint32)
    owners = np.array([2, 0, 1], dtype=np.uint16)
    done = build_reference(positions, owners, 64, object_entries=True)()
    assert isinstance(done, tuple) and len(done) == 4
    assert done[-1] == [(3, 2), (70_000, 0), (2**32 - 1, 1)]
    assert all(type(p) is int for p, _ in done[-1])
