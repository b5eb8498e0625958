"""`identify`'s time budget, held stage by stage (`harness/apps/identify/budget.py`): the
100-server fleet of scenarios/clients.toml, whose whole search is declared at over two
hours, is answered at the default budget when a shipped recipe or known client matches;
routing nothing matches is refused before the rings, in one line naming the stage, its
estimate, the budget and what the stages before it found; a budget too small for the first
stage refuses before any work; and a stage left out with a match in hand is named."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from harness.apps.identify import StageBudget, search
from harness.apps.identify.observations import Observations
from harness.cli import main
from harness.core.cost import Cost
from harness.core.servers import Server
from harness.metrics.clients.options import ClientsOptions
from harness.recipes.algorithms import get_algorithm
from harness.recipes.constructions.known_clients import OTHER_CLIENTS
from harness.run.scenario import load_scenario
from tests.paths import ROOT

#: keys with non-ASCII text, so the space holds both key encodings (its largest form)
KEYS = [f"k{i}-é{i * 7919}" for i in range(2_000)]


def hundred_servers() -> list[Server]:
    """The 100-server fleet of scenarios/clients.toml (weights 1:2:4), as it is."""
    scenario = load_scenario(ROOT / "scenarios" / "clients.toml")
    options = scenario.measure.options["clients"]
    assert isinstance(options, ClientsOptions)
    fleet = next(f for f in options.fleets if f.servers == 100)
    _, servers = fleet.states()[0]
    assert len(servers) == 100 and len({s.weight for s in servers}) == 3
    return list(servers)


def npm_hashring_owners(servers: list[Server]) -> list[int]:
    _, algorithm, params = OTHER_CLIENTS["npm hashring"]
    owners: list[int] = get_algorithm(algorithm).build(servers, **params).route(
        [k.encode() for k in KEYS]).tolist()
    return owners


def write_inputs(folder: Path, servers: list[Server], owners: list[int]) -> tuple[Path, Path]:
    routing, listing = folder / "observed.csv", folder / "servers.toml"
    with routing.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["key", "server"], *([k, servers[o].name]
                                                      for k, o in zip(KEYS, owners,
                                                                      strict=True))])
    listing.write_text("".join(f"[[servers]]\nname = {json.dumps(s.name)}\n"
                               f"weight = {s.weight}\n" for s in servers))
    return routing, listing


def declared(servers: list[Server], owners: list[int]) -> search.Space:
    return search.declare(Observations(tuple(k.encode() for k in KEYS), tuple(owners),
                                       tuple(servers), "observed", "servers"))


def test_hundred_servers_answered_at_the_default_budget(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole search is declared far past the default 10 minutes (the rings), the first
    stage well inside it; the known client answers there, and --out holds the report."""
    servers = hundred_servers()
    owners = npm_hashring_owners(servers)
    space = declared(servers, owners)
    stages = dict(space.stages)
    assert space.cost.seconds > 60 * 60 and stages["rings"] > 60 * 60
    assert stages["shipped"] < 60
    routing, listing = write_inputs(tmp_path, servers, owners)
    report = tmp_path / "report.txt"
    assert main(["identify", str(routing), str(listing), "--out", str(report)]) == 0
    out, err = capsys.readouterr()
    assert "reproduce all 2,000 observations (agreement 1.000000)" in out
    assert "1.000000  npm hashring (known client)" in out
    assert report.read_text(encoding="utf-8") == out
    assert "stages, estimated: shipped recipes and known clients" in err
    assert "searching: shipped recipes and known clients" in err
    assert "searching: rings" not in err
    assert "not searched" not in out


def test_nothing_matches_refused_before_the_rings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Owners drawn at random on the 100 servers: the cheap stages run and find nothing; the
    rings are refused before they start, in one line; --out is not written. The clients
    guide shows this line as it is."""
    servers = hundred_servers()
    rng = random.Random(3)
    owners = [rng.randrange(len(servers)) for _ in KEYS]
    rings = dict(declared(servers, owners).stages)["rings"]
    write_inputs(tmp_path, servers, owners)
    monkeypatch.chdir(tmp_path)
    routing, report = Path("observed.csv"), tmp_path / "report.txt"
    assert main(["identify", str(routing), "servers.toml", "--out", str(report)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not report.exists()
    lines = err.strip().splitlines()
    assert "  searching: rendezvous" in lines and not any("rings" in line for line in lines
                                                          if "searching" in line)
    assert lines[-1].startswith(
        f"error: {routing}: no candidate of shipped recipes and known clients, hash mod N or "
        "rendezvous reproduces every key (the best, ")
    assert (f"; rings of client traits would take an estimated {rings / 60:,.1f} minutes "
            "(2,628 ring naming schemes x ") in lines[-1]
    assert lines[-1].endswith(", over --max-minutes 10; expected a larger --max-minutes, "
                              "or fewer servers or keys")
    guide = (ROOT / "docs" / "guide" / "clients.md").read_text(encoding="utf-8")
    shown = guide.split("**The time budget, stage by stage.**")[1].split("```text\n")[1]
    assert " ".join(shown.split("```")[0].split()) == lines[-1]


@pytest.mark.parametrize("minutes", ["1e-9", "0.000001"])
def test_a_budget_too_small_for_the_first_stage(
        minutes: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    servers = [Server(f"s{i}") for i in range(3)]
    owners = [i % 3 for i in range(len(KEYS))]
    routing, listing = write_inputs(tmp_path, servers, owners)
    report = tmp_path / "report.txt"
    assert main(["identify", str(routing), str(listing), "--max-minutes", minutes,
                 "--out", str(report)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not report.exists()
    assert "searching:" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: {routing}: nothing searched yet; shipped recipes and "
                           "known clients would take an estimated ")
    assert last.endswith(f", over --max-minutes {float(minutes):g}; expected a larger "
                         "--max-minutes, or fewer servers or keys")


@pytest.mark.parametrize("minutes", ["0", "-1", "nan", "inf", "x", ""])
def test_budgets_that_are_not_a_positive_number(
        minutes: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    servers = [Server(f"s{i}") for i in range(3)]
    routing, listing = write_inputs(tmp_path, servers, [0] * len(KEYS))
    assert main(["identify", str(routing), str(listing), "--max-minutes", minutes]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "searching" not in err
    assert "a positive number of minutes" in err


def test_a_stage_left_out_with_a_match_in_hand(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A budget between the first stage's estimate and the first two's: the known client
    answers, hash mod N is left out (and named), rendezvous (no candidates on a weighted
    fleet: nothing estimated) still runs."""
    servers = hundred_servers()
    owners = npm_hashring_owners(servers)
    stages = dict(declared(servers, owners).stages)
    assert stages["rendezvous"] == 0
    minutes = (stages["shipped"] + stages["modulo"] / 2) / 60
    routing, listing = write_inputs(tmp_path, servers, owners)
    assert main(["identify", str(routing), str(listing), "--max-minutes", repr(minutes)]) == 0
    out, err = capsys.readouterr()
    assert "1.000000  npm hashring (known client)" in out
    assert out.rstrip().endswith(f"not searched, over the --max-minutes {minutes:g} with a "
                                 "recipe already found: hash mod N")
    assert "searching: hash mod N" not in err and "searching: rendezvous" in err


def test_the_estimates_add_up_stage_by_stage() -> None:
    """Each stage is admitted against the estimates of those admitted before it and its
    own: a cheap stage after a refused one is not reached (the refusal ends the search)."""
    space = search.Space(1, 1, 1, 1, 1, Cost(seconds=100.0), (), 0, (
        ("shipped", 30.0), ("modulo", 20.0), ("rendezvous", 0.0), ("rings", 50.0),
        ("counts", 0.0), ("key hashes", 0.0)))
    assert sum(seconds for _, seconds in space.stages) == space.cost.seconds
    budget = StageBudget(space, 60 / 60, "observed.csv")  # 60 s
    assert budget("shipped", []) and budget("modulo", []) and budget("rendezvous", [])
    assert budget.spent == 50.0
    with pytest.raises(Exception, match=r"^observed\.csv: no candidate of shipped recipes "
                       r"and known clients, hash mod N or rendezvous reproduces every key; "
                       r"rings of client traits would take an estimated 50\.00 s \(\) after "
                       r"50\.00 s estimated for the stages before it, over --max-minutes 1;"):
        budget("rings", [])
    assert budget.spent == 50.0 and budget.admitted == ["shipped", "modulo", "rendezvous"]


def test_declared_stages_sum_to_the_declared_seconds() -> None:
    servers = [Server("a", 1), Server("b", 2.5), Server("c", 1)]
    keys = tuple(f"session-{i}".encode() for i in range(200))
    owners = tuple(get_algorithm("ring").build(servers, construction="libketama").route(
        list(keys)).tolist())
    space = search.declare(Observations(keys, owners, tuple(servers), "o", "s"))
    assert [stage for stage, _ in space.stages] == list(search.STAGES)
    assert all(seconds >= 0 for _, seconds in space.stages)
    assert sum(seconds for _, seconds in space.stages) == pytest.approx(space.cost.seconds)
