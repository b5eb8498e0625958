"""Grammar-based fuzzing: scenario files built from the documented grammar with hostile
values, and hostile result files for show and compare. Every outcome is exit 0 or exit 2
with one line; no traceback; nothing written on refusal."""

from __future__ import annotations

import copy
import json
import math
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.run.reference import build_entries
from tests.fuzz_examples import fuzz_examples
from tests.paths import FIXTURES, ROOT

FORMAT1 = FIXTURES / "format1"

HOSTILE_NUMBERS = [0, -1, -(2**63), 2**64, 10**12, math.inf, -math.inf, math.nan, 1e300, 0.5,
                   True, "3", [], [1, 2], {"a": 1}]


GOOD: dict[str, dict[str, list[Any]]] = {
    "servers": {"count": [1, 3, 7], "name": ["s-{i}", "{i}-srv", "10.0.0.1:{i}"],
                "weight": [1, 2.5]},
    "generator": {"construction": ["points", "nginx", "libketama", "haproxy",
                                   "envoy_ring_hash", "pingora", "cassandra"],
                  "hash": ["blake2b-32", "crc32", "fnv1a-fmix32", "siphash24-32"],
                  "point_name": ["{server}:{j}", "{j}@{server}"],
                  "points_per_weight": [1, 5, [2, 4]], "requires": [[]],
                  # client traits (a few of each kind; any other value is drawn as hostile)
                  "key_hash": ["same", "md5-32le", "xxh64"], "points_per_digest": [1, 4],
                  "weight_rounding": ["half-up", "share-double", "share-single"],
                  "tie": ["after", "at-or-before"], "collision_winner": ["last"],
                  "chain": ["previous"], "key_encoding": ["low-8-bits"],
                  "ring_size": [0, 1000], "allocation": ["random", "allocator"],
                  "replication_factor": [1, 3]},
    "keys": {"count": [1, 300], "name": ["key-{i}", "é-{i}|x"],
             "distribution": ["uniform", "zipf"], "seed": [1, 7]},
    "measure": {"layouts": [["numpy-packed"], ["cffi-packed", "bucketed"]],
                "metrics": [["balance"], ["collisions", "load"], ["movement"]],
                "repeats": [1], "scalar_keys": [10],
                # a known client claimed by name (its recipe checked against the peer on
                # every key, not held to it), and a name no known client has
                "peers": [["uhashring"], *([{
                    "command": ["python3", str(ROOT / "peers" / "python" / "ketama_peer.py")],
                    "name": "k", "exact": False, "routes_like": {"client": client}}]
                    for client in ("npm hashring", "nope"))]},
}
#: tables that turn a metric on when present: drawn now and then, always small
OPTIONAL: dict[str, dict[str, list[Any]]] = {
    "hostile_keys": {"budgets": [[2_000], [1_000, 3_000]], "attack_keys": [10, 1_000],
                     "normal_requests": [100, 5_000], "hashes": [["crc32", "siphash24-32"]],
                     "knowledge": ["hash", "hash-and-key"], "target": ["s-0", "server-1"],
                     "methods": [["brute-force"], ["forgery"], ["brute-force", "forgery"]]},
    # its defaults walk every algorithm over 100 servers (seconds of work): all keys small
    "removals": {"servers": [2, 5], "keys": [50, 300],
                 "algorithms": [["jump", "rendezvous"], ["ring"]], "step": [0.5],
                 "repeats": [1], "scalar_keys": [10], "batch_keys": [100], "memory": [False]},
    # two recipes of ours as clients, on fleets of a few servers (every state routes every key)
    "clients": {"recipes": [[{"name": "a", "construction": "libketama"},
                             {"name": "b", "construction": "nginx"}],
                            # a known client by name, and a name no known client has
                            *([{"name": "a", "construction": "libketama"},
                               {"name": "b", "client": client}]
                              for client in ("npm hashring", "nope"))],
                "fleets": [[{"servers": 3}],
                           [{"servers": 4, "weights": [1, 2], "remove": "10.0.1.1:11211",
                             "add": "new:1", "label": "x|\n<y>"}]]},
    # a change of recipe or a switch of clients (a peer of measure.peers, or one it lacks)
    "migration": {"to": [{"points_per_weight": 2}, {"peer": "uhashring"}, {"peer": "nope"}],
                  "from": [{"peer": "uhashring"}, {"peer": "pymemcache"}],
                  "stages": [[0.5, 1.0]], "universe": [50, 500], "cache_objects": [5],
                  "requests_per_stage": [100], "warmup_requests": [0, 200]},
    # copies on the ring, or NetworkTopologyStrategy over data centres: a server given no
    # zone is a data centre of its own, named as the server
    # an algorithm other than the ring (its [generator] and layouts are then left out):
    # Riak's claimed partitions among them, with a hostile bucket name
    "algorithm": {"name": ["riak", "jump", "redis-slots"], "ring_creation_size": [8, 64],
                  "target_n_val": [1, 4], "bucket": ["b", "é|\n<x>"], "seed": [0, 3]},
    "replication": {"objects": [50, 300], "copies": [1, 2], "zone_aware": [False, True],
                    "datacenters": [{"s-0": 1}, {"s-0": 1, "s-1": 1}, {"nowhere": 2}],
                    "fail": ["s-2", "s-0"]},
    # a fleet of a few small data centres, rolled out (each table alone is refused)
    "fleet": {"data_centres": [2, 3], "sizes": [{"values": [2, 3], "shares": [1, 1]}],
              "weights": [{"values": [1, 2], "shares": [1, 1]}],
              "capabilities": [{"pci": 0.5}], "eligibility": ["combinations", [[], ["pci"]]],
              "universe": [200], "cache_objects": [5], "requests_per_window": [50],
              "warmup_requests": [0, 100]},
    "rollout": {"to": [{"points_per_weight": 2}, {"peer": "uhashring"}],
                "stages": [[0.5, 1.0]], "waves": [[{"name": "all", "share": 1.0}],
                                                  [{"name": "c", "count": 1},
                                                   {"name": "x|\n<y>", "share": 1.0}]],
                "rollback": [{"wave": "all", "stage": 1}, {"wave": "c", "stage": 2}],
                "windows_per_stage": [1, 2]},
    # the thresholds of `ring-harness gate`: read by every run, changing nothing it measures
    "gate": {"ns_per_key": [1.05, 1.5], "structure_bytes": [1.0, 2], "bytes_per_entry": [1.05],
             "peak_build_bytes": [1.25], "cv": [1.1], "moved": [1.1, 100]},
}
#: the keys of each optional table that are always given (their first value by default)
ALWAYS: dict[str, tuple[str, ...]] = {"hostile_keys": ("budgets", "normal_requests"),
                                      "removals": tuple(OPTIONAL["removals"]),
                                      "clients": ("recipes", "fleets"),
                                      "migration": ("universe", "requests_per_stage",
                                                    "warmup_requests"),
                                      "replication": ("objects",), "algorithm": ("name",),
                                      "fleet": ("data_centres", "sizes", "universe",
                                                "cache_objects", "requests_per_window",
                                                "warmup_requests"),
                                      "rollout": ("to", "waves"),
                                      "gate": ()}
HOSTILE: list[Any] = [*HOSTILE_NUMBERS, "", "{x}", "{i:>300000}", "../x", "a|b\n", "nope",
                      ["nope"], [0], 65536, 10**9,
                      # a width that took the estimate 29 s and 2 GB to refuse; a pattern
                      # that backtracks exponentially, and the choice that applies it
                      "{i:>999999999}", "(a+)+$", "regex"]
#: fields a mutation may set: every key the validating code declares for the grammar's
#: tables (read from the same declarations as docs/reference/scenario.md, so a key added
#: there is fuzzed without anyone listing it here), and some that do not exist
FIELDS = sorted({(e.table, e.key) for e in build_entries(ROOT)
                 if e.table in ("", *GOOD, *OPTIONAL) and e.key not in GOOD}
                | {(section, key) for section, keys in (GOOD | OPTIONAL).items()
                   for key in keys}
                | {("generator", "layout"), ("servers", "typo"), ("", "typo")})


def _drawn(draw: st.DrawFn, options: list[Any]) -> Any:
    return copy.deepcopy(draw(st.sampled_from(options)))


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A valid scenario of the grammar, then none, one or two fields set to hostile values
    (and now and then an operation)."""
    # Every drawn value is a copy: the options are module constants, and a value set in
    # place by one example (a table a mutation writes into) would otherwise be what the
    # next example draws; over 10,000 examples one table came to hold itself.
    document: dict[str, Any] = {
        section: {key: _drawn(draw, options) for key, options in keys.items()
                  if draw(st.booleans())}
        for section, keys in GOOD.items()}
    document["measure"].setdefault("layouts", ["numpy-packed"])
    document["servers"].setdefault("count", 3)
    for section, keys in OPTIONAL.items():
        if draw(st.booleans()):
            table = {key: _drawn(draw, options) for key, options in keys.items()
                     if draw(st.booleans())}
            for key in ALWAYS[section]:
                table.setdefault(key, copy.deepcopy(keys[key][0]))
            document[section] = table
    if "algorithm" in document:  # an algorithm without a ring takes no ring recipe
        document.pop("generator", None)
        document["measure"].pop("layouts", None)
    for section, key in draw(st.lists(st.sampled_from(FIELDS), max_size=2)):
        value = copy.deepcopy(draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6))))
        target = document.setdefault(section, {}) if section else document
        if isinstance(target, dict):  # not a table a first mutation made a hostile value
            target[key] = value
    if isinstance(document.get("removals"), dict):  # a mutation may have made the table
        for key, options in OPTIONAL["removals"].items():
            document["removals"].setdefault(key, copy.deepcopy(options[0]))
    if isinstance(document.get("migration"), dict):  # its defaults replay 7M requests
        for key in ALWAYS["migration"]:
            document["migration"].setdefault(key, copy.deepcopy(OPTIONAL["migration"][key][0]))
    if draw(st.booleans()):
        document["operations"] = [{
            "kind": draw(st.sampled_from(["add", "remove", "move"])),
            "server": draw(st.sampled_from(["s-0", "new", "1-srv"])),
            "weight": draw(st.sampled_from([1, 2, 1.5, -1]))}]
    return document


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(
            value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def _array_of_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def toml_document(document: dict[str, Any]) -> str:
    """The document as TOML text: scalars and arrays first, then tables, then arrays of
    tables (a hostile value at a table's place is written as the value it is)."""
    lines = [f"{json.dumps(k)} = {toml_value(v)}" for k, v in document.items()
             if not isinstance(v, dict) and not _array_of_tables(v)]
    for key, value in document.items():
        if isinstance(value, dict):
            lines.append(f"[{json.dumps(key)}]")
            lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()]
    for key, value in document.items():
        if _array_of_tables(value):
            for entry in value:
                lines.append(f"[[{json.dumps(key)}]]")
                lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


@settings(max_examples=fuzz_examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(document=scenarios())
def test_hostile_scenarios_exit_0_or_2(
    document: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Whatever the grammar allows, with hostile values: exit 0 with results, or exit 2 with
    one line and nothing written. A traceback would fail this test."""
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "scenario.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    out = folder / "out"
    started = time.monotonic()
    code = main(["run", str(path), "--out", str(out), "--no-progress"])
    captured = capsys.readouterr()
    event(f"exit {code}")
    # The grammar's valid values are small: a run that takes long has escaped the estimate.
    assert time.monotonic() - started < 60
    assert code in (0, 2), captured.err
    if code == 2:
        assert len(captured.err.strip().splitlines()) == 1
        assert captured.err.startswith("error: ")
        assert not out.exists()
    else:
        assert sorted(p.suffix for p in out.iterdir()) == [".html", ".json", ".md"]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=20)


def _mutate(document: Any, path: list[int], value: Any) -> Any:
    """Replace one node of a real result (chosen by `path`) with a hostile value."""
    if not path or not isinstance(document, dict | list) or not document:
        return value
    keys = list(document) if isinstance(document, dict) else list(range(len(document)))
    key = keys[path[0] % len(keys)]
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[key] = _mutate(document[key], path[1:], value)
    return copy


REAL = json.loads((FORMAT1 / "nginx.json").read_text())


@settings(max_examples=fuzz_examples(150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=st.one_of(
    JSON_VALUES,
    st.builds(_mutate, st.just(REAL), st.lists(st.integers(0, 50), max_size=6), JSON_VALUES)))
def test_hostile_results_exit_0_or_2(
    document: Any, tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """show and compare of any JSON document: a rendering, or one line and exit 2."""
    folder = tmp_path_factory.mktemp("fuzz-result")
    path = folder / "r.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    for argv in (["show", str(path)], ["compare", str(path), str(FORMAT1 / "nginx.json")]):
        code = main(argv)
        captured = capsys.readouterr()
        event(f"{argv[0]} exit {code}")
        assert code in (0, 2), captured.err
        if code == 2:
            assert len(captured.err.strip().splitlines()) == 1
