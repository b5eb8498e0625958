"""`reproduce` from a folder that is not the checkout: the built-in reproduction scenarios
run, the report goes where --out says, --only runs part of them, and --no-run reads its
results from --out or says in one line which run writes them. The committed report is
what the renderer writes from the committed results."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.apps.reproduction.command import chosen_names, scenario_names, write_report
from harness.cli import main
from harness.core.errors import UnknownNameError
from tests.paths import ROOT

RESULTS = ROOT / "results"
QUICK = "h_three_nodes,g_add_3"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_only_names_are_checked() -> None:
    """--only takes reproduction names, also as reproduce/NAME or NAME.toml; others are
    refused with the valid names."""
    assert chosen_names(None) == scenario_names()
    assert chosen_names("reproduce/g_add_3.toml, h_three_nodes") == ["g_add_3", "h_three_nodes"]
    with pytest.raises(UnknownNameError, match="valid reproduction scenario names: a_balance"):
        chosen_names("g_add_3,tutorial")


def test_reproduce_only_writes_where_out_says(elsewhere: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """--only runs the named scenarios into OUT/reproduce/ and writes a report of what
    their results answer, saying which scenarios were left out; --no-run re-renders it."""
    assert main(["reproduce", "--only", QUICK, "--out", "report"]) == 0
    for name in ("h_three_nodes", "g_add_3"):
        assert (elsewhere / "report" / "reproduce" / f"{name}.json").stat().st_size > 0
    text = (elsewhere / "report" / "REPRODUCTION.md").read_text(encoding="utf-8")
    assert "Part of the reproduction only: 12 scenarios were not run" in text
    assert "## h. Three nodes" in text and "## a. Balance sweep" not in text
    assert "## Plots" not in text  # no plot reads these two
    assert (elsewhere / "report" / "REPRODUCTION.html").stat().st_size > 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["report"]
    capsys.readouterr()
    assert main(["reproduce", "--no-run", "--only", QUICK, "--out", "report"]) == 0
    assert "figures inside their tolerance" in capsys.readouterr().out


def test_no_run_without_results_says_which_run_writes_them(
    elsewhere: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """--no-run where OUT/reproduce/ lacks results: exit 2, one line naming what is missing
    and the command that writes it, nothing written."""
    assert main(["reproduce", "--no-run", "--out", "my report"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error: my report/reproduce: no result of a_balance_sweep, "
                          "b_doubling, c_weights and 11 more;")
    assert "reproduce --out 'my report'` runs them" in err
    assert main(["reproduce", "--no-run", "--only", "g_add_3", "--out", "x"]) == 2
    assert "reproduce --out x --only g_add_3` runs them" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(not (RESULTS / "reproduce").is_dir(), reason="the committed results are "
                    "in the repository, not in the sdist")
def test_the_committed_report_is_the_renderers(tmp_path: Path) -> None:
    """results/REPRODUCTION.md and .html are what write_report renders from the committed
    results today, byte for byte."""
    shutil.copytree(RESULTS / "reproduce", tmp_path / "reproduce",
                    ignore=shutil.ignore_patterns("*.png"))
    write_report(tmp_path)
    for name in ("REPRODUCTION.md", "REPRODUCTION.html"):
        assert (tmp_path / name).read_bytes() == (RESULTS / name).read_bytes(), name
