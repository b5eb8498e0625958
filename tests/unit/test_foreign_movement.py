"""A process peer that supports ADD and REMOVE goes through the scenario's operations: the
keys it moves, by server name, equal what our recipe moves on the same operation when it
routes like it, and its agreement on the fleet after each operation is checked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.cli import main
from tests.paths import ROOT

PEER = ROOT / "peers" / "python" / "ketama_peer.py"
SCENARIO = f"""
name = "foreign-moves"
[servers]
count = 12
name = "10.0.{{i}}.1:11211"
[generator]
construction = "libketama"
[keys]
count = 4_000
[measure]
layouts = ["cffi-packed"]
metrics = ["movement"]
repeats = 1
scalar_keys = 100
peers = [
  {{ command = [{json.dumps(sys.executable)}, {json.dumps(str(PEER))}], name = "ketama-python", \
routes_like = {{ construction = "libketama" }} }},
]
[[operations]]
kind = "add"
server = "10.0.12.1:11211"
[[operations]]
kind = "remove"
server = "10.0.3.1:11211"
"""


def test_a_process_peer_moves_the_keys_its_recipe_moves(tmp_path: Path) -> None:
    scenario = tmp_path / "moves.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(tmp_path / "out"), "--no-progress",
                 "--no-history"]) == 0
    result = json.loads((tmp_path / "out" / "foreign-moves.json").read_text())
    (run,) = result["runs"]
    ours = [(m["operation"], m["server"], m["ring_moved_fraction"])
            for m in run["figures"]["movement"]]
    peer = next(s for s in run["subjects"] if s["name"] == "ketama-python")
    moves = peer["figures"]["foreign"]["moves"]
    assert [(m["operation"], m["server"], m["moved_fraction"]) for m in moves] == ours
    assert all(m["agreement_after"] == 1.0 for m in moves)
    assert all(0 < fraction < 0.2 for _, _, fraction in ours)
    markdown = (tmp_path / "out" / "foreign-moves.md").read_text()
    assert "operation (its ADD or REMOVE)" in markdown and "remove 10.0.3.1:11211" in markdown


def test_an_operation_after_one_undone_compares_by_name(tmp_path: Path) -> None:
    """A REMOVE undone by an ADD leaves the peer numbering the removed server last: the
    operations after it are still checked by server name (#38, class 10: the example peer
    was accused of routing most keys differently)."""
    scenario = tmp_path / "undone.toml"
    # remove first, so that every operation after it meets the renumbered peer
    operations = SCENARIO.index("[[operations]]")
    scenario.write_text(SCENARIO[:operations] + """
[[operations]]
kind = "remove"
server = "10.0.3.1:11211"
[[operations]]
kind = "add"
server = "10.0.12.1:11211"
[[operations]]
kind = "remove"
server = "10.0.7.1:11211"
""", encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(tmp_path / "out"), "--no-progress",
                 "--no-history"]) == 0
    result = json.loads((tmp_path / "out" / "foreign-moves.json").read_text())
    (run,) = result["runs"]
    ours = [(m["operation"], m["server"], m["ring_moved_fraction"])
            for m in run["figures"]["movement"]]
    peer = next(s for s in run["subjects"] if s["name"] == "ketama-python")
    moves = peer["figures"]["foreign"]["moves"]
    assert [(m["operation"], m["server"], m["moved_fraction"]) for m in moves] == ours
    assert all(m["agreement_after"] == 1.0 for m in moves)
