"""A figure against a target (`harness.core.noise.judge_target`, `median_interval`): an
interval across the target is "within noise" whichever side its point estimate is on; a
clear interval is met or missed; the verdict never says of the interval what one of its
points contradicts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core import noise

finite = st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False)
goals = st.sampled_from(["at most", "at least"])


def _meets(value: float, goal: noise.Goal, target: float) -> bool:
    return value <= target if goal == "at most" else value >= target


@st.composite
def intervals(draw: st.DrawFn) -> tuple[float, float]:
    low, high = sorted((draw(finite), draw(finite)))
    return low, high


@given(intervals(), goals, finite, st.floats(0, 1))
def test_a_verdict_holds_for_every_point_of_its_interval(
        interval: tuple[float, float], goal: noise.Goal, target: float, where: float) -> None:
    """met: both ends (so every point) meet the goal; missed: neither does; within noise:
    one end does and the other does not, so the interval holds the target."""
    low, high = interval
    verdict = noise.judge_target(low, high, goal, target)
    ends = (_meets(low, goal, target), _meets(high, goal, target))
    assert verdict == {(True, True): "met", (False, False): "missed"}.get(ends, "within noise")
    point = low + where * (high - low)
    if verdict == "met":
        assert _meets(min(max(point, low), high), goal, target)
    if verdict == "within noise":
        assert low <= target <= high


@given(intervals(), finite)
def test_a_straddling_interval_is_noise_whatever_its_median(
        interval: tuple[float, float], target: float) -> None:
    """An interval with the target strictly inside: within noise for both goals, with the
    point estimate anywhere in it (the old overhead column judged the median alone)."""
    low, high = interval
    if not low < target < high:
        low, high = min(low, target - 1), max(high, target + 1)
    for goal in ("at most", "at least"):
        assert noise.judge_target(low, high, goal, target) == "within noise"


@given(finite, st.floats(1e-6, 1e6), st.floats(0, 1e6), goals)
def test_an_interval_clear_of_the_target_is_met_or_missed(
        target: float, gap: float, width: float, goal: noise.Goal) -> None:
    """Wholly below the target: an "at most" met and an "at least" missed; wholly above:
    the other way round."""
    below = (target - gap - width, target - gap)
    above = (target + gap, target + gap + width)
    expected = {"at most": ("met", "missed"), "at least": ("missed", "met")}[goal]
    assert noise.judge_target(*below, goal, target) == expected[0]
    assert noise.judge_target(*above, goal, target) == expected[1]


@given(intervals(), finite)
def test_at_least_is_at_most_mirrored(interval: tuple[float, float], target: float) -> None:
    low, high = interval
    assert (noise.judge_target(low, high, "at least", target)
            == noise.judge_target(-high, -low, "at most", -target))


@given(finite, finite, goals)
def test_a_point_interval_is_the_point_verdict(value: float, target: float,
                                               goal: noise.Goal) -> None:
    """No spread at all: the verdict of the figure itself, never noise."""
    expected = "met" if _meets(value, goal, target) else "missed"
    assert noise.judge_target(value, value, goal, target) == expected


@given(st.floats(0.01, 100), st.floats(0, 100))
def test_the_between_runs_judge_keeps_its_rule(low: float, width: float) -> None:
    """`judge` (compare, history), now written with `judge_target`, still says slower only
    when the whole interval is above 1.15 and faster only when it is below 1/1.15."""
    interval = noise.Interval(low, low, low + width)
    expected = ("slower" if interval.low > noise.BETWEEN_RUNS
                else "faster" if interval.high < 1 / noise.BETWEEN_RUNS else "within noise")
    assert noise.judge(interval) == expected


def test_refuses_what_is_no_interval() -> None:
    for low, high, target in ((2.0, 1.0, 0.0), (math.nan, 1.0, 0.0), (0.0, math.inf, 1.0),
                              (0.0, 1.0, math.nan)):
        with pytest.raises(ValueError):
            noise.judge_target(low, high, "at most", target)


differences = st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=60)


@given(differences)
def test_a_median_interval_holds_the_median_inside_the_rounds(rounds: list[float]) -> None:
    """Any sign: the interval holds the median and lies within the rounds' range."""
    estimate = noise.median_interval(rounds, resamples=200)
    assert estimate.basis == "rounds"
    assert min(rounds) <= estimate.low <= estimate.median <= estimate.high <= max(rounds)


@given(st.lists(st.floats(0.1, 50), min_size=5, max_size=30),
       st.lists(st.floats(0.1, 50), min_size=5, max_size=30), st.floats(-100, 100))
def test_rounds_evenly_either_side_of_the_target_are_noise(
        below: list[float], above: list[float], target: float) -> None:
    """As many rounds below the target as above it (the committed wall-clock case, rounds
    far either side): within noise, whether the median lands above or below."""
    count = min(len(below), len(above))
    rounds = [target - d for d in below[:count]] + [target + d for d in above[:count]]
    estimate = noise.median_interval(rounds, resamples=400)
    assert noise.judge_target(estimate.low, estimate.high, "at most", target) == \
        "within noise"


@given(st.lists(st.floats(1, 3), min_size=3, max_size=60), st.floats(-100, 100))
def test_rounds_all_clear_of_the_target_are_met_or_missed(offsets: list[float],
                                                          target: float) -> None:
    """Every round 1 to 3 under the target: met; every round over it: missed."""
    under = noise.median_interval([target - o for o in offsets], resamples=200)
    over = noise.median_interval([target + o for o in offsets], resamples=200)
    assert noise.judge_target(under.low, under.high, "at most", target) == "met"
    assert noise.judge_target(over.low, over.high, "at most", target) == "missed"


def test_a_median_interval_refuses_no_rounds_and_non_finite_rounds() -> None:
    for bad in ([], [1.0, math.nan], [math.inf], [0.0] * (noise.MAX_SAMPLES + 1)):
        with pytest.raises(ValueError):
            noise.median_interval(bad)
