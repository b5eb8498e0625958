"""One table model for every report: sections of tables, chosen once, rendered many ways.

Code that selects data builds `Report`s of `Section`s of `Table`s (and
`Chart`s); renderers (`harness.report.markdown`, `harness.report.html`) only format
them. A `Cell` carries the text shown and, where there is one, the raw value behind it (for sorting
and charts). The formatting helpers below are the only place a figure's
display form (percent, KiB, ratio, timing) is decided.

Titles, headings, paragraphs, notes and cell texts are a little Markdown (**bold**,
`code`, links); chart titles and data are plain text. A string that comes from a
scenario, a result file or a plugin (a name, a description, a label) goes into the
Markdown through `literal` (or `code` for a code span), so it reads as itself in every
rendering and cannot add markup, links or HTML; `text` cells do this themselves.
"""

from __future__ import annotations

import math
import re
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
    #: a measurement note (tuning, rounds, calibration, resources): reports fold it into
    #: "How this was measured" at the end, after the sections that answer
    note: bool = False
    #: (summary, lines) shown folded: in HTML a collapsible <details>, in Markdown a list
    folded: list[tuple[str, list[str]]] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    """One line of a result's answers block: a sentence (`text`, a little Markdown) that
    holds each of `figures`, each shown as its `section` shows it (a test checks both), so
    the block can only repeat what a section measured."""

    section: str
    text: str
    figures: tuple[str, ...]


@dataclass
class Report:
    title: str
    intro: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    #: (name, value) pairs describing the run: machine, versions, commit, scenario
    metadata: list[tuple[str, str]] = field(default_factory=list)
    #: what the scenario asks, in words, and one line per answer the result gives
    question: str = ""
    answers: list[Answer] = field(default_factory=list)
    #: the run's provenance in one sentence, after the intro; the HTML page shows its
    #: `metadata` list in its place (one place for each fact on a page)
    provenance: str = ""


#: the title of the section measurement notes are folded into
MEASURED_TITLE = "How this was measured"


def anchor(title: str) -> str:
    """The link target of a heading, as GitHub makes it from the heading's text: lower
    case, punctuation dropped, spaces as hyphens (our HTML gives each heading this id)."""
    shown = re.sub(r"\\(.)", r"\1", title).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", shown).replace(" ", "-")


def anchors(titles: Sequence[str]) -> list[str]:
    """Each title's anchor, a repeated one numbered as GitHub numbers it ("-1", "-2")."""
    seen: dict[str, int] = {}
    out = []
    for title in titles:
        base = anchor(title)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append(base if n == 0 else f"{base}-{n}")
    return out


#: what our renderers or a CommonMark/GFM viewer would read as markup anywhere in a line:
#: a backslash, code, emphasis, links, raw HTML, strikethrough, math; an underscore only
#: where it could open or close emphasis (not inside a word); '&' where it starts an entity
_MARKUP = re.compile(r"[\\`*\[\]<~$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|&(?=#?[0-9A-Za-z]+;)")
#: what starts a block at the beginning of a line: a heading, quote, list item, setext
#: underline or numbered item
_BLOCK_START = re.compile(r"^(\s*)(?:([#+=-])(?=\s|$|\2)|(>)|(\d{1,9})([.)])(?=\s|$))")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def literal(value: str, *, line_start: bool = False) -> str:
    """`value` as Markdown that reads as exactly `value` (line breaks as spaces): each
    character a renderer would take as markup is backslash-escaped, which both our HTML
    renderer and CommonMark viewers show as the character itself. With `line_start`
    (the text begins a paragraph, a line of one, or a title), so is a leading '#', '-',
    '+', '=', '>' or '1.' that would make a heading, list, quote or underline there; in
    the middle of a line or in a table cell none of these starts a block."""
    one_line = _LINE_BREAK.sub(" ", value)
    escaped = _MARKUP.sub(lambda m: "\\" + m.group(0), one_line)
    return _BLOCK_START.sub(_escape_block_start, escaped) if line_start else escaped


def _escape_block_start(match: re.Match[str]) -> str:
    indent, marker, quote, digits, dot = match.groups()
    if digits is not None:
        return f"{indent}{digits}\\{dot}"
    return f"{indent}\\{marker or quote}"


def code(value: str) -> str:
    """`value` as a Markdown code span, fenced with more backticks than it holds in a row
    (CommonMark's rule, which the HTML renderer follows); inside a span nothing is markup."""
    one_line = _LINE_BREAK.sub(" ", value)
    if not one_line:
        return ""
    fence = "`" * (max((len(run) for run in re.findall("`+", one_line)), default=0) + 1)
    # A span's content loses one space at each end when it has both (or a backtick would
    # join the fence): pad such content so what remains is the value.
    pad = ("`" in (one_line[0], one_line[-1])
           or (one_line[0] == one_line[-1] == " " and one_line.strip(" ") != ""))
    return f"{fence} {one_line} {fence}" if pad else f"{fence}{one_line}{fence}"


def text(value: str) -> Cell:
    """A cell showing `value` as it is (names, labels), sorted by it."""
    return Cell(literal(value), value)


def count(value: int | float) -> Cell:
    return Cell(f"{value:,}", value)


def number(value: float, digits: int = 3) -> Cell:
    return Cell(f"{value:,.{digits}f}", value)


def significant(value: float, digits: int = 3) -> Cell:
    """A figure to `digits` significant digits, without an exponent where it reads plainly:
    an expectation of 0.025 shows as 0.025, not as 0.0; 7,450.3 as 7,450."""
    if value == 0 or not math.isfinite(value):
        return Cell(f"{value:g}", value)
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude < -9:
        return Cell(f"{value:.{digits - 1}e}", value)
    decimals = max(0, digits - 1 - magnitude)
    shown = f"{value:,.{decimals}f}"
    return Cell(shown.rstrip("0").rstrip(".") if decimals else shown, value)


def pct(value: float, digits: int = 2) -> Cell:
    return Cell(f"{100 * value:.{digits}f}%", value)


def kib(value: float) -> Cell:
    shown = f"{value / 1024:,.1f} KiB" if value < 1024**2 else f"{value / 1024**2:,.2f} MiB"
    return Cell(shown, value)


def ratio(value: float, base: float) -> Cell:
    return Cell(f"{value / base:.2f}x", value / base) if base else Cell("n/a")


def empty() -> Cell:
    return Cell("")
