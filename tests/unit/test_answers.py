"""The answers block of every committed result repeats its sections exactly, and no two
tables of one result show different numbers for one named quantity."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.model import Result
from harness.core.tables import Report, Section, Table, anchors
from harness.report import html, markdown
from harness.report.results import load_result
from harness.report.sections import result_report
from tests.conftest import SMALL_SCENARIO
from tests.paths import ROOT

RESULTS = ROOT / "results"
RENDERED = sorted(p for p in RESULTS.rglob("*.json") if p.with_suffix(".md").exists())
#: metrics whose result gets at least one answer line when measured
ANSWERING = ("memory", "balance", "throughput", "movement", "migration", "clients",
             "replication", "hot_keys", "hostile_keys", "process", "foreign", "counts",
             "range_scans", "equivalence")
#: a measured metric -> the heading (up to its parenthesis) its answer lines link to
ANSWERED_UNDER = {"memory": "Memory", "balance": "Balance", "migration": "Migration",
                  "replication": "Replication", "hot_keys": "Hot keys",
                  "hostile_keys": "Hostile keys", "process": "Process",
                  "foreign": "Foreign peers", "range_scans": "Range scans",
                  "counts": "Instructions and simulated cache misses per key"}


def _shown(section: Section) -> list[str]:
    """Every text the section shows: its cells, headings, notes and paragraphs."""
    shown = [*section.paragraphs, *section.footer]
    for table in section.tables:
        shown += [c.heading for c in table.columns] + table.notes
        shown += [cell.text for row in table.rows for cell in row]
    return shown


def _measured(result: Result) -> set[str]:
    names = {name for run in result.runs for name in run.figures}
    return names | {name for run in result.runs for s in run.subjects for name in s.figures}


@pytest.mark.parametrize("path", RENDERED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_answer_figure_is_its_sections_figure(path: Path) -> None:
    """Each figure of an answer line stands in the line and, as written, in a cell (or
    note) of the section the line links to; each measured answering metric answers."""
    result = load_result(path)
    report = result_report(result)
    by_title = {s.title: s for s in report.sections}
    for answer in report.answers:
        assert answer.section in by_title, (answer.section, list(by_title))
        shown = _shown(by_title[answer.section])
        for figure in answer.figures:
            assert figure and figure in answer.text, (figure, answer.text)
            assert any(figure in text for text in shown), (figure, answer.section)
    answered = {a.section.split(" (")[0].split("?")[0] for a in report.answers}
    measured = _measured(result)
    for metric, heading in ANSWERED_UNDER.items():
        if metric in measured:
            assert heading in answered, (metric, sorted(answered))
    if "equivalence" in measured:
        assert any(" against random points: " in a for a in answered), sorted(answered)
    loads = [run.figure("load") for run in result.runs if run.figure("load")]
    if any(load.distribution != "uniform" for load in loads):
        assert "Load" in answered, sorted(answered)


def _quantities(table: Table) -> dict[tuple[str, str], str]:
    """(column heading, row's first cell) -> the cell shown there."""
    first = table.columns[0].heading if table.columns else ""
    return {(column.heading, f"{first}: {row[0].text}"): row[i].text
            for row in table.rows for i, column in enumerate(table.columns)
            if i and i < len(row)}


@pytest.mark.parametrize("path", RENDERED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_one_named_quantity_has_one_number(path: Path) -> None:
    """Two tables of one result naming the same quantity (heading) for the same row show the
    same figure; a migration's old ring has the Balance table's exact cv_arcs."""
    report: Report = result_report(load_result(path))
    seen: dict[tuple[str, str, str], str] = {}
    for section in report.sections:
        # a section about one fleet or sweep point names it (in parentheses, or after a
        # colon or question): rows of sections about different fleets are different things
        context = re.split(r" \(|: |\? ", section.title, maxsplit=1)[1:]
        for table in section.tables:
            for (heading, row), value in _quantities(table).items():
                key = (" ".join(context), heading, row)
                assert seen.setdefault(key, value) == value, (key, seen[key], value)
    balance = {ring.removeprefix("ring: "): value for (_, heading, ring), value in seen.items()
               if heading == "cv_arcs (exact shares)"}
    for section in report.sections:
        if not section.title.startswith("Migration ("):
            continue
        rows = {row[0].text: row[1].text for row in section.tables[0].rows}
        source = rows["from"]
        before = next((v for k, v in rows.items() if k.startswith("cv_arcs before")), None)
        if before is not None and source in balance:
            assert before.split(" / ")[0] == balance[source]


def test_memory_tables_name_their_kind_of_bytes() -> None:
    """Structure bytes come from the allocator, a migration's from entries x entry size: each
    table says which, and says why the other differs."""
    page = markdown.report(result_report(load_result(RESULTS / "tutorial.json")))
    assert "structure bytes (allocator)" in page and "peak while building" in page
    migration = markdown.report(result_report(load_result(RESULTS /
                                                          "tutorial-migration.json")))
    assert "entries' own bytes before / after" in migration
    assert "larger by that overhead" in migration


def test_the_answers_block_opens_the_page_and_links_its_sections() -> None:
    """In Markdown and HTML the answers come before the first section, each line linking
    to a heading the page has; a table of contents lists every section."""
    report = result_report(load_result(RESULTS / "tutorial-migration.json"))
    page = markdown.report(report)
    assert page.index("## Answers") < page.index("Contents: ") < page.index("## Balance")
    targets = set(re.findall(r"\]\(#([^)]+)\)", page))
    headings = {markdown.page_titles(report)[i]: a for i, a in
                enumerate(anchors(markdown.page_titles(report)))}
    assert targets <= set(headings.values())
    assert "#how-this-was-measured" in page
    assert page.index("## How this was measured") < page.index("### Resources")
    document = html.report(report)
    assert document.index('id="answers"') < document.index('class="chart"')
    for target in targets:
        assert f'id="{target}"' in document
    assert "<details><summary>All 40 servers" in document


def test_other_pages_have_no_answers_block() -> None:
    """compare, history and reproduce pages ask no question: no empty answers block."""
    page = markdown.report(Report("title", ["intro"], [Section("A", ["text"])]))
    assert "Answers" not in page and "Contents" not in page


def test_run_prints_each_scenarios_answers(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`run` prints the page of one scenario, answers first; of several, each one's
    answers as it ends."""
    first, second = tmp_path / "one.toml", tmp_path / "two.toml"
    small = SMALL_SCENARIO.replace('[measure]', '[measure]\nmetrics = ["balance", "movement"]')
    first.write_text(small.replace('name = "small"', 'name = "one"'), encoding="utf-8")
    second.write_text(small.replace('name = "small"', 'name = "two"'), encoding="utf-8")
    assert main(["run", str(first), str(second), "--out", str(tmp_path), "--no-history",
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("## Answers") == 2 and "# one" in printed and "# two" in printed
    assert "of keys moved against its share" in printed
    assert main(["run", str(first), "--out", str(tmp_path), "--no-history",
                 "--no-progress"]) == 0
    page = capsys.readouterr().out
    assert page.index("## Answers") < page.index("## Balance")


def test_peers_are_drawn_beside_the_layouts() -> None:
    """A result with peers draws them in its memory and lookup charts, and shows
    "unknown" rather than 0 where a peer reports no figure."""
    report = result_report(load_result(RESULTS / "peers-libketama.json"))
    drawn = {str(row.get("layout")) for section in report.sections
             for chart in section.charts
             if chart.title.startswith(("Allocator bytes", "ns per key"))
             for row in chart.spec["data"]["values"]}
    assert {"uhashring-ketama (peer)", "uhashring (peer)"} <= drawn
    page = markdown.report(report)
    assert "| 0.0x" not in page and "Peers (uhashring-ketama, uhashring)" in page


def test_a_dirty_commit_says_so_in_words() -> None:
    """A result from a tree with uncommitted or untracked files says so beside its commit."""
    result = load_result(RESULTS / "tutorial.json")
    result.git_commit = f"{result.git_commit}-dirty"
    page = markdown.report(result_report(result))
    assert "-dirty` (with uncommitted or untracked files" in page


def test_the_origin_chart_marks_each_stage() -> None:
    """The origin-load chart of a staged rollout draws a labelled rule at each stage's
    first window (ten windows a stage)."""
    report = result_report(load_result(RESULTS / "migration-120.json"))
    (chart,) = [c for s in report.sections for c in s.charts
                if c.title.startswith("Origin load")]
    rules = [layer for layer in chart.spec["layer"]
             if isinstance(layer.get("mark"), dict) and layer["mark"]["type"] == "rule"]
    assert [row["window"] for row in rules[0]["data"]["values"]] == [0, 10, 20, 30, 40]
    assert rules[0]["data"]["values"][-1]["mark"] == "stage 5: 100%"


@pytest.mark.parametrize("name", ['"><script>alert(1)</script>', "[x](javascript:alert(1))",
                                  "<img src=x onerror=alert(1)>", "# heading | `c`"])
def test_hostile_names_in_the_fleet_and_answers_stay_text(name: str) -> None:
    """A server or sweep point named like markup shows as its name in the fleet's folded
    list, the answers and the contents: no element, attribute or link of its own."""
    result = load_result(RESULTS / "tutorial-migration.json")
    result.scenario["servers"][0]["name"] = name
    result.runs[0].label = name
    report = result_report(result)
    document = html.report(report)
    assert "<script>alert" not in document and "<img src=x" not in document
    assert 'href="javascript' not in document
    page = markdown.report(report)
    assert "](javascript:" not in page.replace("\\](javascript:", "")
    assert "\n# heading" not in page


def test_a_peer_that_disagrees_is_named_with_its_agreement() -> None:
    """Foreign peers: one line when every peer routes as it claims; otherwise the line
    names each peer that does not, with its agreement as the section shows it."""
    result = load_result(RESULTS / "clients.json")
    run = next(r for r in result.runs if any(s.figure("foreign") for s in r.subjects))
    peer = next(s for s in run.subjects if s.figure("foreign") is not None
                and s.figure("foreign").agreement is not None)
    peer.figures["foreign"] = dataclasses.replace(peer.figure("foreign"), agreement=0.987654)
    report = result_report(result)
    line = next(a for a in report.answers if a.section.startswith("Foreign peers"))
    assert f"{peer.name} 0.987654" in line.text and "0.987654" in line.figures
    assert "route every key as the recipe each claims" in line.text
    section = next(s for s in report.sections if s.title == line.section)
    assert any("0.987654" in shown for shown in _shown(section))


def test_range_scans_answer_range_partitioning_against_hashing() -> None:
    """Range scans: the widest scan under range partitioning against the hashing recipes'
    least and most, and a split against a server joining, each figure in the section."""
    report = result_report(load_result(RESULTS / "range-scans.json"))
    lines = [a for a in report.answers if a.section == "Range scans"]
    assert len(lines) == 2, [a.text for a in lines]
    scan, split = lines
    assert "A scan of 1,000 consecutive keys" in scan.text and "with hashing (" in scan.text
    assert "a split moves" in split.text and "a server joining" in split.text


def test_the_html_page_states_its_provenance_once() -> None:
    """Markdown gives the run's provenance as one sentence; the HTML page gives it as its
    metadata list instead, not both (the commit is shown once)."""
    result = load_result(RESULTS / "migration-100k-to-10k.json")
    report = result_report(result)
    assert report.provenance.startswith("Written by ring-harness")
    page = markdown.report(report)
    assert page.count("Written by ring-harness") == 1
    assert page.index("The fleet as drawn") < page.index("Written by") < page.index("## Balance")
    document = html.report(report)
    assert "Written by" not in document
    assert document.count(str(result.git_commit)) == 1 and '<dl class="meta">' in document
    bare = html.report(Report("t", ["intro"], [Section("A", ["text"])], question="q",
                              provenance="Written by someone"))
    assert "Written by someone" in bare
