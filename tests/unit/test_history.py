"""The run history: every run kept and numbered per machine, `compare latest previous`,
an index that flags changes that persisted, and hostile histories refused in one line."""

from __future__ import annotations

import json
import multiprocessing
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.atomic import write_numbered
from harness.report import markdown
from harness.report.history import entries, find, machine_name
from harness.report.history_page import history_report, write_index
from tests.conftest import SMALL_SCENARIO

TINY = SMALL_SCENARIO.split("[[operations]]")[0].replace("count = 5000", "count = 2000").replace(
    "[measure]\n", '[measure]\nlayouts = ["numpy-packed"]\nmetrics = ["balance", "collisions"]\n')


def _run(folder: Path, *extra: str, servers: int = 10) -> int:
    scenario = folder / "small.toml"
    scenario.write_text(TINY.replace("count = 10", f"count = {servers}"), encoding="utf-8")
    return main(["run", str(scenario), "--no-progress", "--history", str(folder / "h"),
                 *extra])


def test_runs_are_kept_numbered_and_compared_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three runs are entries 0001 to 0003 of this machine (nothing written elsewhere);
    `compare previous latest` pairs the last two, a run id names any, and the index flags
    the change of fleet that persisted over the later runs."""
    assert _run(tmp_path) == 0
    assert _run(tmp_path, servers=11) == 0
    assert _run(tmp_path, servers=11) == 0
    history = tmp_path / "h"
    kept = entries(history, machine_name())
    assert [e.run_id for e in kept] == ["0001", "0002", "0003"]
    assert all(e.path.with_suffix(".md").is_file() for e in kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h", "small.toml"]
    capsys.readouterr()
    assert main(["compare", "previous", "latest", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert f"A: `previous = {kept[1].path}`" in out and "| entries " in out
    assert re.search(r"\| entries +\| 44 +\| 44 +\| +\| = ", out)
    assert find(f"{machine_name()}/0002", history) == find("2", history) == kept[1].path
    assert main(["compare", "1", "latest#k=4", "--history", str(history)]) == 0
    assert re.search(r"\| entries +\| 40 +\| 44 +\| +\| \+10\.0% ", capsys.readouterr().out)
    index = markdown.report(history_report(history))
    row = next(line for line in index.splitlines() if line.startswith("| k=40 ")
               and "| entries " in line)
    assert "+10.0% at 0002" in row and "unconfirmed" not in row
    assert (history / "index.html").is_file()


def test_no_history_and_out(tmp_path: Path) -> None:
    """--no-history with --out writes only the result files; without --out it is refused
    before any work."""
    assert _run(tmp_path, "--no-history", "--out", str(tmp_path / "out")) == 0
    assert not (tmp_path / "h").exists()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "small.html", "small.json", "small.md"]
    assert _run(tmp_path, "--no-history") == 2


@pytest.mark.parametrize(("setup", "spec", "message"), [
    ("none", "latest", "no run history here to take 'latest'"),
    ("one", "previous", "no run of scenario 'small' before the latest"),
    ("one", "7", "no run 0007 in the history"),
    ("corrupt", "previous", "not a JSON result file"),
])
def test_hostile_histories_are_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, spec: str,
        message: str) -> None:
    """A missing history, no earlier run, an unknown id, a corrupt latest entry: one line,
    exit 2."""
    history = tmp_path / "h"
    if setup != "none":
        assert _run(tmp_path) == 0
    if setup == "corrupt":
        folder = history / machine_name()
        (folder / "0002.json").write_text("{ not json")
    capsys.readouterr()
    assert main(["compare", spec, spec, "--history", str(history)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_corrupt_entries_are_named_and_left_out_of_the_index(tmp_path: Path) -> None:
    """An unreadable entry does not stop the index: it is named, the others shown."""
    assert _run(tmp_path) == 0
    folder = tmp_path / "h" / machine_name()
    (folder / "0002.json").write_text(json.dumps({"format": "other"}))
    index = markdown.report(history_report(tmp_path / "h"))
    assert "could not be read" in index and "0002" in index and "| 0001 (" in index
    assert find("latest", tmp_path / "h") == folder / "0002.json"


def _claim(folder: str, count: int) -> list[int]:
    return [write_numbered(Path(folder), lambda n: f"{n:04d}.json", 1, "{}\n")[0]
            for _ in range(count)]


def test_concurrent_writers_get_their_own_numbers(tmp_path: Path) -> None:
    """Four processes numbering 25 entries each in one folder at once: 100 distinct
    numbers, 1 to 100, every file whole."""
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        claimed = pool.starmap(_claim, [(str(tmp_path), 25)] * 4)
    numbers = sorted(n for batch in claimed for n in batch)
    assert numbers == list(range(1, 101))
    assert all(p.read_text() == "{}\n" for p in tmp_path.glob("*.json"))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_index_escapes_what_the_entries_hold(tmp_path: Path) -> None:
    """A commit, scenario name and sweep label taken from an entry are shown as written in
    the index page, never as markup."""
    assert _run(tmp_path) == 0
    (entry,) = entries(tmp_path / "h", machine_name())
    document = json.loads(entry.path.read_text())
    document["git_commit"] = "<b>x</b>"
    document["scenario"]["name"] = "<img src=x onerror=alert(1)>"
    document["runs"][0]["label"] = "*k*<i>"
    entry.path.write_text(json.dumps(document))
    page = write_index(tmp_path / "h").read_text()
    assert "<img src=x" not in page and "<b>x" not in page and "*k*<i>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;b&gt;" in page
