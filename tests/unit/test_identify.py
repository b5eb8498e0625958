"""`ring-harness identify`: a real client's own routing named, a client hidden in the trait
space found and its snippet pasted into a scenario, "no recipe matches" with the best
candidates, the space declared and refused before work, and one-line errors on bad input."""

from __future__ import annotations

import csv
import json
import random
import tomllib
from pathlib import Path

import pytest

from harness.apps.identify import search
from harness.apps.identify.observations import Observations
from harness.cli import main
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from tests.paths import FIXTURES


def write_inputs(folder: Path, servers: list[Server], keys: list[str],
                 owners: list[int]) -> tuple[Path, Path]:
    routing, listing = folder / "observed.csv", folder / "servers.toml"
    with routing.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["key", "server"])
        writer.writerows([key, servers[owner].name] for key, owner in zip(keys, owners,
                                                                         strict=True))
    listing.write_text("".join(f'[[servers]]\nname = {json.dumps(s.name)}\nweight = {s.weight}\n'
                               for s in servers))
    return routing, listing


def test_names_npm_hashring_from_its_own_routing(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The fixture npm hashring 3.2.0 wrote at 7 equal servers (39 digests a server)."""
    record = json.loads((FIXTURES / "real_clients" / "npm-hashring.json").read_text())
    fleet = next(f for f in record["fleets"] if f["label"] == "7 equal")
    servers = [Server(s["name"], s["weight"]) for s in fleet["servers"]]
    routing, listing = write_inputs(tmp_path, servers, record["keys"], fleet["owners"])
    assert main(["identify", str(routing), str(listing)]) == 0
    out, err = capsys.readouterr()
    assert "search space:" in err and "estimated" in err
    assert "reproduce all 2,000 observations (agreement 1.000000)" in out
    assert "1.000000  npm hashring (known client)" in out
    assert "libketama (shipped)" not in out.split("1.000000  npm hashring")[0]


def test_finds_a_client_hidden_in_the_trait_space(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A ring no shipped recipe states (one-at-a-time, names "{j}:{server}" from 1, 20 per
    weight rounded half up, the last point <= the hash): found, and its snippet, pasted
    into a [clients] recipe list, routes every key as observed."""
    servers = [Server("alpha", 1), Server("beta", 2.5), Server("gamma", 1)]
    params = {"construction": "points", "hash": "oaat-32", "point_name": "{j}:{server}",
              "first_point": 1, "points_per_weight": 20, "weight_rounding": "half-up",
              "tie": "at-or-before"}
    keys = [f"session-{i}" for i in range(400)]
    owners = get_algorithm("ring").build(servers, **params).route(
        [k.encode() for k in keys]).tolist()
    routing, listing = write_inputs(tmp_path, servers, keys, owners)
    out_file = tmp_path / "report.txt"
    assert main(["identify", str(routing), str(listing), "--out", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert out_file.read_text() == out
    assert "reproduce all 400 observations" in out
    first = out.split("\n1.000000  ")[1].split("\n\n")[0]
    recipe = tomllib.loads(first.split("\n", 1)[1])["clients"]["recipes"][0]
    recipe.pop("name")
    algorithm = recipe.pop("algorithm")
    again = get_algorithm(algorithm).build(servers, **recipe).route(
        [k.encode() for k in keys]).tolist()
    assert again == owners
    assert recipe["hash"] == "oaat-32"


@pytest.mark.slow
def test_no_recipe_matches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Owners drawn at random: no recipe reproduces them; the best are shown, with the keys
    the best misses."""
    rng = random.Random(5)
    servers = [Server("a:1"), Server("b:2"), Server("c:3")]
    keys = [f"k{i}" for i in range(60)]
    routing, listing = write_inputs(tmp_path, servers, keys,
                                    [rng.randrange(3) for _ in keys])
    assert main(["identify", str(routing), str(listing)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no recipe matches")
    assert "the best candidate misses" in out
    assert "[[clients.recipes]]" in out


def test_refused_past_the_time_budget(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Owners no cheap candidate reproduces: with a budget that holds the shipped recipes
    and hash mod N but not rendezvous too (163 candidates on 3 servers), rendezvous is
    refused before it starts (tests/unit/test_identify_budget.py holds the budget on 100
    servers)."""
    rng = random.Random(7)
    servers = [Server(f"s{i}") for i in range(3)]
    keys = [f"k{i}" for i in range(40)]
    owners = [rng.randrange(3) for _ in keys]
    routing, listing = write_inputs(tmp_path, servers, keys, owners)
    stages = dict(search.declare(Observations(tuple(k.encode() for k in keys), tuple(owners),
                                              tuple(servers), "o", "s")).stages)
    budget = f"{(stages['shipped'] + stages['modulo'] + stages['rendezvous'] / 2) / 60:.4f}"
    assert main(["identify", str(routing), str(listing), "--max-minutes", budget]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"error: {routing}: no candidate of shipped recipes and known "
                              "clients or hash mod N reproduces every key (the best, ")
    assert "; rendezvous would take an estimated " in err[-1]
    assert f"over --max-minutes {budget};" in err[-1]


BAD = {
    "unknown server": ("key,server\nk1,s9\n", '[[servers]]\nname = "s0"\n',
                       "line 2 server must be one of the 1 servers"),
    "three fields": ("k1,s0,x\n", '[[servers]]\nname = "s0"\n', "line 1 must be key,server"),
    "two owners": ("k1,s0\nk1,s1\n", '[[servers]]\nname = "s0"\n[[servers]]\nname = "s1"\n',
                   "line 2 must route key 'k1' as before"),
    "no rows": ("key,server\n", '[[servers]]\nname = "s0"\n', "rows must be at least one"),
    "bad weight": ("k,s0\n", '[[servers]]\nname = "s0"\nweight = -1\n',
                   "servers[0].weight must be a number from 1e-06"),
    "duplicate server": ("k,s0\n", '[[servers]]\nname = "s0"\n[[servers]]\nname = "s0"\n',
                         "servers must have distinct names"),
    "unknown field": ("k,s0\n", '[[servers]]\nname = "s0"\nport = 1\n',
                      "servers[0] must have only name and weight"),
    "not toml": ("k,s0\n", "[[servers]\n", "not valid TOML"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_one_line(case: str, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    routing_text, servers_text, message = BAD[case]
    routing, listing = tmp_path / "r.csv", tmp_path / "s.toml"
    routing.write_text(routing_text)
    listing.write_text(servers_text)
    assert main(["identify", str(routing), str(listing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_csv_server_list_and_non_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = tmp_path / "s.csv"
    listing.write_text("name,weight\ns0,2\ns1,x\n")
    routing = tmp_path / "r.csv"
    routing.write_text("k,s0\n")
    assert main(["identify", str(routing), str(listing)]) == 2
    assert "line 3 weight must be a number" in capsys.readouterr().err
    routing.write_bytes(b"k\xff,s0\n")
    listing.write_text("s0\n")
    assert main(["identify", str(routing), str(listing)]) == 2
    assert "must be UTF-8 text (got a byte 0xff" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "label"), [("pypi-hashring", "5 weighted"),
                                                 ("npm-hashring", "7 equal")])
def test_real_clients_found_from_scratch(fixture: str, label: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """With the known clients taken out of the search, the trait space alone finds a recipe
    that reproduces the client's own routing (PyPI hashring: 3 points a digest, `>`, the
    last listed on equal points; npm hashring at 39 digests a server)."""
    from harness.apps.identify import search
    from harness.apps.identify.observations import Observations

    monkeypatch.setattr(search, "OTHER_CLIENTS", {})
    record = json.loads((FIXTURES / "real_clients" / f"{fixture}.json").read_text())
    fleet = next(f for f in record["fleets"] if f["label"] == label)
    servers = tuple(Server(s["name"], s["weight"]) for s in fleet["servers"])
    observations = Observations(tuple(k.encode() for k in record["keys"]),
                                tuple(fleet["owners"]), servers, "observed", "servers")
    found = search.run_search(observations)
    best = found.ranked[0]
    assert best.agreement == 1.0 and best.candidate.origin == "traits"
    rebuilt = get_algorithm(best.candidate.algorithm).build(list(servers),
                                                            **best.candidate.params)
    assert rebuilt.route(list(observations.keys)).tolist() == fleet["owners"]


def test_a_key_hash_other_than_the_points(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Points by CRC-32, keys by one-at-a-time: the key hash is told by the structure of the
    observations and tried with rings hashed otherwise."""
    servers = [Server("n0"), Server("n1"), Server("n2")]
    params = {"construction": "points", "hash": "crc32", "point_name": "{server}-{j}",
              "points_per_weight": 20, "key_hash": "oaat-32"}
    keys = [f"u{i}" for i in range(600)]
    owners = get_algorithm("ring").build(servers, **params).route(
        [k.encode() for k in keys]).tolist()
    routing, listing = write_inputs(tmp_path, servers, keys, owners)
    assert main(["identify", str(routing), str(listing)]) == 0
    out = capsys.readouterr().out
    assert "reproduce all 600 observations" in out
    assert 'key_hash = "oaat-32"' in out.split("\n\n")[1]


@pytest.mark.slow
def test_declared_bytes_bound_the_search() -> None:
    """The declared peak (`search.declare`) bounds the search's traced peak, on a client of
    the trait space found in its ring search and on a shipped one."""
    import tracemalloc

    from harness.apps.identify import search
    from harness.apps.identify.observations import Observations

    servers = (Server("alpha", 1), Server("beta", 2.5), Server("gamma", 1))
    for params in ({"construction": "points", "hash": "sha1-32le", "points_per_digest": 3,
                    "point_name": "{server}-{j}", "points_per_weight": 16},
                   {"construction": "libketama"}):
        keys = tuple(f"session-{i}".encode() for i in range(300))
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
        assert peak <= declared
