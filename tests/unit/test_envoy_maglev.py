"""maglev against Envoy's own tests: every expected table and route of maglev_lb_test.cc,
replayed from tests/fixtures/envoy_maglev_vectors.json (commit in the file), in C and in
the plain-Python fill, with the retry rule and the compact table's choice."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.native import algorithms as c_algorithms
from harness.core.servers import Server
from harness.recipes.algorithms.maglev import (
    Hosts,
    MaglevAlgorithm,
    envoy_table_form,
    fill_reference,
    retry_hash,
)
from harness.recipes.constructions.envoy_ring_hash import normalized_locality_weights
from tests.paths import FIXTURES

pytestmark = pytest.mark.c_core

VECTORS = json.loads((FIXTURES / "envoy_maglev_vectors.json").read_text())
CASES: list[dict[str, Any]] = VECTORS["cases"]


def case_hosts(case: dict[str, Any]) -> tuple[list[int], list[Server], list[float] | None]:
    """The hosts in Envoy's table (indexes into the case's hosts), as servers, and their
    normalised weights when localities weigh them (None: the servers' own weights)."""
    weights = case.get("weights", [1] * len(case["hosts"]))
    if "localities" not in case:
        return (list(range(len(case["hosts"]))),
                [Server(name, weight) for name, weight in
                 zip(case["hosts"], weights, strict=True)], None)
    groups = [members for members, _ in case["localities"]]
    shares = normalized_locality_weights([[weights[i] for i in members] for members in groups],
                                         [weight for _, weight in case["localities"]])
    kept = [i for members, share in zip(groups, shares, strict=True) if share for i in members]
    return (kept, [Server(case["hosts"][i], weights[i]) for i in kept],
            [w for share in shares for w in share])


def tables(case: dict[str, Any]) -> tuple[list[int], list[int]]:
    """The case's table as the case's host indexes, filled in C and in plain Python."""
    kept, servers, normalized = case_hosts(case)
    size = case["table_size"]
    hosts = Hosts(servers, size, normalized)
    c_table = c_algorithms.CMaglevTable(hosts.offsets, hosts.skips, hosts.weights,
                                        hosts.owners, hosts.max_weight, size).slots()
    reference = fill_reference(hosts, size)
    return [kept[i] for i in c_table.tolist()], [kept[i] for i in reference]


@pytest.mark.parametrize("case", CASES, ids=[case["test"] for case in CASES])
def test_envoy_vectors(case: dict[str, Any]) -> None:
    """Every slot, entries per host and routes (with retries) as Envoy's test expects."""
    c_table, reference = tables(case)
    assert c_table == reference
    if "table" in case:
        assert c_table == case["table"]
    if "slot_counts" in case:
        assert np.bincount(c_table, minlength=len(case["hosts"])).tolist() \
            == case["slot_counts"]
    counts = np.bincount(c_table)
    counts = counts[counts > 0]
    if not case.get("single_host") and "min_entries_per_host" in case:
        assert (counts.min(), counts.max()) == (case["min_entries_per_host"],
                                                case["max_entries_per_host"])
    size = case["table_size"]
    for route in case.get("routes", []):
        assert c_table[retry_hash(route["hash"], route["attempt"]) % size] == route["host"]
    # Envoy's own cost rule puts each of these tables in its compact (bit-packed) form
    assert envoy_table_form(len(set(c_table)), size) == "compact"


@pytest.mark.parametrize("case", [c for c in CASES if "localities" not in c],
                         ids=[c["test"] for c in CASES if "localities" not in c])
def test_registered_algorithm_routes_envoy_vectors(case: dict[str, Any]) -> None:
    """The registered algorithm, built from the servers in any order, routes hashes
    0 .. 3M-1 (the test's loop) and each retry as Envoy's test expects."""
    _, servers, _ = case_hosts(case)
    size = case["table_size"]
    for order in (servers, servers[::-1]):
        maglev = MaglevAlgorithm.build(order, table_size=size)
        names = [server.name for server in order]
        routed = [case["hosts"].index(names[o]) for o in
                  maglev.lookup_many(np.arange(3 * size, dtype=np.uint64)).tolist()]
        assert routed == [case["table"][h % size] for h in range(3 * size)]
        for route in case.get("routes", []):
            owner = maglev.lookup_attempt(route["hash"], route["attempt"])
            assert case["hosts"].index(names[owner]) == route["host"]


def test_every_case_is_checked() -> None:
    """13 cases: 12 full tables, one slot count per host, 3 retry routes."""
    assert len(CASES) == 13
    assert sum("table" in case for case in CASES) == 12
    assert sum("slot_counts" in case for case in CASES) == 1
    assert sum(len(case.get("routes", [])) for case in CASES) == 3


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1))
def test_retry_hash_is_envoys_expression(key_hash: int, attempt: int) -> None:
    """`hash ^ (~0ULL - attempt + 1)` in unsigned 64-bit arithmetic; attempt 0 untouched."""
    expected = key_hash ^ ((2**64 - 1 - attempt + 1) % 2**64) if attempt > 0 else key_hash
    assert retry_hash(key_hash, attempt) == expected < 2**64


def test_envoy_table_form_follows_its_cost_rule() -> None:
    """Compact while hosts' pointers and bit-packed slots cost less than a pointer a slot:
    at M = 7, 6 hosts are compact (98 < 112 bytes) and 7 are not (114 > 112); at
    M = 65,537, 50,000 are (931,074 < 1,048,592) and 60,000 are not (1,091,074)."""
    assert envoy_table_form(6, 7) == "compact"
    assert envoy_table_form(7, 7) == "original"
    assert envoy_table_form(50_000, 65_537) == "compact"
    assert envoy_table_form(60_000, 65_537) == "original"
    assert envoy_table_form(2**32, 2**31 - 1) == "original"
