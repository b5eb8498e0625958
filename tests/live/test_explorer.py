"""The ring explorer in a real browser: its hashes, lookups and movement counts are the
harness's own, checked against Python on the same inputs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.cli import main
from harness.core.hashing import hash_many, hash_one
from harness.core.ring import reference_owners
from harness.core.servers import Server
from harness.recipes.constructions.generator import generate_ring
from tests.browser import browser, console_errors

pytestmark = pytest.mark.tools("chromium")

KEYS = ["", "user:42", "ключ-1", "键", "emoji-\U0001f600", "a" * 300,
        *(f"key-{i}" for i in range(994))]


def _names() -> list[str]:
    """Inputs across the hashes' edge cases: empty, non-ASCII, and block boundaries."""
    rng = random.Random(7)
    names = ["", "a", "n1:0", "é", "\U0001f600"] + ["x" * n for n in (55, 56, 63, 64, 127,
                                                                      128, 129, 256)]
    names += ["".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(40)))
              for _ in range(200)]
    return names


@pytest.fixture(scope="module")
def simulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    page = tmp_path_factory.mktemp("explore") / "ring.html"
    assert main(["explore", "--servers", "5", "--points", "40", "--out", str(page)]) == 0
    with browser() as driver:
        driver.get(page.as_uri())
        yield driver


@pytest.mark.parametrize("hash_name", ["fnv1a-fmix32", "crc32", "md5-32", "blake2b-32"])
def test_page_hashes_match_python(simulator: Any, hash_name: str) -> None:
    """Each hash the page computes equals harness.core.hashing on the same UTF-8 bytes."""
    names = _names()
    got = simulator.execute_script(
        "return arguments[1].map(n => RingHashes[arguments[0]](new TextEncoder().encode(n)));",
        hash_name, names)
    assert got == [hash_one(hash_name, name.encode()) for name in names]


def test_lookup_agrees_with_the_python_ring(simulator: Any) -> None:
    """window.ringExplorer.lookup gives the owner our ring gives, on 1,000 keys."""
    servers = [Server(f"n{i}") for i in range(1, 6)]
    ring = generate_ring(servers, 40, "fnv1a-fmix32")
    owners = reference_owners(ring, hash_many("fnv1a-fmix32", [k.encode() for k in KEYS]))
    expected = [servers[o].name for o in owners]
    got = simulator.execute_script(
        "return arguments[0].map(k => window.ringExplorer.lookup(k));", KEYS)
    assert len(KEYS) == 1000 and got == expected
    assert console_errors(simulator) == []


def _moved(before: list[Server], after: list[Server], points: int) -> tuple[int, int]:
    """Of the page's 5,000 sample keys, how many change owner on the ring and mod N."""
    keys = [f"key-{i}".encode() for i in range(5000)]
    hashes = hash_many("fnv1a-fmix32", keys)
    names = []
    for servers in (before, after):
        ring = generate_ring(servers, points, "fnv1a-fmix32")
        names.append(np.array([s.name for s in servers])[reference_owners(ring, hashes)])
    mod = [np.array([s.name for s in servers])[hashes % len(servers)]
           for servers in (before, after)]
    return int(np.sum(names[0] != names[1])), int(np.sum(mod[0] != mod[1]))


def test_adding_and_removing_report_python_s_counts(simulator: Any) -> None:
    """The moved counts the page reports are exactly those Python computes for the change."""
    five = [Server(f"n{i}") for i in range(1, 6)]
    six = [*five, Server("n6")]
    report = simulator.execute_script("return window.ringExplorer.addServer();")
    assert simulator.execute_script("return window.ringExplorer.servers();")[-1] == "n6"
    ring, mod_n = _moved(five, six, 40)
    assert report == {"keys": 5000, "ring": ring, "modN": mod_n}
    assert "changed owner on the ring" in simulator.find_element("id", "last").text
    report = simulator.execute_script("return window.ringExplorer.removeServer('n2');")
    without = [s for s in six if s.name != "n2"]
    ring, mod_n = _moved(six, without, 40)
    assert report == {"keys": 5000, "ring": ring, "modN": mod_n}
    simulator.execute_script("window.ringExplorer.setPoints(7);")
    assert simulator.execute_script("return window.ringExplorer.entries();") == (
        generate_ring(without, 7, "fnv1a-fmix32").entries)


def test_scenario_page_shows_that_ring(tmp_path: Path) -> None:
    """A scenario's ring (blake2b-32, weights): the page's lookups match Python's."""
    scenario = tmp_path / "s.toml"
    scenario.write_text('[servers]\nlist = [{name = "a", weight = 1}, {name = "b", weight = 3},'
                        ' {name = "c", weight = 2}]\n[generator]\npoints_per_weight = 30\n'
                        '[keys]\nname = "user-{i}"\n')
    page = tmp_path / "s.html"
    assert main(["explore", str(scenario), "--out", str(page)]) == 0
    servers = [Server("a", 1), Server("b", 3), Server("c", 2)]
    ring = generate_ring(servers, 30)
    keys = KEYS[:300]
    expected = [servers[o].name for o in
                reference_owners(ring, hash_many("blake2b-32", [k.encode() for k in keys]))]
    with browser() as driver:
        driver.get(page.as_uri())
        got = driver.execute_script(
            "return arguments[0].map(k => window.ringExplorer.lookup(k));", keys)
        assert got == expected
        assert driver.execute_script("return window.ringExplorer.entries();") == ring.entries
        assert console_errors(driver) == []


@pytest.mark.parametrize(("scenario", "message"), [
    ('[servers]\ncount = 3\n[generator]\nconstruction = "nginx"', "construction = 'points'"),
    ('[servers]\ncount = 3\n[generator]\nhash = "blake2b-64"', "generator.hash to be one of"),
    ('[servers]\ncount = 3\n[generator]\npoint_name = "{server}-{j:04}"', "plain fields"),
])
def test_explore_refuses_rings_the_page_cannot_rebuild(
    scenario: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """One line and exit 2, and no page, for what the browser cannot reproduce."""
    path = tmp_path / "s.toml"
    path.write_text(scenario)
    assert main(["explore", str(path), "--out", str(tmp_path / "x.html")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def _hsl(colour: str) -> tuple[float, float, float]:
    hue, saturation, lightness = colour.removeprefix("hsl(").removesuffix(")").split(", ")
    return float(hue), float(saturation.rstrip("%")), float(lightness.rstrip("%"))


@pytest.mark.parametrize(("servers", "distinct"), [(40, 40), (64, 64), (100, 64)])
def test_palette_is_distinct_up_to_64_servers_then_grouped(
        tmp_path: Path, servers: int, distinct: int) -> None:
    """Every server up to 64 has its own colour, and servers near each other in the list
    differ by at least 40 degrees of hue or in lightness; beyond 64, consecutive servers
    share one of 64 colours and the list names each server's group."""
    page = tmp_path / "ring.html"
    assert main(["explore", "--servers", str(servers), "--points", "2",
                 "--out", str(page)]) == 0
    with browser() as driver:
        driver.get(page.as_uri())
        colours = driver.execute_script("return window.ringExplorer.colours();")
        listed = driver.execute_script(
            "return [...document.querySelectorAll('#servers li')].map(li => li.textContent);")
        assert console_errors(driver) == []
    assert len(colours) == servers and len(set(colours)) == distinct
    groups = list(dict.fromkeys(colours))
    for i, colour in enumerate(groups):
        for near in groups[i + 1:i + 4]:
            (h1, s1, l1), (h2, s2, l2) = _hsl(colour), _hsl(near)
            hue_apart = min(abs(h1 - h2), 360 - abs(h1 - h2))
            assert hue_apart >= 40 or (s1, l1) != (s2, l2), (colour, near)
    if servers > 64:
        assert colours[0] == colours[1] and "colour group 1)" in listed[0]
        assert "colour group 64)" in listed[-1]
    else:
        assert all("colour group" not in line for line in listed)
