"""Memory of an algorithm at each step of removals, measured by memray in a fresh process.

The memory metric's way (`harness.metrics.memory`): allocator bytes still held after
the structure is made, seen by memray (C and numpy allocations included), in a process of
its own. One process per algorithm and order walks the same states as the run
(`harness.metrics.removals.walk`) and measures each of them: the state is reached untracked,
then its structure is made again under memray. A ring is made as its layout from its
points (what routing keeps, not the points' generation); any other algorithm is rebuilt
from the servers left, or, where servers leave as it falls (`without`), walked again from
the whole fleet, since that history is its state.

`python -m harness.metrics.removals.memory SPEC.json` prints the bytes of each step.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.servers import Server
from harness.metrics.instruments.probes import run_fresh, tracked
from harness.metrics.removals.walk import State, walk
from harness.recipes.algorithms import get_algorithm
from harness.recipes.layouts import get_layout


def _remade(algorithm: str, servers: list[Server], params: dict[str, Any],
            sequence: list[int], state: State) -> Callable[[], object]:
    """How to make the state's structure again, to measure what it holds."""
    ring = state.algorithm.ring
    if ring is not None:
        layout = get_layout(state.algorithm.form)
        return lambda: layout.build(ring.positions, ring.owners)
    if state.how == "as it falls":
        # The algorithm alone: the walk's bookkeeping (the live indexes) is not its state.
        return lambda: list(walk(algorithm, servers, params, sequence,
                                 [state.removed]))[-1].algorithm
    left = [servers[i] for i in state.live]
    cls = get_algorithm(algorithm)
    return lambda: cls.from_params(left, params)


def measure_here(spec_file: Path) -> list[int]:
    """Bytes held by the structure at each step of the spec's walk, in this process."""
    spec = json.loads(spec_file.read_text())
    servers = [Server(name, weight) for name, weight in spec["servers"]]
    name, params, sequence = spec["algorithm"], spec["params"], spec["sequence"]
    held = []
    with tempfile.TemporaryDirectory(prefix="ring-harness-memray-") as tmp:
        for state in walk(name, servers, params, sequence, spec["counts"]):
            remake = _remade(name, servers, params, sequence, state)
            remake()  # once untracked: first calls import modules, which are not the state
            _, nbytes, _ = tracked(remake, Path(tmp), f"step-{state.removed}")
            held.append(nbytes)
    return held


def measure_in_subprocess(spec_file: Path, algorithm: str, servers: list[Server],
                          params: dict[str, Any], sequence: list[int],
                          counts: list[int]) -> list[int]:
    """`measure_here` in a fresh process, for the given walk."""
    spec_file.write_text(json.dumps({
        "algorithm": algorithm, "servers": [(s.name, s.weight) for s in servers],
        "params": params, "sequence": sequence, "counts": counts}))
    printed = run_fresh("harness.metrics.removals.memory", [], spec_file, algorithm)
    return [int(n) for n in json.loads(printed)]


if __name__ == "__main__":
    print(json.dumps(measure_here(Path(sys.argv[1]))))
