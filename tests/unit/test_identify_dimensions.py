"""`identify` searches ring sizes, points per weight off its ladder, key truncation and
rendezvous seeds: a client of each kind found from 2,000 observed routes (the seeded
rendezvous client is clandestined itself and the ring off the ladder uhashring, their
routing written by the clients themselves,
tests/fixtures/real_clients/generate.py), "no recipe matches" for a seed no list holds
until `--seed` names it, and one-line errors for a bad `--seed`."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

from harness.apps.identify import search
from harness.apps.identify.observations import Observations
from harness.cli import main
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from tests.paths import FIXTURES
from tests.unit.test_identify import write_inputs

SERVERS = tuple(Server(f"cache-{c}:11211") for c in "abcde")
#: the keys of the real-client fixtures: "user:<i>:<8 hex digits>", 15 to 18 bytes
KEYS = tuple(f"user:{i}:{(i * 2654435761) % 2**32:08x}".encode() for i in range(2_000))


def observed(params: dict[str, Any], keys: tuple[bytes, ...] = KEYS) -> Observations:
    owners = get_algorithm("ring").build(list(SERVERS), **params).route(list(keys)).tolist()
    return Observations(keys, tuple(owners), SERVERS, "observed", "servers")


def found_exactly(observations: Observations) -> dict[str, Any]:
    """The best recipe of a search, which must route every key as observed when built as
    a scenario builds it."""
    result = search.run_search(observations)
    best = result.ranked[0]
    assert best.agreement == 1.0, best.candidate.label
    rebuilt = get_algorithm(best.candidate.algorithm).build(list(observations.servers),
                                                            **best.candidate.params)
    assert rebuilt.route(list(observations.keys)).tolist() == list(observations.owners)
    return best.candidate.params


#: uhashring 2.5 with vnodes=37, its own routing (generate.py): its ring is the whole MD5
#: of "<node>-<i>" for i < 37 x weight, a key at the first point past its MD5
UHASHRING = {"construction": "points", "hash": "md5-32", "point_name": "{server}-{j}",
             "points_per_weight": 37}


def uhashring(label: str) -> Observations:
    record = json.loads((FIXTURES / "real_clients" / "uhashring-vnodes-37.json").read_text())
    fleet = next(f for f in record["fleets"] if f["label"] == label)
    return Observations(tuple(k.encode() for k in record["keys"]), tuple(fleet["owners"]),
                        tuple(Server(s["name"], s["weight"]) for s in fleet["servers"]),
                        "observed", "servers")


@pytest.mark.parametrize("label", ["5 equal", "5 weighted"])
def test_uhashring_is_a_ring_of_traits(label: str) -> None:
    """MD5's first 32 bits order uhashring's 128-bit points as it does (no two of these
    share them), so the traits ring routes every key as uhashring did."""
    observations = uhashring(label)
    ring = get_algorithm("ring").build(list(observations.servers), **UHASHRING)
    assert ring.route(list(observations.keys)).tolist() == list(observations.owners)


@pytest.mark.slow
def test_points_per_weight_off_the_ladder() -> None:
    """uhashring with 37 points a node (the ladder has 32 and 40): the rings at 40 route
    most keys, and the sweep of every count finds 37."""
    assert 37 not in search.PER_WEIGHT
    params = found_exactly(uhashring("5 equal"))
    assert params["points_per_weight"] == 37 and params["hash"] == "md5-32"


@pytest.mark.slow
def test_a_ring_size_below_the_hash_width() -> None:
    """FNV-1a points and keys taken modulo 2**16: the form shows the ring's structure, and
    its rings are built again from the reduced points."""
    params = found_exactly(observed({"construction": "points", "hash": "fnv1a-32",
                                     "point_name": "{server}#{j}", "points_per_weight": 100,
                                     "ring_size": 2**16}))
    assert params["ring_size"] == 2**16


def test_keys_cut_to_a_common_length() -> None:
    """xxHash32 of each key's first 16 bytes (the keys are 15 to 18 bytes long, and no two
    share 16 bytes: only the hash can tell)."""
    observations = observed({"construction": "points", "hash": "xxh32",
                             "point_name": "{server}-{j}", "points_per_weight": 100,
                             "key_max_bytes": 16})
    assert 16 in search.truncations(observations)
    assert found_exactly(observations)["key_max_bytes"] == 16


@pytest.mark.slow
def test_keys_cut_to_a_length_the_data_shows() -> None:
    """Keys "tenant-NNN/object-I" cut to their first 10 bytes, a length no list holds: the
    smallest prefix that routes every shared prefix to one server is 10, and that ring is
    found (the keys of a tenant share a server, so each hash's cut form shows structure)."""
    keys = [f"tenant-{t:03d}/object-{i}".encode() for t in range(50) for i in range(40)]
    random.Random(7).shuffle(keys)
    observations = observed({"construction": "points", "hash": "murmur3-32",
                             "point_name": "{server}-{j}", "key_max_bytes": 10}, tuple(keys))
    assert search.truncations(observations)[:4] == (10, 11, 12, 13)
    params = found_exactly(observations)
    assert params["key_max_bytes"] == 10 and params["hash"] == "murmur3-32"


def test_truncations_read_from_the_observations() -> None:
    """A length is left out when keys sharing that prefix went to different servers, or
    when no key is longer; the data's own length comes first only when many keys share a
    prefix."""
    servers = (Server("a"), Server("b"))
    keys = (b"ab-1", b"ab-2", b"ac-1", b"xyz-long-key-0001", b"xyz-long-key-0002")

    def cuts(owners: tuple[int, ...]) -> tuple[int, ...]:
        return search.truncations(Observations(keys, owners, servers, "o", "s"))

    # "ab-1" and "ab-2" part at 4 bytes; two of five keys share "xyz-": the data's 4 to 7
    assert cuts((0, 1, 0, 0, 0)) == (4, 5, 6, 7, 8, 16)
    # the "xyz" keys part only at their 17th byte, the longest key's length: nothing to cut
    assert cuts((0, 0, 1, 0, 1)) == ()
    many = tuple(f"grp{g}-{i}".encode() for g in range(5) for i in range(20))
    owners = tuple(g % 2 for g in range(5) for _ in range(20))
    assert search.truncations(Observations(many, owners, servers, "o", "s")) == (4, 5, 6)
    # two keys of a hundred sharing a prefix is no evidence: only the common lengths
    rng = random.Random(3)
    few = (*(f"{i:04d}-unique-{i}".encode() for i in range(98)), *keys[3:])
    spread = (*(rng.randrange(2) for _ in range(98)), 0, 0)
    assert search.truncations(Observations(few, spread, servers, "o", "s")) == (8, 16)


def test_chosen_forms_prefer_the_full_width_and_one_ring_size() -> None:
    form = search.KeyForm
    scored = [(1.0, form()), (0.30, form(ring_size=360)), (0.31, form(key_max_bytes=10)),
              (0.30, form(key_max_bytes=10, ring_size=2**16)), (0.31, form(ring_size=1024)),
              (0.60, form(key_max_bytes=12))]
    assert search.chosen_forms(scored, 1.0) == [form(key_max_bytes=10), form(ring_size=360)]
    assert search.chosen_forms([(0.97, form(ring_size=360))], 1.0) == []


def test_points_suggested_by_the_structure() -> None:
    """On 2,000 keys, a ring of 800 points shows structure 1 - exp(-0.4)."""
    assert search.points_suggested(1 - float(np.exp(-0.4)), 2_000) == pytest.approx(800)
    assert search.points_suggested(1.0, 2_000) is None


def clandestined(label: str) -> tuple[list[Server], list[str], list[int]]:
    record = json.loads((FIXTURES / "real_clients" / f"clandestined-seed-{label}.json")
                        .read_text())
    fleet = record["fleets"][0]
    return ([Server(s["name"], s["weight"]) for s in fleet["servers"]], record["keys"],
            fleet["owners"])


def test_seeded_rendezvous_of_a_real_library(tmp_path: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """clandestined 1.1.0 with seed 0x9747b28c (as its signed int), its own routing of
    2,000 keys on 5 servers: found among the seeds of the search's list."""
    servers, keys, owners = clandestined("0x9747b28c")
    routing, listing = write_inputs(tmp_path, servers, keys, owners)
    assert main(["identify", str(routing), str(listing)]) == 0
    out = capsys.readouterr().out
    assert "reproduce all 2,000 observations" in out
    assert f"seed = {0x9747B28C}" in out.split("\n\n")[1]


@pytest.mark.slow
def test_a_seed_no_list_holds_needs_seed(tmp_path: Any,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """clandestined with seed 1337: "no recipe matches" until --seed 1337 is given (then
    found in the rendezvous stage, before any ring)."""
    servers, keys, owners = clandestined("1337")
    routing, listing = write_inputs(tmp_path, servers, keys, owners)
    assert main(["identify", str(routing), str(listing)]) == 0
    assert capsys.readouterr().out.startswith("no recipe matches")
    assert main(["identify", str(routing), str(listing), "--seed", "0x539"]) == 0
    out = capsys.readouterr().out
    assert "reproduce all 2,000 observations" in out and "seed = 1337" in out


@pytest.mark.parametrize("seed", ["-1", "18446744073709551616", "x", "1.5", "", "0x",
                                  "1e3", "\udcff"])
def test_bad_seed_one_line(seed: str, tmp_path: Any,
                           capsys: pytest.CaptureFixture[str]) -> None:
    routing, listing = write_inputs(tmp_path, [Server("s0")], ["k"], [0])
    assert main(["identify", str(routing), str(listing), "--seed", seed]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--seed" in lines[0], err
    assert "an integer from 0 to 2**64-1" in lines[0]


@pytest.mark.slow
def test_declared_bytes_bound_the_count_sweep() -> None:
    """The declared peak bounds the traced peak of a search that ends in the count sweep,
    on a weighted fleet (every rounding swept) and with keys a truncation applies to."""
    import tracemalloc

    servers = (Server("alpha", 1), Server("beta", 2.5), Server("gamma", 1))
    params = {"construction": "points", "hash": "crc32", "point_name": "{server}-{j}",
              "points_per_weight": 13, "weight_rounding": "floor"}
    keys = tuple(f"session-{i:05d}-x".encode() for i in range(300))
    owners = tuple(get_algorithm("ring").build(list(servers), **params).route(
        list(keys)).tolist())
    observations = Observations(keys, owners, servers, "observed", "servers")
    declared = search.declare(observations).cost.peak
    tracemalloc.start()
    try:
        found = search.run_search(observations)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found.ranked[0].agreement == 1.0
    assert found.ranked[0].candidate.params["points_per_weight"] == 13
    assert peak <= declared
