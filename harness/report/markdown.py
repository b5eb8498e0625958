"""Markdown rendering of the table model (GitHub tables via tabulate).

The model's text is already Markdown, with names and other outside strings escaped
where they were put in (`harness.core.tables.literal`). This renderer still keeps any
text from adding raw HTML or a link to a script for viewers that render Markdown as
HTML: a '<' that would open a tag, comment or autolink is escaped, and so is the ']' of a
link whose target is not http(s) or relative, or the '[' of a reference definition. In
table cells, '|' and line breaks are escaped too, so a cell cannot end early.
"""

from __future__ import annotations

import html
import re

from tabulate import tabulate

from harness.core.tables import MEASURED_TITLE, Report, Section, Table, anchors, literal
from harness.report.html import markup_pieces, safe_url

#: after '<', what makes CommonMark read raw HTML or an autolink
_TAG_START = re.compile(r"[A-Za-z/!?]")
#: a link reference definition, '[label]: target', at the start of a line
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]*\]:", re.M)
_BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _unsafe_target(rest: str) -> bool:
    """Whether a link destination starting `rest` (after its '(') leads somewhere a link
    must not: as CommonMark reads it, entities and escapes resolved, '<' fences dropped."""
    target = html.unescape(_BACKSLASH_ESCAPE.sub(r"\1", rest)).lstrip(" \t\r\n")
    return safe_url(target.removeprefix("<")) is None


def guard(text: str) -> str:
    """`text` with nothing a Markdown viewer would turn into HTML or an unsafe link."""
    text = _REFERENCE.sub(lambda m: m.group(0).replace("[", "\\[", 1), text)
    pieces = list(markup_pieces(text))
    out = []
    position = 0
    for index, (kind, piece) in enumerate(pieces):
        position += len(piece)
        following = pieces[index + 1][1] if index + 1 < len(pieces) else ""
        if kind == "text" and piece == "<" and _TAG_START.match(following):
            piece = "\\<"
        elif (kind == "text" and piece == "]" and following == "("
              and _unsafe_target(text[position + 1:])):
            piece = "\\]"
        out.append(piece)
    return "".join(out)


def _cell(text: str) -> str:
    # A '|' or a line break inside a cell would end the cell or the row.
    return guard(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _line(text: str) -> str:
    """A heading's text: one line."""
    return guard(text).replace("\r", " ").replace("\n", " ")


def table(model: Table) -> str:
    rows = [[_cell(cell.text) for cell in row] for row in model.rows]
    headers = [_cell(column.heading) for column in model.columns]
    rendered = str(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))
    return "\n\n".join([rendered, *(guard(note) for note in model.notes)])


def section(model: Section, level: int = 2) -> str:
    parts = [f"{'#' * level} {_line(model.title)}"] if model.title else []
    parts += [guard(p) for p in model.paragraphs]
    parts += [table(t) for t in model.tables]
    parts += [guard(p) for p in model.footer]
    for summary, lines in model.folded:
        parts.append(f"{guard(summary)}:\n\n" + "\n".join(f"- {guard(line)}"
                                                        for line in lines))
    parts += [f"![{literal(alt)}]({path})" for alt, path in model.images]
    return "\n\n".join(parts)


def page_titles(model: Report) -> list[str]:
    """Every heading below the title, in order: the answering sections, then "How this was
    measured" and its notes (the anchors of a page are numbered in this order)."""
    titles = [s.title for s in model.sections if not s.note]
    notes = [s.title for s in model.sections if s.note]
    return ["Answers", *titles, *([MEASURED_TITLE, *notes] if notes else [])]


def section_links(model: Report) -> dict[str, str]:
    """Each section title's link target (the first section of a repeated title)."""
    links: dict[str, str] = {}
    for title, target in zip(page_titles(model), anchors(page_titles(model)), strict=True):
        links.setdefault(title, target)
    return links


def answers(model: Report) -> str:
    """The answers block: the question, then one line per answer, linked to its section."""
    links = section_links(model)
    lines = [f"- {guard(a.text)} ([{_line(a.section)}](#{links.get(a.section, '')}))"
             for a in model.answers]
    parts = ["## Answers", guard(f"**Asked:** {model.question}") if model.question else ""]
    parts.append("\n".join(lines) if lines else "No table of this result gives an answer "
                 "line; its sections follow.")
    return "\n\n".join(p for p in parts if p)


def contents(model: Report) -> str:
    """A table of contents: every section, linked."""
    titles = page_titles(model)[1:]
    targets = anchors(page_titles(model))[1:]
    return "Contents: " + " · ".join(f"[{_line(t)}](#{a})" for t, a in zip(
        titles, targets, strict=True))


def report(model: Report) -> str:
    notes = [s for s in model.sections if s.note]
    # A result's page opens with its answers and contents; other pages (compare, history,
    # reproduce) ask no question and open with their intro as before.
    opening = [answers(model), contents(model)] if model.question else []
    intro = [*model.intro, model.provenance] if model.provenance else model.intro
    parts = [f"# {_line(model.title)}", *opening, *(guard(p) for p in intro),
             *(section(s) for s in model.sections if not s.note)]
    if notes:
        parts += [f"## {MEASURED_TITLE}", *(section(s, 3) for s in notes)]
    return "\n\n".join(parts) + "\n"


def answers_text(model: Report) -> str:
    """The answers block alone, as `run` prints it for each of several scenarios."""
    return f"# {_line(model.title)}\n\n{answers(model)}\n"
