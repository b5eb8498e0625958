"""Switching clients as a migration: `[migration] from/to = { peer = ... }`.

Live with the plain Python example peer (peers/python/ketama_peer.py, libketama's continuum
behind the process protocol, no build needed) and the registry's hashring peer: a switch
between two clients that route alike moves nothing, and one that differs moves what our
recipes say it must."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.cli import main
from harness.core.errors import HarnessError, ScenarioError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.metrics.migration.metric import MigrationMetric, MigrationOptions
from harness.metrics.migration.sides import parse_sides
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers import owners as peer_owners
from harness.recipes.peers.foreign import open_foreign_peer, parse_foreign_peer
from harness.recipes.peers.hashring_peer import expected_agreement
from harness.report import markdown
from harness.report.sections import result_report
from harness.run.estimate import estimated_seconds
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario
from tests.browser import browser, console_errors
from tests.paths import ROOT, TESTS
from tests.toolchains import require_program, require_tool
from tests.unit.test_foreign_faults import alive

KETAMA_PY = ROOT / "peers" / "python" / "ketama_peer.py"
FAKE = TESTS / "fake_peer.py"
PYTHON_PEER = (f'{{ command = ["{sys.executable}", "{KETAMA_PY}"], name = "ketama-python", '
               'routes_like = { construction = "libketama" } }')

SWITCH = """
[servers]
count = {servers}
name = "10.0.{{i}}.1:11211"
[generator]
construction = "{construction}"
[keys]
count = 500
[measure]
layouts = ["cffi-packed"]
metrics = ["balance"]
repeats = 1
peers = [{peers}]
[migration]
{sides}
stages = [0.25, 1.0]
cache_objects = 500
universe = 40_000
requests_per_stage = 60_000
warmup_requests = 200_000
"""


def _migration(write_scenario: Callable[[str], Path], sides: str, *,
               construction: str = "libketama", servers: int = 20,
               peers: str = PYTHON_PEER) -> Any:
    text = SWITCH.format(servers=servers, construction=construction, peers=peers,
                         sides=sides)
    (run,) = run_scenario(load_scenario(write_scenario(text)), show_progress=False).runs
    return run.figure("migration")


def test_a_switch_to_a_client_that_routes_alike_moves_nothing(
        write_scenario: Callable[[str], Path]) -> None:
    """Our libketama ring to the Python peer that routes like it: no object and no request
    moves, and the staged replay is the steady state at every stage."""
    m = _migration(write_scenario, 'to = { peer = "ketama-python" }')
    assert m.to_label == "peer ketama-python" and m.form_after == "peer ketama-python"
    assert m.moved_fraction == 0.0 and m.moved_requests_fraction == 0.0
    assert [s.extra_misses for s in m.stages] == [0, 0]
    assert m.staged_peak_rate == m.all_at_once_peak_rate
    assert m.formula_moved_fraction is None and m.cv_arcs_after is None


def test_and_back_from_the_client_to_our_recipe_moves_nothing(
        write_scenario: Callable[[str], Path]) -> None:
    """From the Python peer to the scenario's own recipe (`to` left out): nothing moves;
    the peer is the side it starts from."""
    m = _migration(write_scenario, 'from = { peer = "ketama-python" }')
    assert m.from_label == "peer ketama-python" and m.form_before == "peer ketama-python"
    assert m.moved_fraction == 0.0 and [s.extra_misses for s in m.stages] == [0, 0]


def test_a_switch_that_differs_moves_what_our_recipes_move(
        write_scenario: Callable[[str], Path]) -> None:
    """libmemcached's ring (port 11211 left out of point names) to the Python libketama
    client (port kept): the same objects move, to the same servers, as in our migration
    from libmemcached's recipe to libketama's, so every figure of the replay is equal; with
    unrelated point names that is about 1 - 1/N of them."""
    peer = _migration(write_scenario, 'to = { peer = "ketama-python" }',
                      construction="libmemcached")
    ours = _migration(write_scenario, 'to = { construction = "libketama" }',
                      construction="libmemcached")
    assert peer.moved_fraction == ours.moved_fraction
    assert peer.moved_requests_fraction == ours.moved_requests_fraction
    assert [s.misses for s in peer.stages] == [s.misses for s in ours.stages]
    assert peer.staged_peak_rate == ours.staged_peak_rate
    assert peer.moved_fraction == pytest.approx(1 - 1 / 20, abs=0.02)


def test_a_switch_between_two_clients_moves_their_disagreement(
        write_scenario: Callable[[str], Path]) -> None:
    """From the Python libketama client to PyPI hashring (three of libketama's four points
    per digest): the objects they disagree on move, about 1 - (3/4 + 1/(4N)) of them, and
    exactly as many as from our libketama recipe to hashring."""
    peers = f'{PYTHON_PEER}, "hashring"'
    m = _migration(write_scenario, 'from = { peer = "ketama-python" }\n'
                   'to = { peer = "hashring" }', peers=peers)
    ours = _migration(write_scenario, 'to = { peer = "hashring" }', peers=peers)
    assert m.from_label == "peer ketama-python" and m.to_label == "peer hashring"
    assert m.moved_fraction == ours.moved_fraction
    # 40,000 objects: a binomial standard error of about 0.2 percentage points.
    assert m.moved_fraction == pytest.approx(1 - expected_agreement(20), abs=0.015)
    assert m.bytes_after is not None and m.bytes_after > 0


def test_from_a_client_to_another_recipe(write_scenario: Callable[[str], Path]) -> None:
    """From the Python libketama client to the scenario's recipe changed (`to` as for a
    change of recipe): what our libketama to libmemcached migration moves."""
    m = _migration(write_scenario, 'from = { peer = "ketama-python" }\n'
                   'to = { construction = "libmemcached" }')
    ours = _migration(write_scenario, 'to = { construction = "libmemcached" }')
    assert m.moved_fraction == ours.moved_fraction > 0.9
    assert m.to_label == ours.to_label


def test_a_peer_that_does_not_say_its_bytes_is_shown_as_unknown(
        write_scenario: Callable[[str], Path]) -> None:
    """A peer answering no MEMORY: its bytes are unknown, said so in the report, and the
    during figure is a lower bound. The fake peer routes every key to the first server, so
    exactly the objects our ring gives the others move."""
    fake = (f'{{ command = ["{sys.executable}", "{FAKE}", "well-behaved"], name = "fake" }}')
    text = SWITCH.format(servers=5, construction="libketama", peers=fake,
                         sides='to = { peer = "fake" }')
    result = run_scenario(load_scenario(write_scenario(text)), show_progress=False)
    m = result.runs[0].figure("migration")
    servers = [Server(f"10.0.{i}.1:11211") for i in range(5)]
    ring = get_algorithm("ring")
    recipe = ring.from_params(servers, ring.parse_params(Fields(
        "t", "g", {"construction": "libketama"})))
    names = [f"object-{i}".encode() for i in range(40_000)]
    assert m.moved_fraction == float(np.mean(recipe.route(names) != 0))
    assert m.bytes_after is None and m.bytes_before is not None
    page = markdown.report(result_report(result))
    assert "unknown (the peer does not say)" in page
    assert f"at least {m.bytes_before / 1024:,.1f} KiB" in page
    assert m.bytes_during == m.bytes_before
    assert "Migration (libketama to peer fake)" in page


def _python_peer(servers: list[Server], **extra: Any) -> Any:
    table = {"command": [sys.executable, str(KETAMA_PY)], "name": "ketama-python",
             "routes_like": {"construction": "libketama"}, **extra}
    return open_foreign_peer(parse_foreign_peer(Fields("t", "p", table)), servers)


def _libketama(servers: list[Server], keys: list[bytes]) -> np.ndarray:
    ring = get_algorithm("ring")
    return ring.from_params(servers, ring.parse_params(Fields(
        "t", "g", {"construction": "libketama"}))).route(keys)


def test_owners_are_numbered_as_our_servers_after_the_peer_reorders_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A removed and re-added server comes back last in the peer's own numbering; its
    owners are mapped to the scenario's list by name, in batches of any size."""
    servers = [Server(f"10.0.{i}.1:11211") for i in range(12)]
    keys = [f"object-{i}".encode() for i in range(5_000)]
    peer = _python_peer(servers)
    try:
        peer.remove(servers[0].name)
        peer.add(servers[0].name, 1.0)
        assert peer.server_names[-1] == servers[0].name
        monkeypatch.setattr(peer_owners, "BATCH_KEYS", 777)
        owners = peer_owners.foreign_peer_owners(peer, servers, keys)
    finally:
        peer.close()
    assert np.array_equal(owners, _libketama(servers, keys))


def test_a_peer_given_key_hashes_routes_the_universe_by_lookup() -> None:
    """A peer given hashes (input = 'hashes', as Guava's jump needs) gets its claimed
    recipe's hashes of each batch and answers LOOKUP: the same owners as by name."""
    servers = [Server(f"10.0.{i}.1:11211") for i in range(9)]
    keys = [f"object-{i}".encode() for i in range(3_000)]
    peer = _python_peer(servers, input="hashes")
    try:
        owners = peer_owners.foreign_peer_owners(peer, servers, keys)
    finally:
        peer.close()
    assert np.array_equal(owners, _libketama(servers, keys))


class OutOfRange:
    """A registry peer whose library answers an index past the servers (a broken build)."""

    name = "broken"

    def lookup_key(self, key: str) -> int:
        return 3 if key == "object-2" else 0


def test_a_registry_peer_answering_out_of_range_fails_in_one_line() -> None:
    """The owner is checked before it indexes anything: one line naming the peer."""
    keys = [f"object-{i}".encode() for i in range(4)]
    with pytest.raises(HarnessError, match=r"^peer 'broken': routed key 2 to owner 3, out "
                                           r"of range for 3 servers$"):
        peer_owners.registry_peer_owners("broken", OutOfRange(),  # type: ignore[arg-type]
                                         [Server("a"), Server("b"), Server("c")], keys)


def test_a_peer_killed_during_the_migration_fails_cleanly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The peer dies on the migration's first batch: exit 1, one line naming it, nothing
    written, and no process of it left."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("FAKE_PEER_PIDS", str(pids))
    fake = (f'{{ command = ["{sys.executable}", "{FAKE}", "kill-self-on-second-route"], '
            'name = "fake" }')
    path = tmp_path / "s.toml"
    path.write_text(SWITCH.format(servers=5, construction="libketama", peers=fake,
                                  sides='to = { peer = "fake" }'))
    out = tmp_path / "out"
    code = main(["run", str(path), "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 1, err
    assert len(err.splitlines()) == 1
    assert "peer 'fake': was killed by SIGKILL during ROUTE" in err
    assert not out.exists() or not any(out.iterdir())
    started = [int(line) for line in pids.read_text().split()]
    for _ in range(50):
        if not any(alive(pid) for pid in started):
            break
        time.sleep(0.1)
    assert not [pid for pid in started if alive(pid)]


LISTED = """
[servers]
count = 4
name = "10.0.{{i}}.1:11211"
[generator]
construction = "libketama"
[measure]
metrics = ["balance"]
peers = ["uhashring-ketama", {{ command = ["{python}", "{peer}"], name = "py" }}]
{extra}
[migration]
{sides}
"""


@pytest.mark.parametrize(("sides", "extra", "message"), [
    ('to = { peer = "nope" }', "",
     "migration.to.peer must be the name of a peer listed in measure.peers "
     "('uhashring-ketama', 'py') (got 'nope', which names no peer of the run)"),
    ('to = { peer = "hashring" }', "",
     "migration.to.peer must be the name of a peer listed in measure.peers "
     "('uhashring-ketama', 'py') (got 'hashring', a registry peer not listed there: add it "
     "to measure.peers)"),
    ('from = { peer = "nope" }\nto = { peer = "py" }', "",
     "migration.from.peer must be the name of a peer listed in measure.peers"),
    ('from = { peer = "py" }\nto = { peer = "py" }', "",
     "migration.to must be another side than migration.from (a switch from a peer to "
     "itself moves nothing) (got {'peer': 'py'}, a table)"),
    ('from = "py"', "", "migration.from must be { peer = NAME }, naming a peer of "
     "measure.peers the service moves from (left out: the scenario's recipe) (got 'py', a "
     "string)"),
    ('from = { name = "py" }', "", "migration.from must be { peer = NAME }"),
    ('to = { peer = "py", points_per_weight = 16 }', "",
     "unknown key 'migration.to.points_per_weight'; valid keys here: peer"),
    ('from = { peer = "py", hash = "crc32" }', "",
     "unknown key 'migration.from.hash'; valid keys here: peer"),
    ('to = { peer = 3 }', "", "migration.to.peer must be a non-empty string (got 3, an "
     "integer)"),
    ('to = { peer = "" }', "", "migration.to.peer must be a non-empty string (got '', a "
     "string)"),
    ("stages = [1.0]", "", "migration.to is required but missing (the new recipe, or "
     "{ peer = NAME }; only a migration from a peer may leave it out"),
    ('to = { peer = "py" }', "[process]\nlayouts = [\"numpy-packed\"]",
     "migration.to.peer must be left out with [process]: a peer is built for the "
     "scenario's servers, not for each ring of the process (got 'py')"),
    ('from = { peer = "py" }\nto = { points_per_weight = 16 }', "",
     "migration.to.points_per_weight must be left out: construction 'libketama' fixes its "
     "own points"),
])
def test_a_bad_side_is_refused_before_any_work(sides: str, extra: str, message: str,
                                               write_scenario: Callable[[str], Path]) -> None:
    """Each side is checked when the scenario loads, in one line naming the field, what it
    must be and what it got."""
    text = LISTED.format(python=sys.executable, peer=KETAMA_PY, extra=extra, sides=sides)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write_scenario(text))
    assert message in str(caught.value)
    assert len(str(caught.value).splitlines()) == 1


def test_sides_parse_into_a_peer_and_a_recipe() -> None:
    """`from` a peer with `to` left out goes to the scenario's recipe ({}); `to` a peer is
    {"peer": NAME}; recipe parameters are kept for the scenario to check."""
    def sides(table: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        return parse_sides(Fields("s.toml", "migration", table))
    assert sides({"from": {"peer": "a"}}) == ("a", {})
    assert sides({"to": {"peer": "b"}}) == (None, {"peer": "b"})
    assert sides({"from": {"peer": "a"}, "to": {"peer": "b"}}) == ("a", {"peer": "b"})
    assert sides({"to": {"points_per_weight": 16}}) == (None, {"points_per_weight": 16})


def test_a_peer_side_has_its_share_of_the_estimates() -> None:
    """Each peer side adds its answers over the universe and one batch to the memory
    estimate, and its routes of the universe to the time estimate; a change of recipe
    adds neither (its time is the replay, which every migration has)."""
    metric, servers = MigrationMetric(), [Server("a"), Server("b")]
    recipe = MigrationOptions(to={"points_per_weight": 16}, universe=1_000_000)
    one = MigrationOptions(to={"peer": "p"}, universe=1_000_000)
    two = MigrationOptions(to={"peer": "p"}, universe=1_000_000, from_peer="q")
    bytes_of = [metric.estimated_bytes(o, servers) for o in (recipe, one, two)]
    assert bytes_of[2] - bytes_of[1] == bytes_of[1] - bytes_of[0] > 16 * 1_000_000
    replay, replayed = metric.estimated_seconds(recipe, servers)
    assert replay > 0 and "replayed three ways" in replayed
    seconds_of = [metric.estimated_seconds(o, servers)[0] for o in (recipe, one, two)]
    assert seconds_of[2] - seconds_of[1] == pytest.approx(seconds_of[1] - seconds_of[0])
    assert seconds_of[1] - seconds_of[0] > 1
    assert "universe = 1,000,000" in metric.estimated_seconds(two, servers)[1]


def test_the_shipped_switch_scenario_loads_and_fits_its_budget() -> None:
    """scenarios/switch-clients.toml names its peers on both sides and fits the default
    time budget."""
    scenario = load_scenario(ROOT / "scenarios" / "switch-clients.toml")
    options = scenario.measure.options["migration"]
    assert options.to_peer is not None
    assert estimated_seconds(scenario)[0] < 600


HOSTILE_PEER = "<script>alert(1)</script> | *x* `y`"


def test_a_hostile_peer_name_is_text_in_every_rendering(tmp_path: Path) -> None:
    """A peer's name from the scenario reaches the migration's title, rows and forms as
    text: escaped in the HTML page (no live tag, none run in a browser where one is
    installed) and whole in the Markdown (no stray column)."""
    fake = (f'{{ command = ["{sys.executable}", "{FAKE}", "well-behaved"], '
            f'name = "{HOSTILE_PEER}" }}')
    path = tmp_path / "hostile.toml"
    path.write_text(SWITCH.format(servers=5, construction="libketama", peers=fake,
                                  sides=f'to = {{ peer = "{HOSTILE_PEER}" }}'))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 0
    page = (out / "hostile.html").read_text()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    document = (out / "hostile.md").read_text()
    row = next(line for line in document.splitlines() if line.startswith("| to "))
    assert row.replace("\\|", "").count("|") == 3
    require_tool("chromium")  # the renderings are checked above; the page in a browser here
    with browser() as driver:
        console_errors(driver)
        driver.get((out / "hostile.html").as_uri())
        assert driver.execute_script("return document.querySelectorAll('script').length") \
            == page.count("<script")
        shown = driver.execute_script("return document.body.innerText")
        assert f"Migration (libketama to peer {HOSTILE_PEER})" in shown
        assert console_errors(driver) == []


GUAVA = """
[servers]
count = 7
[algorithm]
name = "jump"
[keys]
count = 500
[measure]
metrics = ["balance"]
repeats = 1
peers = [{{ command = ["java", "-cp", "{classpath}", "GuavaJumpPeer"], name = "guava", \
routes_like = {{ algorithm = "jump" }}, input = "hashes" }}]
[migration]
{sides}
stages = [0.5, 1.0]
cache_objects = 100
universe = 100_000
requests_per_stage = 20_000
warmup_requests = 20_000
"""


@pytest.fixture(scope="module")
def guava_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The shipped Guava adapter, built offline by peers/build.sh, and its jar."""
    require_tool("java")
    jar = "/usr/share/java/guava.jar"
    out = tmp_path_factory.mktemp("peers")
    subprocess.run(["bash", str(ROOT / "peers" / "build.sh"), str(out)], check=True)
    return f"{out / 'java'}:{jar}"


def test_a_lookup_only_client_switches_by_its_recipes_hashes(
        guava_classpath: str, write_scenario: Callable[[str], Path]) -> None:
    """Guava 31.1's consistentHash takes key hashes, not keys: the migration gives it our
    jump's hashes of each batch of 100,000 objects (LOOKUP). Our jump to Guava moves
    nothing; Guava to our Maglev moves what our jump to Maglev does."""
    require_program("java")
    classpath = guava_classpath

    def migrated(sides: str) -> Any:
        text = GUAVA.format(classpath=classpath, sides=sides)
        (run,) = run_scenario(load_scenario(write_scenario(text)), show_progress=False).runs
        return run.figure("migration")

    assert migrated('to = { peer = "guava" }').moved_fraction == 0.0
    from_guava = migrated('from = { peer = "guava" }\nto = { algorithm = "maglev" }')
    ours = migrated('to = { algorithm = "maglev" }')
    assert from_guava.moved_fraction == ours.moved_fraction > 0.3
    assert from_guava.to_label == ours.to_label
