"""The runner: a scenario in, one result document out.

For every point of the sweep (each `points_per_weight`): generate the ring,
route the workload through a vectorised reference, build every layout and
check that it routes identically (parity), then measure balance, collisions,
movement, throughput (all layouts in this process, rounds interleaved) and
memory (each layout alone in a fresh subprocess). Time and memory are
separate passes: a profiler would distort timings.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.errors import ParityError
from harness.generator import Server
from harness.layouts import LAYOUTS, Layout
from harness.machine import git_commit, machine_info
from harness.metrics.balance import arc_shares, measure_balance
from harness.metrics.collisions import expected_collisions
from harness.metrics.memory import measure_in_subprocess, save_peer_spec, save_ring_for_probe
from harness.metrics.movement import measure_movement, names_of
from harness.metrics.throughput import measure_throughput
from harness.peers import PEERS, Peer
from harness.progress import Progress
from harness.recipe import build_ring, hash_keys, points_per_server, run_label, sweep
from harness.results import FORMAT_NAME, FORMAT_VERSION
from harness.ring import Ring, reference_lookup_many, reference_owners
from harness.scenario import Operation, Scenario
from harness.workload import key_names

#: keys checked against the plain-Python reference itself (the rest against its vectorised form)
PLAIN_REFERENCE_KEYS = 2_000


def check_parity(
    ring: Ring, keys: npt.NDArray[np.unsignedinteger], layouts: dict[str, Layout]
) -> tuple[npt.NDArray[np.uint16], dict[str, object]]:
    """Owners of every key, after checking that every layout agrees with the reference."""
    expected = reference_owners(ring, keys)
    sample = keys[:PLAIN_REFERENCE_KEYS]
    if reference_lookup_many(ring, sample) != expected[: len(sample)].tolist():
        raise ParityError("the vectorised reference disagrees with the plain-Python reference")
    for name, layout in layouts.items():
        got = layout.lookup_many(keys)
        wrong = np.flatnonzero(got != expected)
        scalar = [layout.lookup(int(h)) for h in sample]
        scalar_wrong = np.flatnonzero(np.asarray(scalar) != expected[: len(sample)])
        if len(wrong) or len(scalar_wrong):
            # Name the first wrong answer of the path that gave it, batch before scalar.
            first, answer = (
                (int(wrong[0]), int(got[wrong[0]])) if len(wrong)
                else (int(scalar_wrong[0]), scalar[int(scalar_wrong[0])])
            )
            raise ParityError(
                f"layout {name} routes {len(wrong)} of {len(keys)} keys (batch) and "
                f"{len(scalar_wrong)} of {len(sample)} (scalar) differently from the "
                f"reference; first: key hash {int(keys[first])} -> {answer}, "
                f"expected {int(expected[first])}"
            )
    return expected, {"keys": len(keys), "plain_reference_keys": len(sample),
                      "layouts": list(layouts), "ok": True}


def _servers_after(servers: list[Server], op: Operation) -> list[Server]:
    if op.kind == "add":
        return [*servers, Server(op.server, op.weight)]
    return [s for s in servers if s.name != op.server]


def _movement(
    scenario: Scenario, ring: Ring, servers: list[Server], ppw: int,
    keys: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16],
) -> list[dict[str, object]]:
    records = []
    for op in scenario.operations:
        after_servers = _servers_after(servers, op)
        after = build_ring(scenario.generator, after_servers, ppw)
        after_owners = reference_owners(after, keys)
        if op.kind == "add":
            share = float(arc_shares(after, len(after_servers))[-1])
        else:
            index = [s.name for s in servers].index(op.server)
            share = float(arc_shares(ring, len(servers))[index])
        movement = measure_movement(
            op.kind, op.server, keys,
            names_of(owners, ring.servers), names_of(after_owners, after.servers),
            ring.servers, after.servers, share,
        )
        records.append(movement.as_record())
    return records


def run_point(
    scenario: Scenario, ppw: int, names: list[str], keys: npt.NDArray[np.unsignedinteger],
    progress: Progress,
) -> dict[str, Any]:
    """Everything measured for one value of points_per_weight."""
    gen, measure = scenario.generator, scenario.measure
    servers = scenario.ring_servers()
    label = run_label(gen, ppw)
    progress.stage(f"{label}: building the ring")
    ring = build_ring(gen, servers, ppw)
    point_counts = points_per_server(gen, servers, ppw, ring)
    points = sum(point_counts)
    record: dict[str, Any] = {
        "label": label,
        "points_per_weight": ppw if ppw else None,
        "ring": {"servers": len(servers), "points": points, "entries": ring.entries,
                 "bits": ring.bits, "hash": gen.hash if ppw else gen.construction},
    }
    progress.stage(f"{label}: building layouts, checking parity")
    layouts: dict[str, Layout] = {
        name: LAYOUTS[name].build(ring.positions, ring.owners) for name in measure.layouts
    }
    owners, record["parity"] = check_parity(ring, keys, layouts)
    peers = {name: PEERS[name].build(servers) for name in measure.peers}
    progress.advance()
    metrics = set(measure.metrics)
    if "collisions" in metrics:
        record["collisions"] = {"collisions": ring.collisions,
                                "collisions_expected": expected_collisions(points, ring.bits)}
    if "balance" in metrics:
        weights = [s.weight for s in servers]
        record["balance"] = measure_balance(ring, owners, weights, point_counts).as_record()
    if "movement" in metrics:
        progress.stage(f"{label}: movement")
        record["movement"] = _movement(scenario, ring, servers, ppw, keys, owners)
    per_layout: dict[str, dict[str, Any]] = {
        name: {"layout": name, "entries": layout.entries, "entry_size": layout.entry_size,
               "nbytes": layout.nbytes}
        for name, layout in layouts.items()
    }
    per_peer = {name: _peer_record(name, peer, names, owners) for name, peer in peers.items()}
    if "throughput" in metrics:
        progress.stage(f"{label}: timing lookups")
        timings = measure_throughput(
            layouts, keys, measure.repeats, measure.scalar_keys, progress.advance,
            peers={name: peer.lookup_key for name, peer in peers.items()}, key_names=names,
        )
        for name, timing in timings.items():
            (per_layout.get(name) or per_peer[name]).update(
                {k: t.as_record() for k, t in timing.items()}
            )
    else:
        progress.advance(measure.repeats + 1)
    del layouts, peers  # free them before the memory pass starts its own processes
    if "memory" in metrics:
        with tempfile.TemporaryDirectory(prefix="ring-harness-") as tmp:
            ring_file, peer_file = Path(tmp) / "ring.npz", Path(tmp) / "peer.json"
            save_ring_for_probe(ring_file, ring.positions, ring.owners, keys)
            if per_peer:
                save_peer_spec(peer_file, [(s.name, s.weight) for s in servers], names)
            jobs = [("layout", n, ring_file, per_layout[n]) for n in per_layout]
            jobs += [("peer", n, peer_file, per_peer[n]) for n in per_peer]
            for kind, name, spec_file, target in jobs:
                progress.stage(f"{label}: memory of {name} (fresh process)")
                memory = measure_in_subprocess(kind, name, spec_file).as_record()
                memory.pop("layout")
                memory.pop("entries")
                target.update(memory)
                progress.advance()
    else:
        progress.advance(len(measure.layouts) + len(measure.peers))
    record["layouts"] = list(per_layout.values())
    if per_peer:
        record["peers"] = list(per_peer.values())
    return record


def _peer_record(
    name: str, peer: Peer, names: list[str], owners: npt.NDArray[np.uint16]
) -> dict[str, Any]:
    """A peer's size, and how often it agrees with our ring (1.0 only for the same ring)."""
    sample = names[:PLAIN_REFERENCE_KEYS]
    agree = sum(peer.lookup_key(key) == int(o) for key, o in zip(sample, owners, strict=False))
    return {"peer": name, "entries": peer.entries, "nbytes": peer.nbytes,
            "agreement": agree / len(sample), "agreement_keys": len(sample)}


def steps_per_point(scenario: Scenario) -> int:
    measure = scenario.measure
    return 1 + measure.repeats + 1 + len(measure.layouts) + len(measure.peers)


def run_scenario(
    scenario: Scenario, show_progress: bool | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> dict[str, Any]:
    """Run every point of the scenario's sweep; return the result document."""
    started, start = clock(), time.perf_counter()
    points = sweep(scenario.generator)
    with Progress(steps_per_point(scenario) * len(points), scenario.name,
                  enabled=show_progress) as progress:
        progress.stage("hashing keys")
        names = key_names(scenario.keys)
        keys = hash_keys(scenario.generator, names)
        runs = [run_point(scenario, ppw, names, keys, progress) for ppw in points]
    from harness import __version__

    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "harness_version": __version__,
        "scenario": {k: v for k, v in asdict(scenario).items() if k not in ("path", "sha256")},
        "scenario_file": scenario.path,
        "scenario_sha256": scenario.sha256,
        "machine": machine_info(),
        "git_commit": git_commit(),
        "started_at": started.isoformat(timespec="seconds"),
        "duration_s": round(time.perf_counter() - start, 1),
        "runs": runs,
    }
