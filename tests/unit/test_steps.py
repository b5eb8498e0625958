"""Step detection over a figure's history: persistent changes flagged, lone outliers not."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.core.steps import steps


def test_constant_and_noisy_series_have_no_step() -> None:
    """Values within the tolerance of each other are one level."""
    assert steps([100.0] * 6, 0.05) == []
    assert steps([100, 103, 98, 101, 97, 102], 0.05) == []


def test_a_lone_outlier_is_not_a_step() -> None:
    """One run off and the next back: noise, not a change."""
    assert steps([100, 100, 150, 100, 100], 0.05) == []


def test_a_persistent_change_is_flagged_where_it_starts() -> None:
    """A rise from about 100 to about 130 that holds is one confirmed step at its first run."""
    (step,) = steps([100, 101, 99, 130, 131, 129], 0.05)
    assert step.at == 3 and step.confirmed
    assert step.before == 100 and step.after == 130.5
    assert step.relative is not None and abs(step.relative - 0.305) < 1e-9


def test_a_change_in_the_newest_run_is_unconfirmed() -> None:
    """With no run after it, a change is reported but not yet confirmed."""
    (step,) = steps([100, 100, 100, 80], 0.05)
    assert step.at == 3 and not step.confirmed


def test_deterministic_figures_step_on_any_change() -> None:
    """A tolerance of 0 (a count, bytes of a structure): any lasting change is a step."""
    (step,) = steps([74_140, 74_140, 74_141, 74_141], 0.0)
    assert step.at == 2 and step.confirmed


@given(st.integers(1, 8), st.integers(2, 8), st.floats(1.0, 1e6), st.floats(1.2, 5.0))
def test_two_levels_give_one_step_at_the_boundary(before: int, after: int, level: float,
                                                  factor: float) -> None:
    """Any run of one level then a lasting run of another, far outside the tolerance, is
    exactly one confirmed step at the first run of the second level."""
    values = [level] * before + [level * factor] * after
    (step,) = steps(values, 0.05)
    assert step.at == before and step.confirmed and step.after == level * factor
