"""The README and the documentation site: a short README, links that resolve, a complete nav.

Plain file reads and regular expressions only: no MkDocs (that is `tox -e docs`) and no
YAML parser, so these run in the test extra's environment in milliseconds.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.paths import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"

MAX_README_LINES = 250
#: the set-up commands as the README states them; CI runs the second one verbatim
SETUP_COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m harness "
    "run --out runs",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest",
)

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$",
                                  re.MULTILINE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
NAV_PAGE = re.compile(r"^\s*-\s*(?:[^:\n]*:\s*)?([^\s:]+\.md)\s*$")


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def links_in(text: str) -> list[str]:
    """The link targets of Markdown text that are paths, outside code, without anchors."""
    text = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = INLINE_LINK.findall(text) + REFERENCE_DEFINITION.findall(text)
    paths = []
    for target in targets:
        if target.startswith("#") or SCHEME.match(target) or target.startswith("//"):
            continue
        paths.append(target.split("#", 1)[0].split("?", 1)[0])
    return [p for p in paths if p]


def relative_links(path: Path) -> list[str]:
    return links_in(path.read_text(encoding="utf-8"))


def test_readme_is_at_most_250_lines() -> None:
    """The README stays an overview: at most 250 lines, the rest lives under docs/."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def test_readme_keeps_the_setup_commands() -> None:
    """The README states both set-up commands exactly as CI and the quick start run them."""
    text = README.read_text(encoding="utf-8")
    for command in SETUP_COMMANDS:
        assert command in text, f"README.md lost the command: {command}"


def test_relative_links_point_to_existing_files() -> None:
    """Every relative link in README.md and docs/**/*.md names a file that exists."""
    broken = []
    for path in markdown_files():
        for target in relative_links(path):
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, "links to missing files:\n" + "\n".join(broken)


def test_relative_links_stay_inside_the_repository() -> None:
    """No relative link in README.md or docs/ leads out of the repository."""
    outside = []
    for path in markdown_files():
        for target in relative_links(path):
            resolved = (path.parent / target).resolve()
            if not resolved.is_relative_to(ROOT):
                outside.append(f"{path.relative_to(ROOT)}: {target}")
    assert not outside, "links outside the repository:\n" + "\n".join(outside)


def test_docs_links_stay_inside_the_site() -> None:
    """Links from docs/ pages resolve inside docs/, so the built site has no dead links."""
    outside = []
    for path in sorted(DOCS.rglob("*.md")):
        for target in relative_links(path):
            if not (path.parent / target).resolve().is_relative_to(DOCS.resolve()):
                outside.append(f"{path.relative_to(ROOT)}: {target}")
    assert not outside, "links from docs/ to files outside it:\n" + "\n".join(outside)


def test_nav_lists_every_page_and_only_existing_ones() -> None:
    """mkdocs.yml's nav names every .md under docs/ exactly once, and no page that is missing."""
    nav = [m.group(1) for line in MKDOCS.read_text(encoding="utf-8").splitlines()
           if (m := NAV_PAGE.match(line))]
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    duplicates = sorted({page for page in nav if nav.count(page) > 1})
    assert not duplicates, f"listed more than once in nav: {duplicates}"
    assert sorted(set(nav) - set(pages)) == [], "nav lists pages that do not exist"
    assert sorted(set(pages) - set(nav)) == [], "pages missing from nav"


def test_link_reader_sees_links_and_skips_code() -> None:
    """The link reader above finds inline, image and reference links, and none in code."""
    text = ("[a](one.md#x) ![b](img/two.png) [c](https://example.org) [d](#local)\n"
            "`[e](inline-code.md)` [`f`](four.md \"title\")\n"
            "```toml\n[g](fenced.md)\n```\n[h]: three.md\n")
    assert links_in(text) == ["one.md", "img/two.png", "four.md", "three.md"]
