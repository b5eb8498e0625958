"""Whole-number figures in the docs' prose, and whether a committed result prints them.

tests/unit/test_docs_figures.py checks each listed figure, and every decimal beside a named
result; a whole number with a unit ("about 4 minutes", "6 GB", "moves 1,000 keys", "229x")
reads as a measurement just as much, so this module finds those too and tells where each may
come from. Plain file reads, regular expressions and tomllib only, so a scan of the whole docs
site takes well under a second.

A figure is a whole number with a unit or a result word next to it. Where it may come from:

- **Where a result is named.** A figure's sources are the committed results named where it
  stands: `results/NAME.md` (or `.json`, `.html`), or the scenario that writes it,
  `NAME.toml`. A paragraph, list item or table row that names one has only its own (a
  table of scenarios checks each row against its own result); otherwise its section's
  (heading to heading), and for a time, a size in KiB to TB or a ratio, else its page's.
  There every figure must be printed by one of them, in a unit of the same kind (a figure
  in minutes against a result's seconds, in GB against MiB), to the figure's precision:
  half a unit of its last digit, or 10% when it says it is approximate ("about 4
  minutes"). A count (keys, servers, points...) or a percentage may instead be one of the
  scenario's inputs, a number of its TOML file (a share such as 0.6 stands for 60%).
- **Where no result is named**, counts and percentages describe a set-up and are left alone,
  but a time, a size in KiB to TB or a ratio (229x, "29 times faster") can only be a
  measurement, a cited figure or a setting of the tool: it must be one of those below.
- **Not a result's figure**, by rule: code (fenced blocks and code spans: examples and
  settings); a sentence citing its source (a quotation in double quotes, a title in
  italics, or naming an article, paper or post: the published figures); a bound ("at most
  1 MiB", "at least 5x faster", "every 4 ms": a limit or a target, not a reading); a
  sentence about the cost model's estimates ("estimated", "priced", "counted as": its
  constants); and a sentence naming a test file (`tests/...`: that test's set-up).
- Anything else (arithmetic on figures beside it, a constant of a layout) goes in the
  caller's allow-list, with why.
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: fenced code, indented too (inside admonitions and lists)
FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)

#: unit -> (kind, its size in the kind's base unit)
UNITS: dict[str, tuple[str, float]] = {
    "ns": ("time", 1e-9), "us": ("time", 1e-6), "µs": ("time", 1e-6), "ms": ("time", 1e-3),
    "s": ("time", 1.0), "seconds": ("time", 1.0), "second": ("time", 1.0),
    "min": ("time", 60.0), "minutes": ("time", 60.0), "minute": ("time", 60.0),
    "hours": ("time", 3600.0), "hour": ("time", 3600.0),
    "KiB": ("size", 2.0 ** 10), "MiB": ("size", 2.0 ** 20), "GiB": ("size", 2.0 ** 30),
    "TiB": ("size", 2.0 ** 40), "KB": ("size", 1e3), "MB": ("size", 1e6), "GB": ("size", 1e9),
    "TB": ("size", 1e12), "bytes": ("size", 1.0), "byte": ("size", 1.0), "B": ("size", 1.0),
    "x": ("ratio", 1.0), "times": ("ratio", 1.0), "%": ("percent", 1.0),
    **{word: ("count", 1.0) for word in (
        "keys", "key", "servers", "server", "points", "point", "entries", "entry", "rings",
        "ring", "tokens", "token", "requests", "objects", "nodes", "slots", "candidates")},
}
#: units that only a measurement, a citation or a setting gives (checked even where no
#: result is named); a count, a percentage or a size in bytes may describe a set-up
MEASURED = frozenset(unit for unit, (kind, scale) in UNITS.items()
                     if kind in ("time", "ratio") or (kind == "size" and scale > 1))

_NUMBER = r"\d{1,3}(?:,\d{3})+|\d+"
#: attached to the number (100%, 229x, 100TB) or after a space (4 minutes, 6 GB)
_ATTACHED = r"%|x|[KMGT]i?B"
_SPACED = "|".join(sorted((re.escape(u) for u in UNITS if u not in ("%", "x")),
                          key=len, reverse=True))
#: a whole figure: not part of a decimal, a name (server-10), a path, a power (2**21) or a
#: product (160 x 625); "A to B unit" gives both ends. "times" counts as a ratio only before
#: a comparison ("29 times faster", "1.26 times the base's"), not as a count of runs.
WHOLE = re.compile(
    rf"(?<![\w.,/^\-])(?<!\d\*\*)(?P<n1>{_NUMBER})(?:\s?(?:to|\u2013)\s?(?P<n2>{_NUMBER}))?"
    rf"(?:(?P<u1>{_ATTACHED})|[ \t\n](?P<u2>{_SPACED}))(?![\w.]?\d)(?!\w)")
RATIO_TIMES = re.compile(r"\s+(?:faster|slower|more|fewer|less|larger|smaller|the|as)\b")

_PRINTED = re.compile(rf"(?<![\w.])(?P<n>\d[\d,]*(?:\.\d+)?)(?P<u>%|x|\s?(?:{_SPACED})(?!\w))?")
#: a source named in prose: a result file, or the scenario that writes it
NAMED = re.compile(r"results/((?:reproduce/)?[\w.-]+?)\.(?:md|json|html)\b"
                   r"|(?<![\w/-])(?:scenarios/)?((?:reproduce/)?[\w.-]+?)\.toml\b")
CITES = re.compile(r"\"[^\"\n]+\"|“[^”]+”|(?<![*\w])\*[A-Z][^*\n]+\*(?!\*)"
                   r"|\b(?:articles?|papers?|posts?|blog)\b|\barticle's\b|\bpaper's\b")
#: words before a figure that make it a bound: a limit or a target, not a reading
BOUND = re.compile(r"\b(?:at most|at least|more than|less than|fewer than|up to|within|above"
                   r"|below|beyond|under|over|every|limit of)\s+$")
#: a sentence about the cost model's figures
ESTIMATE = re.compile(r"\bestimat|\bpriced\b|\bcounted as\b")
#: a sentence naming a test file, whose figures are that test's set-up
TEST_FILE = re.compile(r"\btests/[\w/]+\.py\b")
#: words before a figure that make it approximate (10% either way)
APPROXIMATE = re.compile(r"(?:\babout|\baround|\broughly|\bnearly|~|≈)\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z(*\"`])|\n\s*\n|\n\s*(?:[-*|]|\d+\.) ")


@dataclass(frozen=True)
class Figure:
    """A whole number with its unit, where a page states it."""

    page: str
    line: int
    text: str
    value: float
    unit: str
    #: the results it may quote (their names under results/, no suffix)
    sources: tuple[str, ...]
    #: the rule that makes it no result's figure ("" when it must be one)
    exempt: str = ""
    approximate: bool = False

    @property
    def kind(self) -> str:
        return UNITS[self.unit][0]

    @property
    def measured(self) -> bool:
        return self.unit in MEASURED


def prose_of(text: str) -> str:
    """`text` with code, link targets and comments blanked, keeping every offset."""
    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))
    for pattern in (FENCE, HTML_COMMENT, CODE_SPAN, LINK_TARGET):
        text = pattern.sub(blank, text)
    return text


def named_results(text: str, results: Path) -> list[str]:
    """The committed results `text` names, by file or by the scenario that writes them."""
    names = []
    for match in NAMED.finditer(text):
        name = match.group(1) or match.group(2)
        if (results / f"{name}.md").is_file() and name not in names:
            names.append(name)
    return names


#: where a paragraph's next list item starts
LIST_ITEM = re.compile(r"\n(?=[ \t]{0,3}(?:[-*+]|\d+\.)[ \t])")


def _blocks(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, table header) of each paragraph of `text`, each table row and list
    item its own; the header is a table row's first row, "" outside tables."""
    start = 0
    for chunk in re.split(r"(\n[ \t]*\n)", text):
        lines = chunk.strip("\n").splitlines()
        if chunk.strip() and all(line.lstrip().startswith("|") for line in lines):
            offset = start
            for line in chunk.splitlines(keepends=True):
                yield offset, offset + len(line), lines[0]
                offset += len(line)
        elif chunk.strip():
            cuts = [0, *(m.start() + 1 for m in LIST_ITEM.finditer(chunk)), len(chunk)]
            yield from ((start + a, start + b, "") for a, b in itertools.pairwise(cuts))
        start += len(chunk)


def _sentence(text: str, start: int, end: int, position: int) -> tuple[int, int]:
    """The bounds of the sentence of `text[start:end]` holding `position`."""
    begins = [m.end() for m in SENTENCE_END.finditer(text, start, position)]
    stop = SENTENCE_END.search(text, position, end)
    return (begins[-1] if begins else start), (stop.start() if stop else end)


def _exemption(raw: str, clean: str, start: int, end: int, at: int) -> str:
    """Which rule, if any, makes the figure at `at` no result's figure."""
    first, last = _sentence(clean, start, end, at)
    if CITES.search(clean, first, last):
        return "cited"
    if BOUND.search(clean[max(first, at - 20):at]):
        return "bound"
    if ESTIMATE.search(clean, first, last):
        return "estimate"
    if TEST_FILE.search(raw, first, last):
        return "test"
    return ""


def figures_of(page: str, text: str, results: Path) -> list[Figure]:
    """Every whole figure in the prose of a Markdown page, with the results it may quote."""
    found: list[Figure] = []
    clean = prose_of(text)
    heads = [m.start() for m in HEADING.finditer(text)]
    page_sources = named_results(text, results)
    for start, end, header in _blocks(clean):
        section_start = max([h for h in heads if h <= start], default=0)
        section_end = min([h for h in heads if h > start], default=len(text))
        own = named_results(text[start:end], results)
        near = own or named_results(text[section_start:section_end], results)
        for match in WHOLE.finditer(clean, start, end):
            unit = match.group("u1") or match.group("u2")
            if unit == "times" and not RATIO_TIMES.match(clean, match.end()):
                continue
            at = match.start()
            line = text.count("\n", 0, at) + 1
            exempt = _exemption(text, clean, start, end, at)
            if not exempt and ESTIMATE.search(header):
                # a table of the cost model's prices ("priced at"): each row a price
                exempt = "estimate"
            approximate = APPROXIMATE.search(clean[max(start, at - 12):at]) is not None
            # a count or a share quotes a result only where one is named near it; a
            # measurement may quote any the page names
            sources = near or (page_sources if unit in MEASURED else [])
            found += [Figure(page, line, match.group(0).replace("\n", " "),
                             float(number.replace(",", "")), unit, tuple(sources), exempt,
                             approximate)
                      for number in (match.group("n1"), match.group("n2")) if number]
    return found


def _header_unit(label: str) -> str | None:
    """The unit a table's column header or row label gives its bare numbers."""
    for word in re.findall(r"[A-Za-zµ%]+", label):
        if word in UNITS and word not in ("x", "B", "times"):
            return str(word)
    if re.search(r" / |ratio|\bvs\b|against|faster|slower", label):
        return "x"
    return None


def printed_quantities(text: str) -> list[tuple[float, str | None]]:
    """Each number a result prints, with its unit: its own, else its column's or row's."""
    quantities: list[tuple[float, str | None]] = []
    header: list[str] = []
    for line in text.splitlines():
        row = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            header = []
        elif not header:
            header = row
            continue
        elif set(line) <= set("|-: "):
            continue
        cells = row if line.startswith("|") else [line]
        for index, cell in enumerate(cells):
            fallback = None
            if line.startswith("|"):
                column = header[index] if index < len(header) else ""
                fallback = _header_unit(column) or _header_unit(row[0])
            for match in _PRINTED.finditer(cell):
                unit = (match.group("u") or "").strip() or fallback
                quantities.append((float(match.group("n").replace(",", "")), unit))
    return quantities


def scenario_inputs(result: str, results: Path) -> set[float]:
    """The numbers of the scenario file a result was written from (a share also as a %)."""
    head = (results / f"{result}.md").read_text(encoding="utf-8")[:20000]
    match = re.search(r"from `(scenarios/[^`]+\.toml)`", head)
    if not match or not (results.parent / match.group(1)).is_file():
        return set()
    data = tomllib.loads((results.parent / match.group(1)).read_text(encoding="utf-8"))
    numbers: set[float] = set()

    def walk(value: object) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int | float):
            numbers.add(float(value))
            if 0 < value <= 1:
                numbers.add(round(float(value) * 100, 9))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
    walk(data)
    return numbers


def _close(figure: Figure, printed: float) -> bool:
    """`printed` shows as the figure rounded to a whole number (half up), or is within
    10% of it when the page says the figure is approximate."""
    tolerance = max(0.5, 0.1 * abs(figure.value)) if figure.approximate else 0.5
    return abs(printed - figure.value) <= tolerance + 1e-9 * max(1.0, abs(figure.value))


def printed_by(figure: Figure, quantities: list[tuple[float, str | None]]) -> bool:
    """Whether a result's quantity is `figure`, in a unit of its kind, to its precision."""
    kind, scale = UNITS[figure.unit]
    for value, unit in quantities:
        if unit is None or unit not in UNITS:
            if kind in ("count", "size") and not figure.measured and _close(figure, value):
                return True
            continue
        their_kind, their_scale = UNITS[unit]
        if their_kind == kind and _close(figure, value * their_scale / scale):
            return True
    return False


def is_input(figure: Figure, inputs: set[float]) -> bool:
    return not figure.measured and figure.kind in ("count", "percent", "size") and any(
        math.isclose(figure.value, number) for number in inputs)


class Sources:
    """The committed results under `results` as a figure reads them, each read once."""

    def __init__(self, results: Path) -> None:
        self.results = results
        self._read: dict[str, tuple[list[tuple[float, str | None]], set[float]]] = {}

    def _of(self, name: str) -> tuple[list[tuple[float, str | None]], set[float]]:
        if name not in self._read:
            text = (self.results / f"{name}.md").read_text(encoding="utf-8")
            self._read[name] = (printed_quantities(text), scenario_inputs(name, self.results))
        return self._read[name]

    def gives(self, figure: Figure) -> bool:
        """Whether one of the figure's results prints it, or its scenario sets it."""
        return any(printed_by(figure, self._of(name)[0]) or is_input(figure, self._of(name)[1])
                   for name in figure.sources)


def unsourced(page: str, text: str, sources: Sources) -> list[Figure]:
    """The page's figures that no rule exempts and that no result they may quote gives."""
    return [figure for figure in figures_of(page, text, sources.results)
            if not figure.exempt
            and (figure.sources or figure.measured)
            and not sources.gives(figure)]
