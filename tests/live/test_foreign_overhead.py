"""The pipe's cost: one library through both doors in one run (scenarios/foreign-overhead.toml).

A process peer that serves, by one of its arguments, a library the scenario also loads in
process is paired with it, and the run states the per-round difference of the two; the
shipped scenario itself is run live here, reduced in keys and rounds, on adapters that
peers/build.sh built.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.servers import Server
from harness.metrics.foreign.overhead import (
    TARGET_NS,
    library_pairs,
    per_round_difference,
    signed_cell,
)
from harness.recipes.peers.foreign import ForeignPeerSpec, open_foreign_peer, process
from tests.toolchains import ROOT, shipped_adapters

SCENARIO = ROOT / "scenarios" / "foreign-overhead.toml"
PYTHON_PEER = ROOT / "peers" / "python" / "ketama_peer.py"


def test_a_bridge_is_paired_with_the_library_it_serves(tmp_path: Path) -> None:
    """Pairs are found by file, not by spelling (a link or another relative path to the
    same library pairs; another library does not; the program itself never counts)."""
    library, other = tmp_path / "libring.so", tmp_path / "libother.so"
    library.write_bytes(b"x")
    other.write_bytes(b"y")
    (tmp_path / "link.so").symlink_to(library)
    specs = {
        "abi": ForeignPeerSpec("abi", library=str(library)),
        "pipe": ForeignPeerSpec("pipe", command=("bridge", str(tmp_path / "link.so"))),
        "elsewhere": ForeignPeerSpec("elsewhere", command=("bridge", str(other))),
        "program": ForeignPeerSpec("program", command=(str(library),)),
        "absent": ForeignPeerSpec("absent", command=("bridge", str(tmp_path / "gone.so"))),
    }
    assert library_pairs(specs) == {"pipe": "abi"}


def test_the_difference_is_taken_round_by_round() -> None:
    """Each round's pipe time minus the same round's in-process time: a slow round in both
    cancels, which a difference of medians would not show."""
    difference = per_round_difference([110.0, 503.0, 108.0], [100.0, 500.0, 101.0])
    assert (difference.median, difference.min, difference.max) == (7.0, 3.0, 10.0)
    assert difference.rounds == 3
    with pytest.raises(ValueError):
        per_round_difference([1.0], [1.0, 2.0])
    assert signed_cell(per_round_difference([1.0, 4.0], [2.0, 1.0])).text == \
        "+1.0 (-1.0 to +3.0)"


def test_the_shipped_scenario_states_the_pipes_cost(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """foreign-overhead.toml, with fewer keys and rounds, run from the repository's root on
    build/peers: both doors route like libmemcached, the pipe peer names its library peer,
    the difference and its CPU-time twin cover every round, and the report has the table."""
    shipped_adapters()
    monkeypatch.chdir(ROOT)
    scenario = tomllib.loads(SCENARIO.read_text())
    assert scenario["keys"]["count"] == 100_000  # the batch size the target is stated at
    text = SCENARIO.read_text().replace("count = 100_000", "count = 3_000") \
        .replace("repeats = 60", "repeats = 4")
    assert text.count("3_000") == 1 and "repeats = 4" in text
    reduced = tmp_path / "foreign-overhead.toml"
    reduced.write_text(text)
    assert main(["run", str(reduced), "--out", str(tmp_path / "out"), "--no-progress",
                 "--no-history"]) == 0
    result = json.loads((tmp_path / "out" / "foreign-overhead.json").read_text())
    (run,) = result["runs"]
    figures = {s["name"]: s["figures"]["foreign"] for s in run["subjects"]
               if s["kind"] == "peer"}
    abi, pipe = figures["libmemcached-abi"], figures["libmemcached-pipe"]
    assert abi["door"] == "library" and pipe["door"] == "command"
    assert abi["agreement"] == pipe["agreement"] == 1.0
    assert abi["same_library_as"] is None and abi["pipe_minus_in_process_ns"] is None
    assert pipe["same_library_as"] == "libmemcached-abi"
    for key in ("pipe_minus_in_process_ns", "pipe_minus_in_process_cpu_ns"):
        difference = pipe[key]
        assert difference["rounds"] == 4
        assert difference["min"] <= difference["median"] <= difference["max"]
    wall = pipe["pipe_minus_in_process_ns"]
    assert wall["min"] <= pipe["batch_ns"]["max"] - abi["batch_ns"]["min"]
    report = (tmp_path / "out" / "foreign-overhead.md").read_text()
    assert any(line.startswith("| libmemcached-abi ") and "| libmemcached-pipe " in line
               for line in report.splitlines())
    assert f"at most {TARGET_NS:g} ns" in report
    # by the wall clock and in CPU time: a three-way verdict with the interval it is from
    (row,) = [line for line in report.splitlines() if line.startswith("| libmemcached-abi ")
              and "| libmemcached-pipe " in line]
    verdicts = re.findall(r"\| (met|missed|within noise) \([+-][\d.,]+ to [+-][\d.,]+, "
                          r"99% interval\)", row)
    assert len(verdicts) == 2, row


def test_requests_go_into_the_pipe_uncopied_or_copied_alike(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A request is spliced into the pipe (vmsplice: the pipe references our pages) where
    the kernel allows it, else written (copied); a refusal of vmsplice falls back to
    write mid-request. Each way, a batch of 30,000 keys (several pipe-fulls) is routed
    alike."""
    servers = [Server(f"10.0.{i}.1:11211") for i in range(7)]
    keys = [f"key-{i}".encode() for i in range(30_000)]
    spec = ForeignPeerSpec("ketama", command=(sys.executable, str(PYTHON_PEER)))
    routed = []
    calls: list[int] = []
    real = process._vmsplice

    def refuse_after_one(fd: int, address: int, size: int) -> int:
        calls.append(size)
        if len(calls) > 1:
            raise OSError(22, "Invalid argument")
        return real(fd, address, min(size, 4096))

    for way in ("vmsplice", "write", "refused midway"):
        if way == "write":
            monkeypatch.setattr(process, "_VMSPLICE", None)
        if way == "refused midway":
            monkeypatch.undo()
            monkeypatch.setattr(process, "_vmsplice", refuse_after_one)
        peer = open_foreign_peer(spec, servers)
        try:
            routed.append(peer.route_many(keys).tolist())
        finally:
            peer.close()
    assert routed[0] == routed[1] == routed[2]
    assert len(calls) >= 2  # the refusal came after part of a request went in
    assert process._VMSPLICE is not None  # this kernel has it: the first way spliced
