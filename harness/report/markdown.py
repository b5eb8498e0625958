"""Markdown rendering of the table model (GitHub tables via tabulate)."""

from __future__ import annotations

from tabulate import tabulate

from harness.core.tables import Report, Section, Table


def _escape(text: str) -> str:
    # A '|' or a line break inside a cell would end the cell or the row.
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def table(model: Table) -> str:
    rows = [[_escape(cell.text) for cell in row] for row in model.rows]
    headers = [_escape(column.heading) for column in model.columns]
    rendered = str(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))
    return "\n\n".join([rendered, *model.notes])


def section(model: Section, level: int = 2) -> str:
    parts = [f"{'#' * level} {model.title}"] if model.title else []
    parts += model.paragraphs
    parts += [table(t) for t in model.tables]
    parts += model.footer
    parts += [f"![{alt}]({path})" for alt, path in model.images]
    return "\n\n".join(parts)


def report(model: Report) -> str:
    parts = [f"# {model.title}", *model.intro, *(section(s) for s in model.sections)]
    return "\n\n".join(parts) + "\n"
