"""The memory estimate is an upper bound: fuzzed scenarios that validation accepts are run
as `python -m harness run`, and the peak resident memory of the whole process tree
(tests/peak_memory.py: summed PSS sampled every few milliseconds, and the kernel's
high-water mark) never exceeds the estimate the run recorded before it started; above
100 MB it is also within 3x of it, so the bound refuses no more than it must.

RING_ESTIMATE_EXAMPLES sets the examples (CI runs a short profile with fresh ones);
e.g. `RING_ESTIMATE_EXAMPLES=200 pytest tests/property/test_estimate_bound.py` for a long run.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, note, settings
from hypothesis import strategies as st

from harness.cli import command_cost
from harness.core.errors import HarnessError
from harness.report.history import Entry, machine_name
from harness.report.history_figures import write_sidecar
from harness.report.results import load_result
from harness.run.estimate import estimate, estimated_seconds
from harness.run.scenario import load_scenario
from tests.peak_memory import run_measured
from tests.property.test_fuzz import toml_document

EXAMPLES = int(os.environ.get("RING_ESTIMATE_EXAMPLES", "5"))
#: runs measured against the 3x side of the bound: below it the interpreter dominates
LARGE_BYTES = 100 * 10**6
#: the fuzzed runs' own work, so that the examples fit the test's time
MAX_SECONDS = 40.0

LAYOUTS_32 = ["tuples", "numpy-aligned", "numpy-packed", "numpy-soa", "cffi-aligned",
              "cffi-packed", "bucketed"]
LAYOUTS_64 = ["numpy-aligned-64", "numpy-packed-64", "cffi-aligned-64", "cffi-packed-64"]
METRICS = ["balance", "collisions", "load", "movement", "memory", "throughput"]
#: a small pipe peer, and the recipes it may claim to route like (exact = false: priced
#: the same, and the claim need not hold on the drawn servers)
KETAMA_PEER = Path(__file__).resolve().parents[2] / "peers" / "python" / "ketama_peer.py"
PEER_CLAIMS: list[dict[str, Any]] = [
    {"construction": "libketama"},
    {"algorithm": "maglev", "table_size": 1_000_003},
    {"algorithm": "dx", "capacity": 200_000},
    {"algorithm": "anchor", "capacity": 1_000_000}]
#: entries already in the run's --history (copies of a committed result), with their
#: sidecars or without (a history older than them): the index the run rewrites
HISTORY_SIZES = [0, 40, 400]
HISTORY_RESULT = Path(__file__).resolve().parents[2] / "results" / "tutorial.json"


def _history(folder: Path, count: int, sidecars: bool) -> Path:
    """`count` copies of HISTORY_RESULT as this machine's entries."""
    history = folder / "history"
    (history / machine_name()).mkdir(parents=True)
    result = load_result(HISTORY_RESULT) if sidecars and count else None
    for number in range(1, count + 1):
        path = history / machine_name() / f"{number:04d}.json"
        shutil.copyfile(HISTORY_RESULT, path)
        if result is not None:
            write_sidecar(Entry(machine_name(), number, path), result)
    return history


@st.composite
def sized_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A scenario of the ring grammar, from one server and key to millions of points and
    keys, with any layouts, metrics, peers and operations; a table among migration,
    process, a [clients] recipe (ring, dx, maglev, anchor) and a [removals] walk."""
    wide = draw(st.booleans())
    # Sizes lean large: the 3x side of the bound is checked only above 100 MB.
    servers = draw(st.sampled_from([1, 40, 300, 300]))
    weights = draw(st.sampled_from([1, 2.5, 4]))
    construction = draw(st.sampled_from(["points", "libketama", "nginx", "haproxy",
                                         "envoy_ring_hash", "pingora", "cassandra"]))
    generator: dict[str, Any] = {"construction": construction}
    if construction == "points":  # the others fix their own points and hash
        generator["points_per_weight"] = draw(st.sampled_from(
            [1, 2_000, 20_000, 20_000, [160, 10_000]]))
        generator["hash"] = "blake2b-64" if wide else draw(st.sampled_from(
            ["blake2b-32", "fnv1a-fmix32"]))
    elif construction == "cassandra":  # 64-bit tokens, num_tokens up to Cassandra's cap
        generator["points_per_weight"] = draw(st.sampled_from([1, 256, 1_536, [16, 256]]))
        if servers <= 40 and draw(st.booleans()):  # Cassandra's allocator: seconds a build
            generator["allocation"] = "allocator"
            # for one copy or several (Cassandra 4.0's default is 3)
            generator["replication_factor"] = draw(st.sampled_from([1, 3]))
        wide = True
    else:
        wide = construction == "envoy_ring_hash"  # its points are 64-bit
    layouts = draw(st.lists(st.sampled_from(LAYOUTS_64 if wide else LAYOUTS_32), min_size=1,
                            max_size=4, unique=True))
    metrics = draw(st.lists(st.sampled_from(METRICS), min_size=1, max_size=4, unique=True))
    keys: dict[str, Any] = {"count": draw(st.sampled_from([1, 100_000, 600_000, 600_000])),
                            "name": draw(st.sampled_from(["key-{i}", "{i:>60}"]))}
    if "load" in metrics and draw(st.booleans()):
        keys |= {"distribution": "zipf", "universe": draw(st.sampled_from(
            [keys["count"], 2_000_000]))}
    if draw(st.booleans()):
        # keys sharing parts, routed by their hash tag (a routed name beside each key)
        keys |= {"name": "{{c-{part}}}:" + keys["name"], "hash_part": "tag",
                 "parts": draw(st.sampled_from([10, 3_000_000])),
                 "part_distribution": draw(st.sampled_from(["uniform", "zipf"]))}
    document: dict[str, Any] = {
        "name": "bound",
        "servers": {"count": servers, "weight": weights,
                    "name": draw(st.sampled_from(["s-{i}", "10.0.{i}.1:11211"]))},
        "generator": generator, "keys": keys,
        "measure": {"layouts": layouts, "metrics": metrics, "repeats": 1,
                    "scalar_keys": draw(st.sampled_from([10, 2_000]))},
    }
    if construction == "pingora":  # its servers are socket addresses
        document["servers"]["name"] = "10.0.0.1:{i}"
    if construction == "libketama" and weights != 2.5 and draw(st.booleans()):
        document["measure"]["peers"] = ["uhashring-ketama"]
    if draw(st.booleans()):
        document["operations"] = [{"kind": "add", "server": "new", "weight": weights}]
    if draw(st.booleans()):
        # a pipe peer claiming a recipe of ours, priced by that recipe's own figures; its
        # Python route is slow, so the keys are few
        claim = draw(st.sampled_from(PEER_CLAIMS))
        document["measure"].setdefault("peers", []).append({
            "command": [sys.executable, str(KETAMA_PEER)], "name": "ketama-pipe",
            "routes_like": claim, "exact": False})
        keys["count"] = min(keys["count"], 20_000)
    table = draw(st.sampled_from([None, None, "migration", "process", "clients", "removals",
                                  "range_scans", "fleet"]))
    if table == "migration" and construction == "points":
        document["migration"] = {
            "to": {"points_per_weight": 16}, "stages": [0.5, 1.0],
            "cache_objects": draw(st.sampled_from([1_000, 50_000])),
            "universe": draw(st.sampled_from([100_000, 2_000_000]))}
    elif table == "migration" and document["measure"].get("peers"):
        # a switch of clients: the peer routes the universe key by key
        document["migration"] = {
            "to": {"peer": "uhashring-ketama"}, "stages": [0.5, 1.0],
            "cache_objects": draw(st.sampled_from([1_000, 50_000])),
            "universe": draw(st.sampled_from([100_000, 1_000_000]))}
    elif table == "clients":
        # a recipe of ours as a client, priced by its algorithm on each state of the fleet
        recipe = draw(st.sampled_from([
            {"algorithm": "ring", "points_per_weight": draw(st.sampled_from([160, 200_000]))},
            {"algorithm": "dx", "capacity": draw(st.sampled_from([0, 200_000]))},
            {"algorithm": "maglev", "table_size": draw(st.sampled_from([65_537, 1_000_003]))},
            # 1,000,000 slots: a client's anchor priced by its C arrays alone
            # (`estimated_client_bytes`), not with the plain-Python reference it never
            # builds (208 bytes a slot: 351.5 MiB estimated, 98.3 MiB measured, before).
            {"algorithm": "anchor", "capacity": draw(st.sampled_from([0, 1_000_000]))}]))
        document["measure"]["peers"] = ["jump-consistent-hash"]  # weightless
        document["servers"]["weight"] = 1
        document.pop("operations", None)
        keys["count"] = min(keys["count"], 20_000)  # every client routes each key in Python
        document["clients"] = {"fleets": [{"servers": draw(st.sampled_from([3, 40])),
                                           "remove": "10.0.1.1:11211"}],
                               "recipes": [{"name": "recipe", **recipe}]}
    elif table == "removals":
        document["removals"] = {
            "servers": draw(st.sampled_from([100, 1_000])),
            "algorithms": [{"name": draw(st.sampled_from(["dx", "anchor", "jump"]))}],
            "max_share": draw(st.sampled_from([0.5, 0.99])), "step": 0.33,
            "keys": 20_000, "memory": False}
    elif table == "range_scans" and "hash_part" not in keys:
        # every recipe built twice (the fleet and one server more); range's sample sorted
        # long names, held again by the scan's byte order and range's sample (a sample
        # named "{i:>30000}" and keys of 20,000 characters peaked above their estimates)
        sample: dict[str, Any] = draw(st.sampled_from([
            {"sample_count": 1_000}, {"sample_count": 2_000_000},
            {"sample_count": 10_000, "sample_name": "{i:>30000}"}]))
        if draw(st.booleans()):
            keys |= {"name": "{i:>2000}", "count": min(keys["count"], 100_000)}
        document["range_scans"] = {
            "algorithms": ["jump", "maglev", {"name": "range", **sample}],
            "widths": [1, min(keys["count"], 1_000)], "scans": 200}
        document["servers"]["weight"] = 1
    elif table == "fleet" and construction == "points":
        # a fleet's data centres as tasks on the local pool: each worker holds its task
        document["fleet"] = {
            "data_centres": draw(st.sampled_from([3, 8])),
            "sizes": {"values": [draw(st.sampled_from([5, 300])), 20], "shares": [1, 1]},
            "weights": {"values": [1, 4], "shares": [1, 1]},
            "capabilities": {"pci": 0.5}, "cache_objects": 500,
            "universe": draw(st.sampled_from([50_000, 500_000])),
            "requests_per_window": 50_000, "warmup_requests": 100_000}
        document["rollout"] = {"to": {"points_per_weight": 16}, "stages": [0.5, 1.0],
                               "waves": [{"name": "canary", "count": 1},
                                         {"name": "all", "share": 1.0}]}
    elif table == "process":
        del document["servers"]["weight"]  # generated servers take weights from a mix
        document["servers"]["capabilities"] = {"pci": 0.5, "eu": 0.5, "tls": 0.5}
        document["process"] = {"eligibility": "combinations",
                               "layouts": layouts[:2] if not wide else ["cffi-packed-64"]}
    return document


#: always drawn: a [clients] anchor of 1,000,000 slots, priced by its C arrays (measured
#: 75.4 MiB, estimated 131.9 MiB; 351.5 MiB estimated when its plain-Python reference,
#: which a client never builds, was priced in)
ANCHOR_CLIENT: dict[str, Any] = {
    "name": "bound", "servers": {"count": 3, "weight": 1, "name": "10.0.{i}.1:11211"},
    "generator": {"construction": "points", "points_per_weight": 2000, "hash": "blake2b-32"},
    "keys": {"count": 20_000, "name": "key-{i}"},
    "measure": {"layouts": ["cffi-packed"], "metrics": ["balance"], "repeats": 1,
                "scalar_keys": 10, "peers": ["jump-consistent-hash"]},
    "clients": {"fleets": [{"servers": 3, "remove": "10.0.1.1:11211"}],
                "recipes": [{"name": "recipe", "algorithm": "anchor", "capacity": 1_000_000}]}}

#: always drawn: a [clients] Maglev of 1,000,003 slots, priced by its C table and its fill's
#: "taken" bytes (`estimated_client_bytes`: measured 84.0 MiB, estimated 114.0 MiB; 127.6
#: MiB when the plain-Python reference's 24 bytes a slot were priced in. At 10,000,019
#: slots, measured 101.2 MiB against 142.6, and 333.6 before: past this test's 3x side,
#: but priced past its time limit here, by the fill's seconds)
MAGLEV_CLIENT: dict[str, Any] = {
    **ANCHOR_CLIENT, "clients": {
        "fleets": [{"servers": 3, "remove": "10.0.1.1:11211"}],
        "recipes": [{"name": "recipe", "algorithm": "maglev", "table_size": 1_000_003}]}}

#: a sweep of deterministic tables: its points run as tasks on the local pool, one per
#: worker at once, each priced with its worker's interpreter (harness.run.sweep)
SWEEP_AS_TASKS: dict[str, Any] = {
    "name": "bound", "servers": {"count": 50, "weight": 1},
    "generator": {"construction": "points", "points_per_weight": [400, 2000, 4000],
                  "hash": "blake2b-32"},
    "keys": {"count": 300_000, "name": "key-{i}"},
    "measure": {"layouts": ["cffi-packed", "numpy-aligned"],
                "metrics": ["balance", "collisions", "load", "movement"]}}


#: 600,000 tagged keys behind 3,000,000 zipf parts: the parts' arrays and the names were
#: summed, 3.1x the measured peak (found by this test); the arrays are gone before any name
ZIPF_PARTS = {
    "name": "bound", "servers": {"count": 1, "weight": 1, "name": "s-{i}"},
    "generator": {"construction": "haproxy"},
    "keys": {"count": 600_000, "name": "{{c-{part}}}:key-{i}", "hash_part": "tag",
             "parts": 3_000_000, "part_distribution": "zipf"},
    "measure": {"layouts": ["tuples"], "metrics": ["balance"], "repeats": 1,
                "scalar_keys": 10}}


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(),
                    reason="the tree's memory is read from /proc/<pid>/smaps_rollup")
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
@given(document=sized_scenarios(), history_size=st.sampled_from(HISTORY_SIZES),
       sidecars=st.booleans())
@example(document=ANCHOR_CLIENT, history_size=0, sidecars=False)
@example(document=MAGLEV_CLIENT, history_size=0, sidecars=False)
@example(document=SWEEP_AS_TASKS, history_size=0, sidecars=False)
@example(document=ZIPF_PARTS, history_size=400, sidecars=False)
def test_measured_peak_stays_under_the_estimate(
    document: dict[str, Any], history_size: int, sidecars: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("bound")
    path = folder / "bound.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    try:
        scenario = load_scenario(path)
    except HarnessError:
        event("refused by validation")
        return
    seconds, _ = estimated_seconds(scenario)
    entries = estimate(scenario).added_bytes
    if seconds > MAX_SECONDS or entries > 3 * 2**30:
        event("too long or too large for the test")
        return
    history = _history(folder, history_size, sidecars)
    # The index rewritten after the run is priced beside it, as `run` checks it.
    index_bytes = command_cost(history, 1).peak
    code, peak, errors = run_measured(
        [sys.executable, "-m", "harness", "run", str(path), "--out", str(folder / "out"),
         "--history", str(history), "--no-progress"])
    if code == 2:  # refused before any work (the time budget, a peer's weights)
        event("refused at the start")
        return
    assert code == 0, errors
    recorded = json.loads((folder / "out" / "bound.json").read_text())["estimated_peak_bytes"]
    recorded += index_bytes
    note(f"measured {peak / 2**20:.1f} MiB, estimated {recorded / 2**20:.1f} MiB "
         f"(history of {history_size} entries)")
    event("above 100 MB" if peak > LARGE_BYTES else "below 100 MB")
    assert peak <= recorded
    if peak > LARGE_BYTES:
        assert recorded <= 3 * peak
