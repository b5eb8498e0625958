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

from harness.core.tables import Report, Section, Table, literal
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
    parts += [f"![{literal(alt)}]({path})" for alt, path in model.images]
    return "\n\n".join(parts)


def report(model: Report) -> str:
    parts = [f"# {_line(model.title)}", *(guard(p) for p in model.intro),
             *(section(s) for s in model.sections)]
    return "\n\n".join(parts) + "\n"
