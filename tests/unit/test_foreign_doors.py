"""The door the Foreign peers table names is the one recorded with the peer's figures.

A result keeps the label its peer's class gave when it was measured (`door_label`), so a
later harness does not move an old run's library into or out of our process; a result
written before the label was recorded names a library's door without a place. The label
is text from a file and is escaped as any other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.metrics.foreign.metric import UNRECORDED_DOORS
from harness.recipes.peers.foreign import DOORS
from harness.report import html, markdown
from harness.report.results import load_result
from harness.report.sections import result_report
from tests.paths import ROOT

COMMITTED = ROOT / "results" / "foreign-overhead.json"


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells, split at its pipes that are not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def _doors(document: str) -> dict[str, str]:
    """Peer name -> door cell of the Foreign peers table of a rendered Markdown result."""
    section = document.split("## Foreign peers (")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = _cells(lines[0])
    doors: dict[str, str] = {}
    for line in lines[2:]:
        cells = _cells(line)
        if len(cells) == len(header):
            doors.setdefault(cells[0], cells[header.index("door")])
    return doors


def _foreign_figures(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["figures"]["foreign"] for run in data["runs"] for s in run["subjects"]
            if "foreign" in s.get("figures", {})]


def _rendered(data: dict[str, Any], tmp_path: Path) -> str:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    return markdown.report(result_report(load_result(path)))


def test_the_committed_run_names_the_door_it_recorded() -> None:
    data = json.loads(COMMITTED.read_text())
    recorded = {f["door"]: f["door_label"] for f in _foreign_figures(data)}
    assert recorded == {"library": DOORS["library"], "command": DOORS["command"]}
    doors = _doors(markdown.report(result_report(load_result(COMMITTED))))
    assert doors == {"libmemcached-abi": DOORS["library"],
                     "libmemcached-pipe": DOORS["command"]}


def test_a_result_without_the_label_does_not_place_a_library(tmp_path: Path) -> None:
    data = json.loads(COMMITTED.read_text())
    for figures in _foreign_figures(data):
        del figures["door_label"]
    doors = _doors(_rendered(data, tmp_path))
    assert doors == {"libmemcached-abi": UNRECORDED_DOORS["library"],
                     "libmemcached-pipe": DOORS["command"]}
    # neither where it ran before the worker nor where it runs now
    assert "process" not in doors["libmemcached-abi"]
    assert "worker" not in doors["libmemcached-abi"]


def test_a_recorded_label_is_escaped(tmp_path: Path) -> None:
    data = json.loads(COMMITTED.read_text())
    hostile = "<img src=x onerror=alert(1)> | **x**"
    for figures in _foreign_figures(data):
        figures["door_label"] = hostile
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    report = result_report(load_result(path))
    page = html.report(report)
    assert "<img src=x" not in page and "&lt;img src=x" in page
    # the pipe inside the label does not split the Markdown table's row
    doors = _doors(markdown.report(report))
    assert set(doors) == {"libmemcached-abi", "libmemcached-pipe"}
    assert all(door.startswith(r"\<img src=x") and r"\| \*\*x\*\*" in door
               for door in doors.values())
