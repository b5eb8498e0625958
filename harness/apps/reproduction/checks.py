"""A figure check: a published value, how ours is read from results, and its tolerance band."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.apps.reproduction.bands import Band
from harness.apps.reproduction.reading import Results


@dataclass(frozen=True)
class Figure:
    """One published figure and how to judge ours against it."""

    key: str
    what: str
    #: the published value (a number in `unit`), or words for a qualitative claim
    published: float | str
    source: str
    unit: str
    decimals: int
    read: Callable[[Results], float]
    band: Callable[[Results], Band]
    why: str


@dataclass(frozen=True)
class Check:
    """A figure evaluated against results."""

    figure: Figure
    ours: float
    band: Band

    @property
    def inside(self) -> bool:
        low, high = self.band
        return low <= self.ours <= high

    @property
    def published_inside(self) -> bool | None:
        """Whether the published value itself lies in the band (None for words)."""
        if isinstance(self.figure.published, str):
            return None
        low, high = self.band
        return low <= self.figure.published <= high


def evaluate(figure: Figure, results: Results) -> Check:
    return Check(figure, float(figure.read(results)), figure.band(results))


def show(value: float | str, unit: str, decimals: int) -> str:
    """A value in its unit, with thousands separators."""
    if isinstance(value, str):
        return value
    text = f"{value:,.{decimals}f}"
    return f"{text}{unit}" if unit in ("%", "x") else f"{text} {unit}".rstrip()
