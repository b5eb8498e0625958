"""Every context user text lands in is escaped for it: Markdown (ours and a viewer's), HTML
text, HTML attributes, link and image targets, and JSON inside a <script> element."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from harness.core.tables import Cell, Chart, Report, Section, Table, code, literal, text
from harness.report import html, markdown

#: the adversarial pass's payload: a description that became an attribute running script
IMAGE_ONERROR = '![x](x" onerror="alert(1)")'
CLOSE_ATTRIBUTE = '"><script>alert(1)</script>'
CLOSE_SCRIPT = "</script><script>alert(1)</script>"
JAVASCRIPT_URL = "javascript:alert(1)"
IMG_TAG = "<img src=x onerror=alert(1)>"
SEPARATOR = "line\u2028para\u2029end"
QUOTES_AMPERSANDS = "Tom & Jerry's \"cache\" &amp; 'co' &lt;"
HOSTILE = (IMAGE_ONERROR, CLOSE_ATTRIBUTE, CLOSE_SCRIPT, f"[x]({JAVASCRIPT_URL})", IMG_TAG,
           SEPARATOR, QUOTES_AMPERSANDS, "a | b `c` **d** _e_ ~f~ $g$ \\h <!-- i",
           "# heading", "- item", "1. item", "> quote", "``", "`", "\\", "[a]: javascript:x")


class _Page(HTMLParser):
    """What a browser's tokenizer makes of a fragment: elements, attributes and the text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parsed(fragment: str) -> _Page:
    page = _Page()
    page.feed(fragment)
    page.close()
    return page


# --- literal and code: user text into the model's Markdown ---------------------------------

@pytest.mark.parametrize("value", HOSTILE)
def test_literal_reads_as_itself_in_html(value: str) -> None:
    """Through literal(), the HTML renderer shows the value's characters and adds no element."""
    page = _parsed(html.inline(literal(value, line_start=True)))
    assert page.tags == []
    assert "".join(page.text) == value


@pytest.mark.parametrize("value", HOSTILE)
def test_literal_adds_no_markdown_structure(value: str) -> None:
    """Through literal(), no raw '<', no unescaped markup character and no line break is left."""
    escaped = literal(value, line_start=True)
    assert "\n" not in escaped and "\r" not in escaped
    unescaped = re.sub(r"\\.", "", escaped)
    assert not re.search(r"[`*\[\]<~$\\]", unescaped)


def test_literal_keeps_ordinary_names_as_they_are() -> None:
    """Names and labels of the shipped scenarios are unchanged: k=160, cv_keys, 1.5 KiB -> 2."""
    for value in ("k=160", "cv_keys", "numpy-packed-64", "1.5 KiB -> 2.0 KiB", "AT&T", "-1",
                  "server-10", "weights 1-4 (1:2:5)"):
        assert literal(value) == value


def test_literal_escapes_what_starts_a_block() -> None:
    """At a line's start, a leading '#', '- ', '1. ', '=' or '>' cannot make a heading,
    list, underline or quote; in the middle of a line they are left as they are."""
    starts = ["# h", "- x", "1. x", "==", "> q"]
    assert [literal(v, line_start=True) for v in starts] == [
        "\\# h", "\\- x", "1\\. x", "\\==", "\\> q"]
    assert [literal(v) for v in starts] == starts


def test_literal_turns_line_breaks_into_spaces() -> None:
    """A name over several lines is one line of text (a paragraph or cell cannot split)."""
    assert literal("a\nb\r\nc\rd") == "a b c d"


@pytest.mark.parametrize("value", ["plain", "a`b", "``x``", "`", " padded ", IMG_TAG,
                                   CLOSE_SCRIPT])
def test_code_span_holds_any_value(value: str) -> None:
    """code() makes a span whose content is the value, backticks included, nothing else."""
    page = _parsed(html.inline(code(value)))
    assert [tag for tag, _ in page.tags] == ["code"]
    assert "".join(page.text) == value


def test_text_cell_shows_its_value_and_sorts_by_it() -> None:
    """text() escapes the cell's Markdown and keeps the raw value for sorting; what would
    start a block at a line's start is left alone in a cell (a cell holds no blocks)."""
    cell = text(IMAGE_ONERROR)
    assert cell.value == IMAGE_ONERROR
    assert cell.text == literal(IMAGE_ONERROR)
    assert [text(v).text for v in ("=", "-", "# 1", "1. x")] == ["=", "-", "# 1", "1. x"]


# --- HTML text, attributes, URLs ---------------------------------------------------------

def test_escape_text_and_attribute() -> None:
    """Text cannot open an element; an attribute value cannot close its quotes."""
    assert html.escape_text(IMG_TAG) == "&lt;img src=x onerror=alert(1)&gt;"
    assert html.escape_attribute(CLOSE_ATTRIBUTE) == (
        "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
    assert html.escape_attribute(QUOTES_AMPERSANDS) == (
        "Tom &amp; Jerry&#x27;s &quot;cache&quot; &amp;amp; &#x27;co&#x27; &amp;lt;")
    page = _parsed(f'<p title="{html.escape_attribute(CLOSE_ATTRIBUTE)}">x</p>')
    assert page.tags == [("p", {"title": CLOSE_ATTRIBUTE})]


def test_the_reported_payload_as_markup_makes_no_attribute() -> None:
    """The payload read as Markdown (not through literal) is an image whose src holds the
    quotes: no onerror attribute appears."""
    page = _parsed(html.inline(IMAGE_ONERROR))
    assert [tag for tag, _ in page.tags] == ["img"]
    attributes = page.tags[0][1]
    assert set(attributes) == {"alt", "src"}
    assert attributes["src"] == 'x" onerror="alert(1'


@pytest.mark.parametrize("url", [JAVASCRIPT_URL, "JavaScript:alert(1)", " javascript:alert(1)",
                                 "java\tscript:alert(1)", "java\nscript:alert(1)",
                                 "\x01javascript:alert(1)", "data:text/html,<script>",
                                 "vbscript:msgbox(1)", "file:///etc/passwd"])
def test_unsafe_urls_are_refused(url: str) -> None:
    """A scheme other than http(s), however a browser would still read it, is refused."""
    assert html.safe_url(url) is None


@pytest.mark.parametrize("url", ["https://example.org/a?b=c&d", "http://x", "plots/a.png",
                                 "../results/b.md", "#anchor", "//example.org/x",
                                 "x\" onerror=\"alert(1)"])
def test_safe_urls_pass(url: str) -> None:
    """http, https and relative URLs (no scheme) are kept."""
    assert html.safe_url(url) == url


@pytest.mark.parametrize("markup", [f"[x]({JAVASCRIPT_URL})", f"![x]({JAVASCRIPT_URL})",
                                    "[x](JAVASCRIPT:alert(1))", "[x]( javascript:alert(1))"])
def test_links_to_unsafe_targets_render_as_text(markup: str) -> None:
    """A link or image to a script URL is shown as the text it was written as."""
    page = _parsed(html.inline(markup))
    assert page.tags == []
    assert "".join(page.text) == markup


def test_ordinary_markup_still_renders() -> None:
    """Bold, code, links, images and escapes render as before."""
    assert html.inline("**a** `b` [c](https://x.org/?a=1&b=2) ![d](p.png) \\*e\\*") == (
        '<strong>a</strong> <code>b</code> <a href="https://x.org/?a=1&amp;b=2">c</a> '
        '<img alt="d" src="p.png"> *e*')


def test_plain_text_of_markup() -> None:
    """plain() resolves escapes and code spans (the page <title>)."""
    assert html.plain(literal(CLOSE_SCRIPT) + " " + code("a`b")) == CLOSE_SCRIPT + " a`b"


# --- JSON inside <script> ---------------------------------------------------------------

@pytest.mark.parametrize("value", HOSTILE)
def test_json_for_script_cannot_end_or_nest_the_element(value: str) -> None:
    """No '<', '>', '&', U+2028 or U+2029 is left raw, and the JSON reads back the same."""
    encoded = html.json_for_script({"name": value, "list": [value]})
    assert not re.search("[<>&\u2028\u2029]", encoded)
    assert json.loads(encoded) == {"name": value, "list": [value]}


def test_json_for_script_escapes_the_separators() -> None:
    """U+2028 and U+2029 (line terminators to older JavaScript) are written as \\u escapes."""
    assert html.json_for_script(SEPARATOR) == '"line\\u2028para\\u2029end"'
    assert html.json_for_script(CLOSE_SCRIPT) == (
        '"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"')
    assert html.json_for_script("<!--") == '"\\u003c!--"'


# --- whole pages -------------------------------------------------------------------------

def _hostile_report(value: str) -> Report:
    chart = Chart(value, {"title": value, "data": {"values": [{"server": value}]}})
    start = literal(value, line_start=True)
    table = Table.of([literal(value), "n"], [[text(value), Cell("1", 1)]], notes=[start])
    return Report(start, [start],
                  [Section(start, paragraphs=[start], tables=[table], footer=[start],
                           charts=[chart])],
                  metadata=[("scenario", code(value))])


@pytest.mark.parametrize("value", HOSTILE)
def test_html_page_holds_only_its_own_elements(value: str, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    """A report whose every string is hostile: every element and attribute on the page is
    the renderer's own, the hostile text is there as text, and the chart JSON reads back."""
    monkeypatch.setattr(html, "vega_bundle", lambda: "")
    page_html = html.report(_hostile_report(value))
    page = _parsed(page_html)
    allowed = {"html", "head", "meta", "title", "style", "body", "header", "h1", "p", "dl",
               "dt", "dd", "code", "main", "section", "h2", "div", "table", "thead", "tr",
               "th", "tbody", "td", "script", "br", "ul", "li"}
    assert {tag for tag, _ in page.tags} <= allowed
    scripts = [attrs for tag, attrs in page.tags if tag == "script"]
    assert len(scripts) == 3  # the chart specs, the library, ours
    assert all(set(attrs) <= {"id", "type"} for attrs in scripts)
    for _, attrs in page.tags:
        assert not any(name.startswith("on") for name in attrs)
        assert set(attrs) <= {"lang", "charset", "name", "content", "class", "id", "aria-label",
                              "data-value", "scope", "type"}
    shown = "".join(page.text)
    assert shown.count(" ".join(re.split("\r\n|\r|\n", value))) >= 7
    specs = re.search(r'<script id="chart-specs" type="application/json">(.*?)</script>',
                      page_html, re.S)
    assert specs is not None
    assert json.loads(specs.group(1))[0]["data"]["values"][0]["server"] == value


def _viewer_html_tags(markdown_text: str) -> list[str]:
    """The raw HTML a CommonMark viewer would pass through: tags, comments, autolinks."""
    stripped = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown_text)  # code spans
    return re.findall(r"(?<!\\)<[A-Za-z/!?][^\n]*", stripped)


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_page_has_no_raw_html_and_tables_hold(value: str) -> None:
    """A hostile report in Markdown: no raw HTML for a viewer, no link to a script, and
    every table row keeps its cells."""
    rendered = markdown.report(_hostile_report(value))
    assert _viewer_html_tags(rendered) == []
    assert not re.search(r"(?<!\\)\]\(\s*javascript:", rendered, re.I)
    rows = [line for line in rendered.split("\n") if line.startswith("|")]  # CommonMark's lines
    assert len(rows) == 3
    assert {len(re.findall(r"(?<!\\)\|", row)) for row in rows} == {3}


@pytest.mark.parametrize("markup", [IMG_TAG, "<!-- x", "</p>", "<https://x>", "<?php",
                                    "[x](javascript:alert(1))", "[x](&#106;avascript:alert(1))",
                                    "[x](<javascript:alert(1)>)", "[a]: javascript:alert(1)"])
def test_markdown_guard_defuses_markup_that_skipped_literal(markup: str) -> None:
    """Even text that was not passed through literal() cannot add raw HTML, a script link
    or a reference definition to the Markdown."""
    guarded = markdown.guard(markup)
    assert _viewer_html_tags(guarded) == []
    assert not re.search(r"(?<!\\)\]\(", guarded) or "javascript" not in guarded.lower()
    assert not re.match(r" {0,3}\[[^\]]*\]:", guarded)


def test_markdown_guard_keeps_ordinary_text() -> None:
    """'CV <= 4%', code spans holding '<', and safe links are left as written."""
    for value in ("CV <= 4.64%", "a < b", "`<img>`", "[docs](https://x.org)", "[a](b.md)"):
        assert markdown.guard(value) == value


def test_markdown_cells_escape_pipes_and_line_breaks() -> None:
    """'|' and line breaks in a cell (through literal or not) cannot end the cell or row."""
    table = Table.of(["a|b", "c"], [[Cell("x|y\nz"), text("p|q\r\nr")]])
    rows = markdown.table(table).split("\n")
    assert len(rows) == 3
    assert {len(re.findall(r"(?<!\\)\|", row)) for row in rows} == {3}
    assert "x\\|y z" in rows[2] and "p\\|q r" in rows[2]
