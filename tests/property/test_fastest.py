"""Naming the fastest (`harness.metrics.instruments.targets.leaders`): one timing is named
the fastest only when every other is slower by its ratio's whole interval; timings whose
intervals overlap are named together as a tie, whichever median is lower."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.tables import literal
from harness.metrics.instruments.targets import (
    Leaders,
    clearly_slower,
    leaders,
    leaders_note,
)
from harness.metrics.instruments.timing import Timing

ns = st.floats(0.5, 1e5, allow_nan=False, allow_infinity=False)


@st.composite
def spreads(draw: st.DrawFn) -> Timing:
    """A timing kept without its rounds: a median inside its min-max."""
    low, middle, high = sorted((draw(ns), draw(ns), draw(ns)))
    return Timing(middle, low, high, 5)


@st.composite
def rounds(draw: st.DrawFn) -> list[float]:
    return draw(st.lists(ns, min_size=1, max_size=15))


def _kept(samples: list[float]) -> Timing:
    return Timing.of(samples)


@given(spreads(), spreads())
def test_two_ranges_clear_name_one_and_overlapping_name_both(a: Timing, b: Timing) -> None:
    """Kept without rounds, the ratio's interval is the widest the ranges allow: the
    lower is named alone exactly when the other's range lies wholly above its own."""
    found = leaders([("a", a), ("b", b)])
    lower, higher = (a, b) if b.median >= a.median else (b, a)
    if higher.min > lower.max:
        assert found.clear and len(found.names) == 1
        assert found.names[0] == ("a" if lower is a else "b")
    else:
        assert not found.clear and set(found.names) == {"a", "b"}
    assert found.margin is not None and found.margin.low <= found.margin.ratio
    assert found.margin.ratio <= found.margin.high


@given(rounds(), st.floats(1e-3, 1e4))
def test_rounds_wholly_apart_name_the_faster(samples: list[float], gap: float) -> None:
    """Every round of one form below every round of the other: whatever the bootstrap
    resamples, the ratio stays above 1, so the faster is named alone."""
    slower = [max(samples) + gap + s for s in samples]
    found = leaders([("slow", _kept(slower)), ("fast", _kept(samples))])
    assert found.clear and found.names == ("fast",) and found.runner_up == "slow"
    assert found.margin is not None and found.margin.low > 1


@given(rounds(), st.randoms(use_true_random=False))
def test_the_same_rounds_in_another_order_are_a_tie(samples: list[float],
                                                    order: random.Random) -> None:
    """Two forms with the same rounds (in any order) have equal medians: a tie, named
    in the order given."""
    other = list(samples)
    order.shuffle(other)
    found = leaders([("first", _kept(samples)), ("second", _kept(other))])
    assert found.names == ("first", "second") and not found.clear
    assert found.margin is not None and found.margin.low <= 1 <= found.margin.high


@given(st.lists(spreads(), min_size=1, max_size=6))
def test_the_leaders_are_exactly_those_not_clearly_slower(timings: list[Timing]) -> None:
    """The first name has the lowest median (the first listed of equals); every other
    name is not clearly slower than it, every timing left out is."""
    named = [(f"form {i}", t) for i, t in enumerate(timings)]
    found = leaders(named)
    by_name = dict(named)
    lowest = min(t.median for t in timings)
    assert found.base == next(n for n, t in named if t.median == lowest)
    for name, timing in named:
        if name == found.base:
            continue
        assert (name in found.names) != clearly_slower(timing, by_name[found.base])[0]
    assert list(found.medians) == sorted(found.medians)
    assert found.clear == (len(timings) > 1 and len(found.names) == 1)
    assert (found.runner_up is None) == (len(timings) == 1)


def test_no_timing_is_refused() -> None:
    with pytest.raises(ValueError, match="one or more timings"):
        leaders([])


def _tie() -> Leaders:
    return leaders([("a<b>", Timing(10.0, 9.0, 12.0, 5)), ("c*d", Timing(11.0, 10.0, 13.0, 5)),
                    ("slow", Timing(50.0, 49.0, 51.0, 5))])


def test_a_tie_note_names_every_leader_and_says_within_noise() -> None:
    note = leaders_note("batch lookup", _tie(), literal, "ns per key")
    assert note is not None
    assert "within noise of each other (10.0 and 11.0 ns per key" in note
    assert r"a\<b> and c\*d" in note and "slow" not in note
    assert "clear" in note and "none clear of the rest" in note


def test_a_clear_note_gives_the_runner_ups_interval() -> None:
    found = leaders([("fast", Timing(10.0, 9.0, 11.0, 5)), ("slow", Timing(20.0, 19.0, 22.0, 5))])
    note = leaders_note("batch lookup", found, literal, "ns per key")
    assert note == ("Fastest batch lookup: fast (10.0 ns per key), clear of the runner-up by "
                    "its interval: slow / fast 2.00x, 1.73x to 2.44x (the rounds' range; "
                    "rounds not kept), entirely above 1.")
    assert leaders_note("batch lookup", leaders([("one", Timing(1.0, 1.0, 1.0, 1))]),
                        literal, "ns") is None
