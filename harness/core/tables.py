"""One table model for every report: sections of tables, chosen once, rendered many ways.

Code that selects data builds `Report`s of `Section`s of `Table`s (and
`Chart`s); renderers (`harness.report.markdown`, `harness.report.html`) only format
them. A `Cell` carries the text shown and, where there is one, the raw value behind it (for sorting
and charts). The formatting helpers below are the only place a figure's
display form (percent, KiB, ratio, timing) is decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cell:
    text: str
    value: float | str | None = None


@dataclass(frozen=True)
class Column:
    heading: str
    #: unit of the raw values, e.g. "bytes", "ns", "fraction" ("" for none)
    unit: str = ""


@dataclass
class Table:
    columns: list[Column]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, headings: Sequence[str], rows: Sequence[Sequence[Cell | str]],
           notes: Sequence[str] = ()) -> Table:
        """A table from headings and rows of cells (plain strings become text cells)."""
        return cls([Column(h) for h in headings],
                   [[c if isinstance(c, Cell) else Cell(c) for c in row] for row in rows],
                   list(notes))

    def trimmed(self) -> Table:
        """Without the trailing columns no row fills (rows may be shorter than the headings)."""
        width = max((len(row) for row in self.rows), default=len(self.columns))
        return Table(self.columns[:width], self.rows, self.notes)


@dataclass(frozen=True)
class Chart:
    """A chart as a Vega-Lite specification (data inline); HTML draws it, Markdown leaves it."""

    title: str
    spec: dict[str, Any]


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    #: paragraphs after the tables
    footer: list[str] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    #: (alt text, path) of image files beside the Markdown; a self-contained page cannot
    #: show files, so HTML draws the section's charts instead
    images: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Report:
    title: str
    intro: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    #: (name, value) pairs describing the run: machine, versions, commit, scenario
    metadata: list[tuple[str, str]] = field(default_factory=list)


def text(value: str) -> Cell:
    return Cell(value, value)


def count(value: int | float) -> Cell:
    return Cell(f"{value:,}", value)


def number(value: float, digits: int = 3) -> Cell:
    return Cell(f"{value:,.{digits}f}", value)


def pct(value: float, digits: int = 2) -> Cell:
    return Cell(f"{100 * value:.{digits}f}%", value)


def kib(value: float) -> Cell:
    shown = f"{value / 1024:,.1f} KiB" if value < 1024**2 else f"{value / 1024**2:,.2f} MiB"
    return Cell(shown, value)


def ratio(value: float, base: float) -> Cell:
    return Cell(f"{value / base:.2f}x", value / base) if base else Cell("n/a")


def empty() -> Cell:
    return Cell("")
