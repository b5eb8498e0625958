"""`reproduce --no-run` over result files that read as format 2 but do not hold together
(written by hand or by another program): one line and exit 1 or 2, never a traceback, and
no report written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.paths import ROOT

COMMITTED = ROOT / "results" / "reproduce"


def _no_figures(run: dict[str, Any]) -> None:
    run["figures"] = {}


def _no_subjects(run: dict[str, Any]) -> None:
    run["subjects"] = []


def _zero_servers(run: dict[str, Any]) -> None:
    run["ring"]["servers"] = 0


def _zero_entries(run: dict[str, Any]) -> None:
    run["ring"]["entries"] = 0
    run["ring"]["points"] = 0


CRAFTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "no figures": _no_figures, "no subjects": _no_subjects, "zero servers": _zero_servers,
    "zero entries": _zero_entries}


@pytest.mark.parametrize("craft", sorted(CRAFTS))
def test_crafted_results_are_one_line(craft: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "reproduce"
    folder.mkdir()
    for path in sorted(COMMITTED.glob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        for run in result["runs"]:
            if isinstance(run.get("ring"), dict):
                CRAFTS[craft](run)
        (folder / path.name).write_text(json.dumps(result), encoding="utf-8")
    code = main(["reproduce", "--no-run", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code in (1, 2), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "REPRODUCTION.md").exists()
