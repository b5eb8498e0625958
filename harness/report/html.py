"""HTML rendering of the table model: one self-contained page per report.

Everything a page needs is inline (styles, data, the charting library and
our small scripts), so it opens from a file with no network access, prints,
and follows the reader's light or dark setting. Tables sort on a click of
their heading, by each cell's raw value. Charts are Vega-Lite specifications
drawn by vega-embed; the library comes from `vl-convert-python`, which
bundles Vega, Vega-Lite and vega-embed into one script (the Vega project's
own packaging, pinned by pip, no files of ours to keep up to date). The
bundle is built once per library version and cached on disk, since building
it takes seconds.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
from functools import cache
from pathlib import Path

from harness.core.atomic import write_atomically
from harness.core.tables import Report, Section, Table

#: makes the bundle's vegaEmbed reachable from the page's own script
_EXPOSE = "window.vegaEmbed = vegaEmbed;"


def _cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "ring-harness"


@cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed in one script (cached per vl-convert version)."""
    import vl_convert

    version = getattr(vl_convert, "__version__", None) or vl_convert.get_vega_version()
    cached = _cache_dir() / f"vega-bundle-{version}.js"
    try:
        return cached.read_text(encoding="utf-8")
    except OSError:
        pass
    # Inside a <script> element the text "</script" would end it wherever it stands.
    bundle = str(vl_convert.javascript_bundle(_EXPOSE)).replace("</script", "<\\/script")
    with contextlib.suppress(OSError):  # a read-only home: build it again next time
        write_atomically(cached, bundle)
    return bundle


STYLE = """
:root { color-scheme: light dark; --fg: #1d1f23; --bg: #ffffff; --muted: #5b616b;
  --line: #d8dce2; --head: #f3f5f8; --accent: #2a62c9; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --bg: #16181c; --muted: #a3a9b3; --line: #343a43;
    --head: #21252b; --accent: #7aa7ff; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 0 auto; max-width: 1180px; padding: 1.5rem; }
h1 { font-size: 1.7rem; margin: 0 0 .5rem; } h2 { font-size: 1.25rem; margin-top: 2rem;
  border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
p, li { color: var(--fg); } .muted, dt { color: var(--muted); }
code { font-size: .92em; background: var(--head); padding: 0 .25em; border-radius: 3px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem;
  font-size: .9rem; margin: 1rem 0; } dl.meta dd { margin: 0; }
.table-wrap { overflow-x: auto; margin: .8rem 0; }
table { border-collapse: collapse; font-size: .88rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: right;
  white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: var(--head); cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
.chart { margin: 1rem 0; max-width: 100%; overflow-x: auto; }
.note { font-size: .88rem; color: var(--muted); }
img { max-width: 100%; }
@media print { body { max-width: none; padding: 0; font-size: 11px; }
  th { cursor: auto; } .chart, table { break-inside: avoid; }
  th[aria-sort]::after { content: ""; } }
"""

SCRIPT = """
(function () {
  const dark = window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches;
  const specs = JSON.parse(document.getElementById('chart-specs').textContent);
  window.chartsDrawn = 0;
  window.chartsReady = Promise.all(specs.map(function (spec, i) {
    return window.vegaEmbed('#chart-' + i, spec,
        {actions: false, renderer: 'svg', theme: dark ? 'dark' : undefined})
      .then(function () { window.chartsDrawn += 1; });
  }));  // with no charts, vegaEmbed (not bundled then) is never called
  function key(cell) {
    const raw = cell.getAttribute('data-value');
    const number = raw === null || raw === '' ? NaN : Number(raw);
    return isNaN(number) ? (raw === null ? cell.textContent : raw) : number;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, column) {
      th.addEventListener('click', function () {
        const up = th.getAttribute('aria-sort') !== 'ascending';
        table.querySelectorAll('th').forEach(function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort(function (a, b) {
          const x = key(a.cells[column]), y = key(b.cells[column]);
          const order = (typeof x === 'number' && typeof y === 'number') ? x - y
            : String(x).localeCompare(String(y), undefined, {numeric: true});
          return up ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
"""

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)]+)\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")


def inline(text: str) -> str:
    """The little Markdown our reports use inside text: **bold**, `code`, images, links."""
    out = html.escape(text, quote=False)
    out = _IMAGE.sub(r'<img alt="\1" src="\2">', out)
    out = _LINK.sub(r'<a href="\2">\1</a>', out)
    out = _CODE.sub(r"<code>\1</code>", out)
    return _BOLD.sub(r"<strong>\1</strong>", out)


def _paragraph(text: str) -> str:
    lines = text.split("\n")
    if all(line.startswith("- ") for line in lines):
        return "<ul>" + "".join(f"<li>{inline(line[2:])}</li>" for line in lines) + "</ul>"
    return "<p>" + "<br>".join(inline(line) for line in lines) + "</p>"


def _attribute(value: object) -> str:
    return html.escape(str(value), quote=True)


def table(model: Table) -> str:
    head = "".join(f"<th scope=col>{inline(c.heading)}</th>" for c in model.columns)
    rows = []
    for row in model.rows:
        cells = "".join(
            f'<td data-value="{_attribute(cell.value)}">{inline(cell.text)}</td>'
            if cell.value is not None else f"<td>{inline(cell.text)}</td>" for cell in row)
        rows.append(f"<tr>{cells}</tr>")
    notes = "".join(f'<p class="note">{inline(note)}</p>' for note in model.notes)
    return (f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>{notes}")


def _section(model: Section, charts: list[dict[str, object]]) -> str:
    parts = [f"<h2>{inline(model.title)}</h2>"] if model.title else []
    parts += [_paragraph(p) for p in model.paragraphs]
    for chart in model.charts:
        parts.append(f'<div class="chart" id="chart-{len(charts)}" '
                     f'aria-label="{_attribute(chart.title)}"></div>')
        charts.append(chart.spec)
    parts += [table(t) for t in model.tables]
    parts += [_paragraph(p) for p in model.footer]
    return "<section>" + "\n".join(parts) + "</section>"


def _json_for_script(value: object) -> str:
    # Inside <script>, "</" would end the element: escape it as JSON allows.
    return json.dumps(value, allow_nan=False).replace("</", "<\\/")


def report(model: Report) -> str:
    """A whole self-contained page."""
    charts: list[dict[str, object]] = []
    sections = [_section(s, charts) for s in model.sections]
    meta = "".join(f"<dt>{inline(k)}</dt><dd>{inline(v)}</dd>" for k, v in model.metadata)
    specs = f'<script id="chart-specs" type="application/json">{_json_for_script(charts)}</script>'
    library = f"<script>{vega_bundle()}</script>" if charts else ""
    intro = "".join(_paragraph(p) for p in model.intro)
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(model.title)}</title><style>{STYLE}</style></head>\n<body>"
        f"<header><h1>{inline(model.title)}</h1>{intro}"
        + (f'<dl class="meta">{meta}</dl>' if meta else "")
        + "</header>\n<main>" + "\n".join(sections) + "</main>\n"
        + f"{specs}\n{library}\n<script>{SCRIPT}</script>"
        + "</body></html>\n"
    )
