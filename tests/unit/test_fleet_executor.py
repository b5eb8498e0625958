"""The fleet's tasks give the same bits on one local worker, two, and a Dask LocalCluster
of two worker processes (dask[distributed] is in the test extra, through `[cluster]`: a pip
package like hypothesis, not a system tool, so the test runs wherever the tests do)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from tests.unit.test_fleet import SCENARIO


def _fleet(tmp_path: Path, name: str, *executor: str) -> object:
    out = tmp_path / name
    # A task folder of its own for each run: every task is computed, none kept from another.
    assert main(["run", str(tmp_path / "fleet.toml"), "--no-history", "--out", str(out),
                 "--task-dir", str(tmp_path / f"tasks-{name}"), *executor]) == 0
    result = json.loads((out / "fleet-test.json").read_text())
    return result["runs"][0]["figures"]["fleet"]


def test_figures_are_bit_identical_whatever_the_executor_and_worker_count(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fleet.toml").write_text(SCENARIO)
    one = _fleet(tmp_path, "one", "--workers", "1")
    two = _fleet(tmp_path, "two", "--workers", "2")
    capsys.readouterr()
    dask = _fleet(tmp_path, "dask", "--executor", "dask", "--workers", "2")
    assert "Dask dashboard: http://127.0.0.1:" in capsys.readouterr().err
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert json.dumps(one, sort_keys=True) == json.dumps(dask, sort_keys=True)
