"""The whole-figure scan of tests/docs_whole_figures.py on a small synthetic checkout: a
result, the scenario that wrote it, and pages quoting it fresh, stale or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_whole_figures import Sources, figures_of, printed_quantities, unsourced

RESULT = """# demo

## Answers

- k=160: 1,234 keys move.

Written by ring-harness 0.1.0 from `scenarios/demo.toml` at 2026-12-05T11:41:26+00:00; \
run took 110.3 s.

## Movement

| change | moved keys | moved % | ratio against the floor |
|---|---|---|---|
| remove server-5 | 1,234 | 10.12% | 2.41 |

## Migration

| figure | value |
|---|---|
| measured in, s of wall time | 15.2 |

## Resources

| run | points | wall s | peak RSS so far |
|---|---|---|---|
| k=160 | 43,376,000 | 106.36 | 1,732.04 MiB |
"""

SCENARIO = """name = "demo"
[servers]
count = 2048
capabilities = { pci = 0.6 }
[keys]
count = 100_000
"""


@pytest.fixture
def sources(tmp_path: Path) -> Sources:
    (tmp_path / "results").mkdir()
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "results" / "demo.md").write_text(RESULT, encoding="utf-8")
    (tmp_path / "results" / "other.md").write_text(
        RESULT.replace("demo.toml", "other.toml").replace("110.3 s", "250.0 s"),
        encoding="utf-8")
    (tmp_path / "scenarios" / "demo.toml").write_text(SCENARIO, encoding="utf-8")
    return Sources(tmp_path / "results")


def stale(text: str, sources: Sources) -> list[str]:
    return [figure.text for figure in unsourced("page.md", text, sources)]


def test_a_planted_stale_run_time_fails(sources: Sources) -> None:
    """The run took 110.3 s: "about 4 minutes" is stale, "about 2 minutes" and "110 s" are
    the result's figure (minutes read as seconds; approximate means within 10%), and so is
    "2 minutes" (106.36 s in the Resources table), but not "1 minute"."""
    assert stale("`scenarios/demo.toml` runs in about 4 minutes.", sources) == ["4 minutes"]
    assert stale("`scenarios/demo.toml` runs in about 2 minutes.", sources) == []
    assert stale("`results/demo.md`: the run took 110 s.", sources) == []
    assert stale("`results/demo.md`: the run took 111 s.", sources) == ["111 s"]
    assert stale("`results/demo.md`: the run took 1 minute.", sources) == ["1 minute"]


def test_sizes_convert_between_units(sources: Sources) -> None:
    """1,732.04 MiB is 1.82 GB, 2 GB as a whole figure, 1,732 MiB; not 1 GB or 1,733 MiB."""
    assert stale("In `results/demo.md` the peak is 2 GB, or 1,732 MiB.", sources) == []
    assert stale("In `results/demo.md` the peak is 1 GB.", sources) == ["1 GB"]
    assert stale("In `results/demo.md` the peak is 1,733 MiB.", sources) == ["1,733 MiB"]


def test_counts_come_from_the_result_or_its_scenario(sources: Sources) -> None:
    """A count is printed by the result (1,234 keys) or set by its scenario (2,048
    servers, 100,000 keys, a share of 0.6 as 60%); another number fails."""
    page = ("`results/demo.md`: 1,234 keys move among 2,048 servers, 100,000 keys in all, "
            "60% of the servers holding pci.")
    assert stale(page, sources) == []
    assert stale("`results/demo.md`: 1,235 keys move, 61% of them.", sources) == [
        "1,235 keys", "61%"]
    assert stale("`results/demo.md`: the removal moves 10% of keys.", sources) == []
    assert stale("`results/demo.md`: the removal moves **11%** of keys.", sources) == ["11%"]


def test_where_no_result_is_named_only_measurements_are_checked(sources: Sources) -> None:
    """A page naming no result may describe a set-up (100 servers, 5%), but a time, a size
    in KiB to TB or a ratio must come from somewhere."""
    assert stale("A fleet of 100 servers, 5% of them new.", sources) == []
    assert stale("It takes 3 minutes and 2 GB, 4x the old.", sources) == [
        "3 minutes", "2 GB", "4x"]


def test_the_exemptions(sources: Sources) -> None:
    """Code, citations, bounds, the cost model's estimates and a test's set-up are not a
    result's figures."""
    for text in ("`results/demo.md`: run `sleep 4 minutes`.",
                 "`results/demo.md`:\n\n```sh\nwait 4 minutes\n```\n",
                 "`results/demo.md`, beside the article's 100 TB.",
                 'The post "Saving another 100TB of RAM" says so.',
                 "Files of at most 4 MiB are read; the estimate must be at least 5x faster.",
                 "The time is estimated at 3 µs a candidate.",
                 "`tests/unit/test_x.py` routes 3,000 keys in `results/demo.md`."):
        assert stale(text, sources) == [], text


def test_a_table_of_prices_is_the_cost_model(sources: Sources) -> None:
    """A table whose header says its numbers are prices holds the cost model's rates; the
    same row under a header of readings must come from a result."""
    row = "| a `points` ring | 150 ns a point |\n"
    assert stale("`results/demo.md`:\n\n| what is built | priced at |\n|---|---|\n" + row,
                 sources) == []
    assert stale("`results/demo.md`:\n\n| what is built | took |\n|---|---|\n" + row,
                 sources) == ["150 ns"]


def test_a_table_row_naming_a_result_has_only_its_own(sources: Sources) -> None:
    """A row quoting another row's result fails: other.md ran 250.0 s, demo.md 110.3 s."""
    table = ("| scenario | run |\n|---|---|\n"
             "| `demo.toml` | 110 s |\n"
             "| `other.toml` | 110 s |\n")
    found = unsourced("page.md", table, sources)
    assert [(f.line, f.text) for f in found] == [(4, "110 s")]


def test_what_the_scan_reads_as_a_figure(sources: Sources) -> None:
    """Whole numbers with a unit, both ends of a range; not decimals, names, powers,
    products, a count of runs or numbers in code."""
    text = ("`results/demo.md`: 21 to 25 s, 229x, 6 GB, 100TB, 29 times faster. Not: 37.5%, "
            "1.27x, server-10 keys, 2**21 entries, 160 x 625, 20 times in a row, `8 MiB`.")
    found = [(f.text, f.value, f.unit) for f in figures_of("page.md", text, sources.results)]
    assert found == [("21 to 25 s", 21.0, "s"), ("21 to 25 s", 25.0, "s"),
                     ("229x", 229.0, "x"), ("6 GB", 6.0, "GB"), ("100TB", 100.0, "TB"),
                     ("29 times", 29.0, "times")]


def test_a_result_prints_its_units() -> None:
    """A number takes its own unit, else its column's, else its row label's; else none."""
    quantities = printed_quantities(RESULT)
    assert (110.3, "s") in quantities
    assert (106.36, "s") in quantities
    assert (1732.04, "MiB") in quantities
    assert (2.41, "x") in quantities
    assert (1234.0, "keys") in quantities
    assert (10.12, "%") in quantities
    assert (43376000.0, "points") in quantities
    assert (15.2, "s") in quantities
    assert (160.0, None) in quantities
