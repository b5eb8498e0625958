"""Committed results match the current renderer: a renderer change without regenerated
files fails here, not in a reader's browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report import markdown
from harness.report.results import load_result
from harness.report.sections import result_report
from tests.paths import ROOT

RESULTS = ROOT / "results"
RENDERED = sorted(p for p in RESULTS.rglob("*.json") if p.with_suffix(".md").exists())


def test_there_are_committed_results() -> None:
    """The check below has something to check."""
    assert len(RENDERED) > 20


@pytest.mark.parametrize("path", RENDERED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_each_committed_markdown_is_its_results_rendering(path: Path) -> None:
    """NAME.md is exactly what `show` renders from NAME.json today."""
    rendered = markdown.report(result_report(load_result(path)))
    assert path.with_suffix(".md").read_text(encoding="utf-8") == rendered
