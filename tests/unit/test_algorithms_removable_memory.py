"""The memory metric (memray, at the allocator) sees the per-slot state of anchor and dx as
the papers state it, and memento as jump's size while nothing is removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.metrics.memory import measure_algorithm_here

SERVERS = 1000
#: what any algorithm holds besides its structure (the servers, the parameters, the
#: Python objects around the C arrays): measured at 9.5 to 11 KiB for jump and these
CONSTANT = 16 * 1024


def _structure_bytes(tmp_path: Path, name: str, params: dict[str, Any]) -> int:
    spec = tmp_path / f"{name}.json"
    spec.write_text(json.dumps({
        "servers": [[f"server-{i}", 1] for i in range(SERVERS)], "params": params,
        "key_names": [f"key-{i}" for i in range(100)]}))
    return measure_algorithm_here(name, spec).structure_bytes


@pytest.mark.parametrize(("arrays", "per_slot"), [("full", 16), ("reduced", 8)])
def test_anchor_holds_16_or_8_bytes_a_slot(arrays: str, per_slot: int, tmp_path: Path) -> None:
    """At a capacity of 200,000: 16 bytes a slot in the full form (A, W, L, K as uint32),
    8 in the reduced one (A, K), plus a constant."""
    held = _structure_bytes(tmp_path, "anchor", {"capacity": 200_000, "arrays": arrays})
    assert per_slot * 200_000 <= held <= per_slot * 200_000 + CONSTANT


def test_dx_holds_a_bit_a_slot(tmp_path: Path) -> None:
    """At a capacity of 800,000: 100,000 bytes of bits, plus a constant."""
    held = _structure_bytes(tmp_path, "dx", {"capacity": 800_000})
    assert 100_000 <= held <= 100_000 + CONSTANT


def test_memento_with_nothing_removed_is_the_size_of_jump(tmp_path: Path) -> None:
    """No table until a middle removal: memento holds what jump holds, to within the Python
    objects around its C state (under a kilobyte)."""
    memento = _structure_bytes(tmp_path, "memento", {})
    jump = _structure_bytes(tmp_path, "jump", {})
    assert abs(memento - jump) <= 1024
