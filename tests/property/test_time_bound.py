"""The time estimate bounds what a run takes to build its rings: fuzzed ring scenarios
(every construction, the algorithms that build tables, their layouts, a movement's rebuild
after each operation) are run as `python -m harness run`, and the wall time of the whole
process is at most 3x the seconds the estimate gave (`run_cost`, what `--max-minutes`
checks) plus a fixed allowance for what the estimate leaves in its margins (the
interpreter and its imports, the layouts' memory calibration, naming and hashing keys).

Slow (`pytest -m slow`): each example runs a scenario of up to a minute, and a shared
machine's load moves the wall time, which is what the factor of 3 is for. Explicit
examples: the hostile pass's ring of 8,388,608 Envoy points rebuilt for a movement (19.4 s
measured when builds were unpriced, estimated 0 s), and a large `points` ring whose names
Python formats. RING_TIME_EXAMPLES sets the drawn examples.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, note, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.run.estimate import estimated_seconds
from harness.run.scenario import load_scenario
from tests.property.test_fuzz import toml_document
from tests.unit.test_build_prices import ENVOY_8M

EXAMPLES = int(os.environ.get("RING_TIME_EXAMPLES", "5"))
#: what every run takes beside its priced work: the interpreter and imports (1 to 2 s
#: alone on a loaded machine), the layouts' memory lines (0.1 s a layout), the keys
ALLOWANCE_SECONDS = 10.0
#: drawn runs estimated past this are left out, so that the examples fit the test's time
MAX_SECONDS = 60.0

#: a large ring whose names Python formats (a format spec C lacks), rebuilt once
PYTHON_NAMED: dict[str, Any] = {
    "name": "python-named",
    "servers": {"count": 10},
    "generator": {"construction": "points", "points_per_weight": 200_000,
                  "point_name": "{server}-{j:07d}", "hash": "blake2b-64"},
    "keys": {"count": 1_000},
    "measure": {"layouts": ["cffi-packed-64"], "metrics": ["movement"], "repeats": 1},
    "operations": [{"kind": "add", "server": "new"}],
}

CONSTRUCTIONS = ["points", "nginx", "libketama", "libmemcached", "twemproxy", "haproxy",
                 "pingora", "envoy_ring_hash", "cassandra", "allocated"]
LAYOUTS_32 = ["tuples", "numpy-aligned", "cffi-packed", "numpy-soa", "bucketed"]
LAYOUTS_64 = ["numpy-aligned-64", "cffi-packed-64"]


@st.composite
def build_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A scenario whose work is mostly building: a ring of any construction at sizes up to
    millions of points, or an algorithm that fills a table, with a movement after up to
    two operations."""
    servers = draw(st.sampled_from([3, 40, 300]))
    construction = draw(st.sampled_from(CONSTRUCTIONS))
    generator: dict[str, Any] = {"construction": construction}
    wide = construction in ("envoy_ring_hash", "cassandra")
    if construction == "points":
        generator["points_per_weight"] = draw(st.sampled_from([100, 10_000, 100_000]))
        wide = draw(st.booleans())
        generator["hash"] = "blake2b-64" if wide else "blake2b-32"
        if draw(st.booleans()):
            generator["point_name"] = "{server}#{j:05d}"  # formatted by Python
    elif construction == "allocated":
        generator["points_per_weight"] = draw(st.sampled_from([4, 16, 64]))
    elif construction == "cassandra":
        generator["points_per_weight"] = draw(st.sampled_from([16, 256]))
    elif construction == "envoy_ring_hash":
        generator["minimum_ring_size"] = draw(st.sampled_from([1_024, 1_000_000, 4_000_000]))
        generator["hash_function"] = draw(st.sampled_from(["xx_hash", "murmur_hash_2"]))
    document: dict[str, Any] = {
        "name": "timed",
        "servers": {"count": servers, "name": "10.0.0.1:{i}" if construction == "pingora"
                    else "10.0.{i}.1:11211"},
        "keys": {"count": draw(st.sampled_from([1_000, 100_000]))},
        "measure": {"layouts": draw(st.lists(st.sampled_from(
                        LAYOUTS_64 if wide else LAYOUTS_32), min_size=1, max_size=3,
                        unique=True)),
                    "metrics": draw(st.lists(st.sampled_from(
                        ["balance", "collisions", "movement"]), min_size=1, unique=True)),
                    "repeats": 1, "scalar_keys": 10},
        "operations": [{"kind": "add", "server": f"new-{i}"}
                       for i in range(draw(st.integers(0, 2)))],
    }
    if draw(st.integers(0, 3)) == 0:  # an algorithm with a table instead of a ring
        document["algorithm"] = draw(st.sampled_from([
            {"name": "maglev", "table_size": 1_000_003},
            {"name": "anchor", "capacity": 2_000_000},
            {"name": "rendezvous"},
            {"name": "bounded-load", "points_per_weight": 10_000}]))
        document["measure"] = {"metrics": ["balance", "movement"], "repeats": 1,
                               "scalar_keys": 10}
        document["servers"] = {"count": servers}
    else:
        document["generator"] = generator
    return document


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(document=build_scenarios())
@example(document=ENVOY_8M)
@example(document=PYTHON_NAMED)
def test_a_run_takes_at_most_three_times_its_estimate(
        document: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("timed")
    path = folder / "timed.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    try:
        scenario = load_scenario(path)
    except HarnessError:
        event("refused by validation")
        return
    estimated, why = estimated_seconds(scenario)
    if estimated > MAX_SECONDS:
        event("too long for the test")
        return
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(path), "--out", str(folder / "out"),
         "--no-history", "--no-progress"], capture_output=True, text=True, check=False,
        cwd=Path(__file__).resolve().parents[2])
    measured = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    note(f"measured {measured:.1f} s, estimated {estimated:.1f} s ({why}); load average "
         f"{os.getloadavg()[0]:.1f}")
    event("estimated above 1 s" if estimated > 1 else "estimated below 1 s")
    assert measured <= 3 * estimated + ALLOWANCE_SECONDS
