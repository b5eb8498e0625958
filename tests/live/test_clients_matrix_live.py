"""The clients metric run live: a small scenario of Python peers, the Python example adapter
and recipes of ours (one with a hostile name) end to end, its heat maps in a real browser;
and a reduced copy of scenarios/clients.toml with every shipped adapter (toolchains from
.ci/install-peers.sh; skipped locally where one is missing, a failure in CI)."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.browser import browser, console_errors
from tests.paths import ROOT
from tests.toolchains import require_npm_hashring, require_program, require_tool

HOSTILE = "<img src=x onerror=alert(1)>"
KETAMA_PY = ROOT / "peers" / "python" / "ketama_peer.py"
PEERS = ('peers = ["uhashring-ketama", "jump-consistent-hash", "hashring", '
         '{ command = ["python3", '
         f'"{KETAMA_PY}"], name = "ketama-python", routes_like = {{ construction = '
         '"libketama" } }]')
SMALL = f"""
[servers]
count = 6
name = "10.0.{{i}}.1:11211"
[generator]
construction = "libketama"
[keys]
count = 20_000
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
repeats = 1
scalar_keys = 500
{PEERS}
[[clients.recipes]]
name = "nginx"
construction = "nginx"
[[clients.recipes]]
name = "{HOSTILE}"
construction = "libmemcached"
[[clients.fleets]]
label = "six"
servers = 6
remove = "10.0.2.1:11211"
add = "10.0.6.1:11211"
[[clients.fleets]]
label = "weighted"
servers = 12
weights = [1, 2, 4]
clients = ["uhashring-ketama", "ketama-python", "nginx", "{HOSTILE}"]
"""


def _figures(path: Path) -> dict[str, Any]:
    result = json.loads(path.read_text())
    figures: dict[str, Any] = result["runs"][0]["figures"]["clients"]
    return figures


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_program("python3")
    folder = tmp_path_factory.mktemp("clients")
    scenario = folder / "small-clients.toml"
    scenario.write_text(SMALL)
    assert main(["run", str(scenario), "--out", str(folder)]) == 0
    return folder


def test_every_state_is_measured_with_claims_held(small_run: Path) -> None:
    """Three states of the first fleet, one of the second; each client routes like its
    recipe on every key (hashring, which has no exact recipe, aside); the matrix is
    symmetric with ones on its diagonal; every other pair is predicted within a point of
    20,000 keys (five standard errors)."""
    figures = _figures(small_run / "small-clients.json")
    first, second = figures["fleets"]
    assert [s["label"] for s in first["states"]] == [
        "as it is", "without 10.0.2.1:11211", "without 10.0.2.1:11211, with 10.0.6.1:11211"]
    assert [s["servers"] for s in first["states"]] == [6, 5, 6]
    assert len(second["states"]) == 1 and second["states"][0]["clients"][-1] == HOSTILE
    for fleet in figures["fleets"]:
        for state in fleet["states"]:
            assert all(value == 1.0 for name, value in zip(
                state["clients"], state["with_recipe"], strict=True) if name != "hashring")
            matrix = state["matrix"]
            size = len(state["clients"])
            assert all(matrix[i][i] == 1.0 for i in range(size))
            assert all(matrix[i][j] == matrix[j][i] for i in range(size) for j in range(size))
            for pair in state["pairs"]:
                if "hashring" in (pair["a"], pair["b"]):
                    # No recipe of ours routes exactly like it: nothing to predict from.
                    assert pair["predicted"] is None, pair
                    assert pair["causes"][0].startswith("no exact recipe of ours: hashring")
                    continue
                assert abs(pair["predicted"] - pair["measured"]) < 0.01, pair
                assert (pair["measured"] == 1.0) == (not pair["causes"]), pair


def test_movement_is_the_changed_servers_share(small_run: Path) -> None:
    """The libketama clients move the same keys on each change, whether rebuilt for the
    changed fleet (uhashring) or changed through its own REMOVE and ADD (the Python example
    adapter), and no more than a ring's share of them (a sixth, with margin)."""
    moves = {m["client"]: m for m in _figures(small_run / "small-clients.json")["fleets"][0][
        "moves"]}
    assert moves["ketama-python"]["through"] == "its own ADD and REMOVE"
    assert moves["uhashring-ketama"]["through"] == "built again for each state"
    for change in ("on_remove", "on_add"):
        assert moves["uhashring-ketama"][change] == moves["ketama-python"][change]
    assert 0 < moves["ketama-python"]["on_remove"] < 0.35
    assert 0 < moves["ketama-python"]["on_add"] < 0.35


def test_speeds_are_timed_beside_our_recipe(small_run: Path) -> None:
    """Python peers by their loop, the process peer by its TIME answer and the pipe."""
    speeds = {s["client"]: s for s in _figures(small_run / "small-clients.json")["speeds"]}
    # hashring has no recipe of ours to be timed against
    assert set(speeds) == {"uhashring-ketama", "jump-consistent-hash", "ketama-python"}
    assert speeds["ketama-python"]["protocol_ns"]["median"] > 0
    assert speeds["ketama-python"]["own_ns"]["median"] > 0
    assert speeds["uhashring-ketama"]["recipe"].endswith("bucketed")


def test_hostile_client_name_is_text_in_every_rendering(small_run: Path) -> None:
    """The recipe named like an HTML element is escaped in the page and the Markdown."""
    page = (small_run / "small-clients.html").read_text()
    assert HOSTILE not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "\\<img src=x onerror=alert(1)>" in (small_run / "small-clients.md").read_text()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    require_tool("chromium")
    with browser() as session:
        yield session


def test_heat_maps_draw_in_a_browser(small_run: Path, driver: Any) -> None:
    """Every state's heat map is drawn as SVG with the clients' names as text (the hostile
    one among them, as text), no console error and no element injected."""
    driver.get((small_run / "small-clients.html").as_uri())
    driver.set_script_timeout(60)
    drawn = driver.execute_async_script(
        "const done = arguments[0];"
        "window.chartsReady.then(() => done(window.chartsDrawn), e => done(-1));")
    page = (small_run / "small-clients.html").read_text()
    assert page.count('aria-label="Agreement, ') == 4
    charts = driver.find_elements("css selector", "div.chart")
    assert drawn == len(charts) >= 4
    assert len(driver.find_elements("css selector", "div.chart svg")) == drawn
    svg_text = " ".join(e.text for e in driver.find_elements("css selector", "div.chart svg"))
    assert "nginx" in svg_text and HOSTILE in svg_text
    assert driver.find_elements("css selector", "img") == []
    assert console_errors(driver) == []


def _shipped_toolchains() -> None:
    require_program("cc")
    for tool in ("go", "java", "node", "nutcracker", "memcached", "libmemcached"):
        require_tool(tool)
    require_npm_hashring()


def test_shipped_clients_scenario_runs_live(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """scenarios/clients.toml with fewer keys and rounds, every adapter started through
    peers/run.sh (built on first use): exit 0, every client routes like its recipe in
    every state, and each prediction is within a point and a half of 10,000 keys."""
    _shipped_toolchains()
    text = (ROOT / "scenarios" / "clients.toml").read_text()
    document = tomllib.loads(text)
    assert document["keys"]["count"] >= 100_000  # the committed run's size
    reduced = re.sub(r"(?m)^count = 100_000$", "count = 10_000", text)
    reduced = re.sub(r"(?m)^repeats = \d+$", "repeats = 1", reduced)
    reduced = re.sub(r"(?m)^scalar_keys = [\d_]+$", "scalar_keys = 500", reduced)
    assert reduced != text
    monkeypatch.chdir(ROOT)  # the scenario's commands are relative to the checkout
    scenario = tmp_path / "clients.toml"
    scenario.write_text(reduced)
    assert main(["run", str(scenario), "--out", str(tmp_path)]) == 0
    figures = _figures(tmp_path / "clients.json")
    assert len(figures["fleets"]) == 2
    for fleet in figures["fleets"]:
        assert len(fleet["states"]) == 3
        for state in fleet["states"]:
            assert all(value == 1.0 for value in state["with_recipe"])
            for pair in state["pairs"]:
                assert abs(pair["predicted"] - pair["measured"]) < 0.015, pair
