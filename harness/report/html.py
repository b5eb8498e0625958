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

Every string reaches the page through one of the escapes below, one per context: HTML
text (`escape_text`), an attribute value (`escape_attribute`), a link or image target
(`safe_url`: http, https or relative, else the link is shown as text) and JSON inside a
<script> element (`json_for_script`). The model's Markdown is read by `inline`, which
builds its few elements itself and escapes everything else; names and other outside
strings arrive escaped as Markdown (`harness.core.tables.literal`), so they show as written.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import platformdirs

from harness.core.atomic import write_atomically
from harness.core.tables import MEASURED_TITLE, Report, Section, Table, anchors

#: makes the bundle's vegaEmbed reachable from the page's own script
_EXPOSE = "window.vegaEmbed = vegaEmbed;"


def _cache_dir() -> Path:
    return platformdirs.user_cache_path("ring-harness", appauthor=False)


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
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: right; }
/* Wide tables (Memory, a weighted fleet's Balance) fit the page: headings may break
   anywhere, cells at their spaces; the wrap scrolls only what still cannot fit. */
th { overflow-wrap: anywhere; hyphens: none; }
td { white-space: normal; }
th:first-child, td:first-child { text-align: left; }
th { background: var(--head); cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
.chart { margin: 1rem 0; max-width: 100%; overflow-x: auto; }
.note { font-size: .88rem; color: var(--muted); }
.answers { border: 1px solid var(--line); border-left: 4px solid var(--accent);
  padding: .4rem 1rem; margin: .8rem 0; background: var(--head); }
.answers h2 { margin: .3rem 0; border: 0; font-size: 1.1rem; }
.answers ul { margin: .3rem 0; padding-left: 1.2rem; } .answers li { margin: .1rem 0; }
nav.toc { font-size: .9rem; margin: .5rem 0; } nav.toc a { margin-right: .2rem; }
a { color: var(--accent); }
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

#: what a backslash escapes in Markdown (CommonMark: any ASCII punctuation)
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
#: a URL scheme, as browsers read one once they have dropped tabs and line breaks
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_SAFE_SCHEMES = frozenset({"http", "https"})


def escape_text(value: object) -> str:
    """`value` as HTML text: it cannot open an element or an entity."""
    return html.escape(str(value), quote=False)


def escape_attribute(value: object) -> str:
    """`value` for a double- or single-quoted HTML attribute: quotes cannot end it."""
    return html.escape(str(value), quote=True)


def safe_url(url: str) -> str | None:
    """`url` if a link or image may point there (http, https, or relative: no scheme),
    else None. The scheme is read as a browser reads it: after dropping tabs and line
    breaks anywhere and control characters and spaces at the ends."""
    cleaned = re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(0x21))))
    scheme = _SCHEME.match(cleaned)
    if scheme is not None and scheme.group(1).lower() not in _SAFE_SCHEMES:
        return None
    return cleaned


def json_for_script(value: object) -> str:
    """`value` as JSON that can stand inside a <script> element: '<', '>' and '&' as
    \\u escapes (so no '</script', '<!--' or '<script' can end or nest the element), and
    everything outside ASCII, U+2028 and U+2029 included, as \\u escapes too."""
    text = json.dumps(value, allow_nan=False, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Inline:
    """The little Markdown of our reports, read as CommonMark reads it where they overlap:
    backslash escapes, `code` spans (any fence length), **bold**, [links](url) and
    ![images](url). Everything else is text. A link or image whose target is not
    http(s) or relative is shown as the text it was written as."""

    def __init__(self, source: str) -> None:
        self.source = source

    def _code_span(self, at: int) -> tuple[int, int, int] | None:
        """(content start, content end, after) of the code span opening at `at`."""
        text = self.source
        fence_end = at
        while fence_end < len(text) and text[fence_end] == "`":
            fence_end += 1
        fence = fence_end - at
        search = fence_end
        while (close := text.find("`" * fence, search)) != -1:
            after = close + fence
            while after < len(text) and text[after] == "`":
                after += 1
            if after - close == fence:
                return fence_end, close, after
            search = after
        return None

    def _skip(self, at: int) -> int:
        """The index after the escape or code span at `at` (or after its one character)."""
        text = self.source
        if text[at] == "\\" and at + 1 < len(text) and text[at + 1] in _PUNCTUATION:
            return at + 2
        if text[at] == "`":
            span = self._code_span(at)
            if span is not None:
                return span[2]
            while at < len(text) and text[at] == "`":
                at += 1
            return at
        return at + 1

    def _find(self, marker: str, start: int, stop: int) -> int | None:
        """Where `marker` stands next in [start, stop), outside escapes and code spans."""
        at = start
        while at < stop:
            if self.source.startswith(marker, at) and at + len(marker) <= stop:
                return at
            at = self._skip(at)
        return None

    def _link(self, at: int, stop: int) -> tuple[int, int, int, int] | None:
        """For '[' at `at`: (label end, target start, target end, after) of [label](target)."""
        label_end = self._find("]", at + 1, stop)
        if label_end is None or label_end == at + 1 or not self.source.startswith(
                "(", label_end + 1):
            return None
        target_end = self._find(")", label_end + 2, stop)
        if target_end is None or target_end == label_end + 2:
            return None
        return label_end, label_end + 2, target_end, target_end + 1

    def unescaped(self, start: int, stop: int) -> str:
        """The text of [start, stop) with escapes resolved and code spans as their content."""
        out = []
        at = start
        while at < stop:
            after = min(self._skip(at), stop)
            piece = self.source[at:after]
            if piece.startswith("\\") and len(piece) == 2:
                piece = piece[1]
            elif piece.startswith("`") and (span := self._code_span(at)) and span[2] <= stop:
                piece = _code_content(self.source[span[0]:span[1]])
            out.append(piece)
            at = after
        return "".join(out)

    def html(self, start: int, stop: int) -> str:
        text = self.source
        out: list[str] = []
        at = start
        while at < stop:
            char = text[at]
            if char == "\\" and at + 1 < stop and text[at + 1] in _PUNCTUATION:
                out.append(escape_text(text[at + 1]))
                at += 2
            elif char == "`":
                span = self._code_span(at)
                if span is not None and span[2] <= stop:
                    out.append(f"<code>{escape_text(_code_content(text[span[0]:span[1]]))}"
                               "</code>")
                    at = span[2]
                else:  # no closing fence: the backticks are text
                    after = at
                    while after < stop and text[after] == "`":
                        after += 1
                    out.append(escape_text(text[at:after]))
                    at = after
            elif (text.startswith("**", at)
                  and (close := self._find("**", at + 2, stop)) is not None and close > at + 2):
                out.append(f"<strong>{self.html(at + 2, close)}</strong>")
                at = close + 2
            elif (char == "!" and text.startswith("[", at + 1)
                  and (link := self._link(at + 1, stop)) is not None):
                label_end, target_start, target_end, after = link
                url = safe_url(self.unescaped(target_start, target_end))
                if url is None:
                    out.append(escape_text(self.unescaped(at, after)))
                else:
                    out.append(f'<img alt="{escape_attribute(self.unescaped(at + 2, label_end))}"'
                               f' src="{escape_attribute(url)}">')
                at = after
            elif char == "[" and (link := self._link(at, stop)) is not None:
                label_end, target_start, target_end, after = link
                url = safe_url(self.unescaped(target_start, target_end))
                if url is None:
                    out.append(escape_text(self.unescaped(at, after)))
                else:
                    out.append(f'<a href="{escape_attribute(url)}">'
                               f"{self.html(at + 1, label_end)}</a>")
                at = after
            else:
                out.append(escape_text(char))
                at += 1
        return "".join(out)


def markup_pieces(text: str) -> Iterator[tuple[str, str]]:
    """`text` cut as the inline reader cuts it: ("escape", a backslash escape), ("code", a
    whole code span, fences included) or ("text", one character, or an unclosed fence)."""
    reader = _Inline(text)
    at = 0
    while at < len(text):
        after = reader._skip(at)
        piece = text[at:after]
        kind = ("escape" if piece[0] == "\\" and len(piece) == 2
                else "code" if piece[0] == "`" and reader._code_span(at) else "text")
        yield kind, piece
        at = after


def _code_content(raw: str) -> str:
    """A code span's content as CommonMark shows it: line breaks as spaces, and one space
    off each end when both ends have one (and it is not all spaces)."""
    content = raw.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    if len(content) >= 2 and content[0] == content[-1] == " " and content.strip(" "):
        content = content[1:-1]
    return content


def inline(text: str) -> str:
    """The little Markdown our reports use inside text, as HTML: **bold**, `code`,
    images, links and backslash escapes; nothing else in `text` becomes markup."""
    return _Inline(text).html(0, len(text))


def plain(text: str) -> str:
    """The text a reader sees of some inline Markdown (for a <title>): escapes resolved,
    code spans as their content; bold and link markers are kept as written."""
    return _Inline(text).unescaped(0, len(text))


def _paragraph(text: str) -> str:
    lines = text.split("\n")
    if all(line.startswith("- ") for line in lines):
        return "<ul>" + "".join(f"<li>{inline(line[2:])}</li>" for line in lines) + "</ul>"
    return "<p>" + "<br>".join(inline(line) for line in lines) + "</p>"


def _attribute(value: object) -> str:
    return escape_attribute(value)


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


def _section(model: Section, charts: list[dict[str, object]], target: str = "",
             level: int = 2) -> str:
    ident = f' id="{_attribute(target)}"' if target else ""
    parts = [f"<h{level}{ident}>{inline(model.title)}</h{level}>"] if model.title else []
    parts += [_paragraph(p) for p in model.paragraphs]
    for chart in model.charts:
        parts.append(f'<div class="chart" id="chart-{len(charts)}" '
                     f'aria-label="{_attribute(chart.title)}"></div>')
        charts.append(chart.spec)
    parts += [table(t) for t in model.tables]
    parts += [_paragraph(p) for p in model.footer]
    for summary, lines in model.folded:
        parts.append(f"<details><summary>{inline(summary)}</summary><ul>"
                     + "".join(f"<li>{inline(line)}</li>" for line in lines)
                     + "</ul></details>")
    return "<section>" + "\n".join(parts) + "</section>"


def _titles(model: Report) -> list[str]:
    """Every heading below the title, as the Markdown numbers their anchors."""
    notes = [s.title for s in model.sections if s.note]
    return ["Answers", *(s.title for s in model.sections if not s.note),
            *([MEASURED_TITLE, *notes] if notes else [])]


def _answers(model: Report, links: dict[str, str]) -> str:
    items = "".join(f'<li>{inline(a.text)} <a href="#{_attribute(links.get(a.section, ""))}">'
                    f"({inline(a.section)})</a></li>" for a in model.answers)
    asked = (f'<p><strong>Asked:</strong> {inline(model.question)}</p>'
             if model.question else "")
    body = (f"<ul>{items}</ul>" if items else "<p>No table of this result gives an answer "
            "line; its sections follow.</p>")
    return f'<section class="answers" id="answers"><h2>Answers</h2>{asked}{body}</section>'


def report(model: Report) -> str:
    """A whole self-contained page: the answers first, a table of contents, the sections
    that answer, then "How this was measured" and its notes."""
    charts: list[dict[str, object]] = []
    titles = _titles(model)
    targets = anchors(titles)
    links: dict[str, str] = {}
    for title, target in zip(titles, targets, strict=True):
        links.setdefault(title, target)
    answering = [s for s in model.sections if not s.note]
    notes = [s for s in model.sections if s.note]
    at = iter(targets[1:])
    sections = [_section(s, charts, next(at)) for s in answering]
    if notes:
        sections.append(f'<h2 id="{_attribute(next(at))}">{escape_text(MEASURED_TITLE)}</h2>')
        sections += [_section(s, charts, next(at), 3) for s in notes]
    toc = "".join(f'<a href="#{_attribute(target)}">{inline(title)}</a> · '
                  for title, target in zip(titles[1:], targets[1:], strict=True))
    opening = (_answers(model, links) + '<nav class="toc" aria-label="contents"><strong>'
               f"Contents:</strong> {toc.removesuffix(' · ')}</nav>"
               if model.question else "")
    meta = "".join(f"<dt>{inline(k)}</dt><dd>{inline(v)}</dd>" for k, v in model.metadata)
    specs = f'<script id="chart-specs" type="application/json">{json_for_script(charts)}</script>'
    library = f"<script>{vega_bundle()}</script>" if charts else ""
    shown = [*model.intro, model.provenance] if model.provenance and not meta else model.intro
    intro = "".join(_paragraph(p) for p in shown)
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{escape_text(plain(model.title))}</title><style>{STYLE}</style></head>\n<body>"
        f"<header><h1>{inline(model.title)}</h1>{opening}{intro}"
        + (f'<dl class="meta">{meta}</dl>' if meta else "")
        + "</header>\n<main>" + "\n".join(sections) + "</main>\n"
        + f"{specs}\n{library}\n<script>{SCRIPT}</script>"
        + "</body></html>\n"
    )
