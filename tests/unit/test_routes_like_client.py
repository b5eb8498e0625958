"""`routes_like = { client = "npm hashring" }`: a foreign peer claims a known client by name
(`known_clients.OTHER_CLIENTS`); it stands for that client's recipe, checked as a recipe's
table is, and takes no other field. An unknown name is refused in one line listing the
known ones. A `[clients]` recipe names one the same way (`{ name = "npm", client = ... }`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.core.errors import ScenarioError
from harness.recipes.constructions.known_clients import OTHER_CLIENTS
from harness.recipes.peers.foreign.spec import ForeignPeerSpec
from harness.run.scenario import load_scenario
from tests.paths import ROOT

SCENARIO = """[servers]
count = 3
[keys]
count = 200
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
repeats = 1
scalar_keys = 10
peers = [{{ command = ["python3", "peers/python/ketama_peer.py"], name = "k", """ \
    """routes_like = {routes_like} }}]
"""


def peer(tmp_path: Path, routes_like: str) -> ForeignPeerSpec:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(routes_like=routes_like), encoding="utf-8")
    spec: ForeignPeerSpec = load_scenario(path).measure.foreign_peers[0]
    return spec


@pytest.mark.parametrize("client", list(OTHER_CLIENTS))
def test_a_known_client_stands_for_its_recipe(client: str, tmp_path: Path) -> None:
    _, algorithm, params = OTHER_CLIENTS[client]
    named = peer(tmp_path, f'{{ client = "{client}" }}')
    spelled = peer(tmp_path, "{ " + ", ".join(
        [f'algorithm = "{algorithm}"', *(f'{k} = {v!r}'.replace("'", '"')
                                         for k, v in params.items())]) + " }")
    assert named.recipe_params == spelled.recipe_params
    assert named.routes_like == {"algorithm": algorithm, "client": client, **params}


@pytest.mark.parametrize(("routes_like", "message"), [
    ('{ client = "npm hashringx" }',
     "measure.peers[0].routes_like.client must be one of 'npm hashring', 'pypi hashring', "
     "'python-memcached', 'clandestined': a known client, standing for its recipe (got "
     "'npm hashringx', a string)"),
    ("{ client = 3 }", "routes_like.client must be one of 'npm hashring'"),
    ('{ client = "npm hashring", points_per_weight = 160 }',
     "measure.peers[0].routes_like.points_per_weight must be absent beside client (the "
     "recipe is npm hashring's) (got 160"),
    ('{ client = "npm hashring", algorithm = "ring" }',
     "routes_like.algorithm must be absent beside client"),
])
def test_refused_in_one_line(routes_like: str, message: str, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ScenarioError, match="routes_like"):
        peer(tmp_path, routes_like)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "s.toml"), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert not out.exists()


def test_the_claim_is_checked_on_every_key(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The libketama adapter claimed as npm hashring on 3 equal servers (where the two build
    the same ring): the claim holds, and the table names the client."""
    monkeypatch.chdir(ROOT)
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(routes_like='{ client = "npm hashring" }'),
                    encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    report = next((tmp_path / "out").glob("*.md")).read_text(encoding="utf-8")
    row = next(line for line in report.splitlines() if line.startswith("| k "))
    assert "ring client=npm hashring construction=points" in row and "| 1.000000 " in row


CLIENTS = """[servers]
count = 3
[keys]
count = 200
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
repeats = 1
scalar_keys = 10
[clients]
recipes = [{{ name = "k", construction = "libketama" }}, {recipe}]
[[clients.fleets]]
servers = 4
"""


def test_a_clients_recipe_names_a_known_client(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """npm hashring as a [clients] recipe, beside libketama: built from the known client's
    parameters, and in the matrix (they agree on every key at 4 equal servers)."""
    from harness.metrics.clients.options import ClientsOptions

    path = tmp_path / "c.toml"  # peer() writes s.toml
    path.write_text(CLIENTS.format(recipe='{ name = "npm", client = "npm hashring" }'),
                    encoding="utf-8")
    options = load_scenario(path).measure.options["clients"]
    assert isinstance(options, ClientsOptions)
    recipe = next(r for r in options.recipes if r.name == "npm")
    _, algorithm, params = OTHER_CLIENTS["npm hashring"]
    spelled = peer(tmp_path, "{ " + ", ".join(
        [f'algorithm = "{algorithm}"', *(f'{k} = {v!r}'.replace("'", '"')
                                         for k, v in params.items())]) + " }")
    assert (recipe.algorithm, recipe.params) == (algorithm, spelled.recipe_params)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    report = next((tmp_path / "out").glob("*.md")).read_text(encoding="utf-8")
    assert "the least alike pair, k / npm, agrees on 100.00%" in report


@pytest.mark.parametrize(("recipe", "message"), [
    ('{ name = "npm", client = "npm" }', "clients.recipes[1].client must be one of "
                                         "'npm hashring', "),
    ('{ name = "npm", client = "npm hashring", construction = "libketama" }',
     "clients.recipes[1].construction must be absent beside client (the recipe is npm "
     "hashring's)"),
    ('{ client = "npm hashring" }', "clients.recipes[1].name"),
])
def test_a_clients_recipe_refused_in_one_line(recipe: str, message: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.toml"  # peer() writes s.toml
    path.write_text(CLIENTS.format(recipe=recipe), encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "out").exists()
