"""[range_scans]: servers touched per scan of consecutive keys, hashing against range
partitioning, and what adding capacity moves (harness/metrics/range_scans.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.servers import Server
from harness.metrics.base import RunShape
from harness.metrics.range_scans import RangeScansMetric, independent_servers, servers_touched
from harness.recipes.algorithms.range_partition import RangePartition

SCENARIO = '''name = "scans"
[servers]
count = 12
[keys]
count = 6000
[measure]
metrics = []
layouts = []
[range_scans]
algorithms = ["jump", "kafka-murmur2", {{ name = "range", sample_count = 6000, range_keys = 100 }}]
widths = [5, 50, 500]
scans = {scans}
'''


def test_servers_touched_counts_distinct_owners() -> None:
    owners = np.array([0, 0, 1, 1, 2, 0, 3], dtype=np.uint16)
    assert servers_touched(owners, np.array([0, 2, 3]), 3).tolist() == [2, 2, 3]
    assert independent_servers(np.array([0.5, 0.5]), 1) == 1.0
    assert abs(independent_servers(np.array([0.5, 0.5]), 2) - 1.5) < 1e-12


def test_range_partitioning_touches_few_servers_and_hashing_many(tmp_path: Path) -> None:
    scenario = tmp_path / "scans.toml"
    scenario.write_text(SCENARIO.format(scans=400))
    assert main(["run", str(scenario), "--out", str(tmp_path), "--no-history"]) == 0
    result = json.loads((tmp_path / "scans.json").read_text())
    record = result["runs"][0]["figures"]["range_scans"]
    by_label = {r["label"]: r for r in record["recipes"]}
    jump, ranged = by_label["jump"], by_label["range 60 ranges"]
    assert record["keys"] == 6000
    for w in jump["widths"]:
        # Hashing places neighbours independently: the formula, within sampling noise.
        assert abs(w["mean_servers"] - w["independent_servers"]) < 0.1 * w["independent_servers"]
    for w in ranged["widths"]:
        # One server, plus one per range boundary crossed (100 keys a range).
        assert w["max_servers"] <= 2 + w["width"] // 100
        assert w["mean_servers"] < w["independent_servers"]
    assert jump["ranges"] is None and jump["split_moved"] is None
    assert ranged["ranges"] == 60
    # A split hands half of one 100-key range over; a merge moves at most one range.
    assert 0 < ranged["split_moved"] <= 100 / 6000
    assert 0 <= ranged["merge_moved"] <= 100 / 6000
    # Adding a server: jump moves about 1/13, kafka's mod N nearly everything.
    assert 0.04 < jump["add_server_moved"] < 0.12
    assert by_label["kafka-murmur2 kafka murmur2"]["add_server_moved"] > 0.8
    page = (tmp_path / "scans.md").read_text()
    assert "## Range scans" in page and "servers per scan of 500 keys" in page


def test_a_recipe_that_refuses_the_fleet_reads_not_supported(tmp_path: Path) -> None:
    scenario = tmp_path / "weighted.toml"
    scenario.write_text('name = "weighted"\n[servers]\nlist = [{name = "a", weight = 1}, '
                        '{name = "b", weight = 2}, {name = "c", weight = 1}]\n'
                        '[keys]\ncount = 2000\n[measure]\nmetrics = []\nlayouts = []\n'
                        '[range_scans]\nalgorithms = ["jump", "rendezvous-weighted"]\n'
                        'widths = [10]\nscans = 50\n')
    assert main(["run", str(scenario), "--out", str(tmp_path), "--no-history"]) == 0
    page = (tmp_path / "weighted.md").read_text()
    assert "jump: not supported: servers must be all of weight 1" in page
    # Its cells say so too, not that the scan was wider than the keys (it read 2,000).
    jump_row = next(line for line in page.splitlines() if line.startswith("| jump "))
    assert "not supported" in jump_row and "more than" not in jump_row


@pytest.mark.parametrize("width", [10, 1_000, 30_000])
def test_long_sample_names_are_priced(width: int) -> None:
    """range holds its sample's names as str and bytes: priced by the longest name, as a
    sample named "{i:>30000}" peaked at 639 MB against an estimate of 117 MiB."""
    servers = [Server(f"s-{i}", 1.0) for i in range(3)]
    params = {"sample_count": 10_000, "sample_name": f"{{i:>{width}}}"}
    held = RangePartition.estimated_bytes(servers, params)
    seconds, _ = RangePartition.estimated_seconds(servers, params, reference_keys=0,
                                                  fast_keys=0, plain_keys=0)
    assert held >= 2 * width * 10_000
    assert seconds >= 1e-8 * width * 10_000


def test_the_scans_byte_order_prices_long_key_names() -> None:
    """The scan's sorted names and the buffer its hashes join them into: twice each name,
    as keys of 20,000 characters ran 630 MiB above an estimate that left them out."""
    def working(longest: int) -> float:
        shape = RunShape(entries=0, keys=20_000, key_hash_bytes=4, ring_array_bytes=0.0,
                         reference_bytes=0.0, layouts=(), form_bytes=0.0, scalar_keys=10,
                         peer_bytes=0.0, operations=0, longest_key_name=longest,
                         options={"range_scans": object()})
        return RangeScansMetric().working(shape).bytes
    assert working(20_000) - working(0) >= 2 * 20_000 * 20_000
