"""Malformed scenarios: one clear message naming file, field, expected and got; exit 2; no file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import main
from harness.recipes.layouts import LAYOUTS
from harness.run.scenario import load_scenario
from tests.conftest import SMALL_SCENARIO

BAD_SCENARIOS = {
    "toml syntax": ("[servers\ncount = 3", ["not valid TOML"]),
    "gate threshold below 1": ("[servers]\ncount = 3\n[gate]\ncv = 0.9",
                               ["gate.cv must be a number from 1 to 100", "got 0.9"]),
    "gate unknown figure": ("[servers]\ncount = 3\n[gate]\nlatency = 2",
                            ["unknown key 'gate.latency'"]),
    "unknown top-level key": ('nmae = "x"\n[servers]\ncount = 3',
                              ["unknown key 'nmae'", "valid keys here"]),
    "unknown nested key": ("[servers]\ncount = 3\n[generator]\npoint_per_weight = 3",
                           ["unknown key 'generator.point_per_weight'"]),
    "wrong type": ('[servers]\ncount = "ten"',
                   ["servers.count must be an integer from 1 to 65,535", "'ten', a string"]),
    "negative points": ("[servers]\ncount = 3\n[generator]\npoints_per_weight = -3",
                        ["generator.points_per_weight must be an integer from 1 to 100,000,000",
                         "or a non-empty list of them", "got -3, an integer"]),
    "unknown hash": ('[servers]\ncount = 3\n[generator]\nhash = "sha7"',
                     ["generator.hash must be one of", "'blake2b-32'", "'crc32'", "'sha7'"]),
    "unknown layout": ('[servers]\ncount = 3\n[measure]\nlayouts = ["numpy-zip"]',
                       ["measure.layouts must be a list of names from", "cffi-packed",
                        "'numpy-zip'"]),
    "too many servers": ("[servers]\ncount = 65536",
                         ["servers.count must be an integer from 1 to 65,535", "65536"]),
    "a {part} field without parts": ('[servers]\ncount = 3\n[keys]\nname = "{part}:{i}"',
                                     ["keys.name must be a name template using {i}"]),
    "parts without a {part} field": ('[servers]\ncount = 3\n[keys]\nparts = 10',
                                     ["keys.name must be a name template using {i} and {part}",
                                      "'key-{i}'"]),
    "part_exponent without zipf parts": (
        '[servers]\ncount = 3\n[keys]\nname = "{part}-{i}"\nparts = 4\npart_exponent = 2',
        ["keys.part_exponent must be left out: it applies to part_distribution = 'zipf'"]),
    "part_distribution without parts": (
        '[servers]\ncount = 3\n[keys]\npart_distribution = "zipf"',
        ["keys.part_distribution must be left out: it applies when parts is given"]),
    "unknown hash_part": ('[servers]\ncount = 3\n[keys]\nhash_part = "prefix"',
                          ["keys.hash_part must be one of 'whole', 'tag', 'regex'",
                           "'prefix'"]),
    "hash_part regex without a pattern": (
        '[servers]\ncount = 3\n[keys]\nhash_part = "regex"',
        ["keys.hash_part_regex must be given exactly when hash_part = 'regex'"]),
    "a pattern without hash_part regex": (
        '[servers]\ncount = 3\n[keys]\nhash_part_regex = "(a)"',
        ["keys.hash_part_regex must be left out: it applies to hash_part = 'regex' only"]),
    "a pattern that does not compile": (
        '[servers]\ncount = 3\n[keys]\nhash_part = "regex"\nhash_part_regex = "(a"',
        ["keys.hash_part_regex must be a Python regular expression with exactly one group",
         "(it does not compile)", "'(a'"]),
    "a pattern of two groups": (
        '[servers]\ncount = 3\n[keys]\nhash_part = "regex"\nhash_part_regex = "(a)(b)"',
        ["keys.hash_part_regex must be a Python regular expression with exactly one group",
         "(it has 2)"]),
    "a pattern that backtracks exponentially": (
        '[servers]\ncount = 3\n[keys]\nhash_part = "regex"\nhash_part_regex = "(a+)+$"',
        ["keys.hash_part_regex must be a Python regular expression with exactly one group",
         "with no quantifier over a part that itself varies", "'(a+)+$'"]),
    "a key name padded past the widest field, before formatting one": (
        '[servers]\ncount = 3\n[keys]\nname = "{part:>999999999}-{i}"\nparts = 5',
        ["keys.name must be a name template using {i} and {part} with every field's width "
         "at most 100,000"]),
    "a server name padded past the widest field": (
        '[servers]\ncount = 3\nname = "{i:0100001}"',
        ["servers.name must be a name template using {i} with every field's width at most"]),
    "a point name padded past the widest field": (
        '[servers]\ncount = 3\n[generator]\npoint_name = "{server:>100001}-{j}"',
        ["generator.point_name must be a name template using {server} and {j} with every "
         "field's width at most"]),
    "range scans wider than the keys": (
        '[servers]\ncount = 3\n[keys]\ncount = 50\n[range_scans]\nwidths = [10, 100]',
        ["range_scans.widths must be at most the scenario's distinct keys (50)", "(got 100)"]),
    "hostile keys beside client traits": (
        '[servers]\ncount = 3\n[generator]\nkey_encoding = "low-8-bits"\n[hostile_keys]\n'
        'attack_keys = 10\nbudgets = [100]\nhashes = ["crc32", "siphash24-32"]',
        ["hostile_keys must be left out when client traits are set "
         "(generator.key_encoding)"]),
    "range scans of keys routed by a part": (
        '[servers]\ncount = 3\n[keys]\nhash_part = "tag"\n[range_scans]\nwidths = 10',
        ["range_scans must be left out when keys are routed by a part (keys.hash_part = "
         "'tag')"]),
    "range scans of an unknown algorithm": (
        '[servers]\ncount = 3\n[range_scans]\nalgorithms = ["btree"]',
        ["range_scans.algorithms[0].name must be one of", "'btree'"]),
    "unknown distribution": ('[servers]\ncount = 3\n[keys]\ndistribution = "pareto"',
                             ["keys.distribution must be one of 'uniform', 'zipf'"]),
    "remove unknown server": ('[servers]\ncount = 3\n[[operations]]\nkind = "remove"\n'
                              'server = "nope"', ["operations[0].server must name a server"]),
    "add existing server": ('[servers]\ncount = 3\n[[operations]]\nkind = "add"\n'
                            'server = "server-1"', ["operations[0].server must be a new"]),
    "no layout to measure memory": ('[servers]\ncount = 3\n[measure]\nlayouts = []',
                                    ["measure.layouts must be at least one layout when "
                                     "measuring memory or throughput", "got []"]),
    "no layouts, default metrics": ('[servers]\ncount = 3\n[measure]\nlayouts = []',
                                    ["measure.layouts must be at least one layout when"]),
    "32-bit layout on a 64-bit ring": ('[servers]\ncount = 3\n[generator]\nhash = "blake2b-64"\n'
                                       '[measure]\nlayouts = ["numpy-packed"]',
                                       ["measure.layouts must be layouts that store 64-bit hashes",
                                        "numpy-packed-64", "'numpy-packed'"]),
    "count and list": ('[servers]\ncount = 3\nlist = [{name = "a"}]',
                       ["servers needs either count", "not both"]),
    "duplicate names": ('[servers]\nlist = [{name = "a"}, {name = "a"}]',
                        ["servers.list must be servers with distinct names", "'a'"]),
    "bad weight": ('[servers]\nlist = [{name = "a", weight = 0}]',
                   ["servers.list[0].weight must be a number from 1e-06 to 1e+12", "got 0"]),
    "bad template": ('[servers]\ncount = 3\nname = "s-{x}"',
                     ["servers.name must be a name template using {i}"]),
    "client traits that do not combine": (
        '[servers]\ncount = 3\n[generator]\nhash = "crc32"\npoints_per_digest = 4',
        ["generator.points_per_digest must be 1 for hash 'crc32'", "got 4"]),
    "unknown tie rule": ('[servers]\ncount = 3\n[generator]\ntie = "nearest"',
                         ["generator.tie must be one of 'at-or-after', 'after'", "'nearest'"]),
    "nginx fractional weight, before any work": (
        '[servers]\nlist = [{name = "a:1", weight = 1.5}]\n[generator]\nconstruction = "nginx"',
        ["servers must be positive integer weights, as nginx's weight=N", "'a:1'", "1.5"]),
    "nginx add with a fractional weight": (
        '[servers]\ncount = 3\n[generator]\nconstruction = "nginx"\n[[operations]]\n'
        'kind = "add"\nserver = "x"\nweight = 2.5',
        ["operations[0] must leave servers that are positive integer weights", "2.5"]),
    "haproxy weight above 256, before any work": (
        '[servers]\nlist = [{name = "a", weight = 300}]\n[generator]\nconstruction = "haproxy"',
        ["servers must be integer weights 0..256, as HAProxy's `weight`", "'a'", "300"]),
    "haproxy unknown key hash": (
        '[servers]\ncount = 3\n[generator]\nconstruction = "haproxy"\nkey_hash = "crc32"',
        ["generator.key_hash must be one of 'sdbm avalanche', 'sdbm'", "'crc32'"]),
    "haproxy ids from names without digits": (
        '[servers]\ncount = 2\nname = "s{i}x"\n[generator]\nconstruction = "haproxy"\n'
        'server_ids = "name"', ["servers must be names ending in an id 1..524287", "'s0x'"]),
    "envoy ring hash minimum above maximum": (
        '[servers]\ncount = 3\n[generator]\nconstruction = "envoy_ring_hash"\n'
        'minimum_ring_size = 20\nmaximum_ring_size = 10',
        ["generator.maximum_ring_size must be at least minimum_ring_size (20)", "got 10"]),
    "envoy ring hash fractional weight, before any work": (
        '[servers]\nlist = [{name = "a:1", weight = 1.5}]\n[generator]\n'
        'construction = "envoy_ring_hash"',
        ["servers must be positive integer weights, as Envoy's load_balancing_weight",
         "'a:1'", "1.5"]),
    "pingora server names that are not socket addresses, before any work": (
        '[servers]\ncount = 3\n[generator]\nconstruction = "pingora"',
        ["servers must be names that are socket addresses", "'server-0'"]),
    "pingora v1 with its own point multiple": (
        '[servers]\ncount = 3\nname = "10.0.0.1:{i}"\n[generator]\nconstruction = "pingora"\n'
        'version = "v1"\npoint_multiple = 100',
        ["generator.point_multiple must be 160 (or left out) for version 'v1'", "got 100"]),
    "clients fleet with a negative shuffle seed": (
        '[servers]\ncount = 3\n[clients]\nfleets = [{servers = 3, shuffle = -1}]',
        ["clients.fleets[0].shuffle must be a seed from 0 to 2**63 - 1", "got -1"]),
    "uhashring with a fractional weight": (
        '[servers]\nlist = [{name = "a", weight = 1.5}]\n[measure]\npeers = ["uhashring"]',
        ["servers must be positive integer weights, as uhashring requires", "peer 'uhashring'"]),
    "infinite weight": ('[servers]\ncount = 3\nweight = inf',
                        ["servers.weight must be a number from 1e-06 to 1e+12", "inf"]),
    "one name for every server": ('[servers]\ncount = 3\nname = "same"',
                                  ["servers.name must be a name template using {i}"]),
    "point name without {j}": ('[servers]\ncount = 3\n[generator]\npoint_name = "{server}"',
                               ["generator.point_name must be a name template using {server} "
                                "and {j} (each of them"]),
    "key name without {i}": ('[servers]\ncount = 3\n[keys]\nname = "k"',
                             ["keys.name must be a name template using {i}"]),
    "zipf field under uniform keys": ('[servers]\ncount = 3\n[keys]\nuniverse = 10',
                                      ["keys.universe must be left out: it applies to "
                                       "distribution = 'zipf' only"]),
    "layout in the generator": ('[servers]\ncount = 3\n[generator]\nlayout = "tuples"',
                                ["generator.layout must be left out: layouts are listed in "
                                 "measure.layouts"]),
    "bad ring parameter": ('[servers]\ncount = 3\n[generator]\nhash = "sha1"',
                           ["generator.hash must be one of"]),
    "an added server too heavy to fit": (
        '[servers]\ncount = 3\n[[operations]]\nkind = "add"\nserver = "x"\nweight = 2e7',
        ["the ring's size", "operations' weights", "estimated peak"]),
    "an added server of weight 1e300": (
        '[servers]\ncount = 3\n[[operations]]\nkind = "add"\nserver = "x"\nweight = 1e300',
        ["operations[0].weight must be a number from 1e-06 to 1e+12", "1e+300"]),
    "a zipf universe too large to fit": (
        '[servers]\ncount = 3\n[keys]\ndistribution = "zipf"\nuniverse = 1000000000',
        ["keys (count, name, distribution, universe) must keep the run within"]),
    "key names too long to fit": ('[servers]\ncount = 3\n[keys]\nname = "{i:>100000}"',
                                  ["keys (count, name, distribution, universe)"]),
    "memory estimate": ("[servers]\ncount = 60000\n[generator]\npoints_per_weight = 1000000",
                        ["must keep the run within this machine's available memory",
                         "estimated peak"]),
    "a fleet without its rollout": (
        '[servers]\ncount = 3\n[fleet]\ndata_centres = 2\nsizes = { values = [3], '
        'shares = [1] }', ["[fleet] needs [rollout]"]),
    "a rollback at an unknown wave": (
        '[servers]\ncount = 3\n[fleet]\ndata_centres = 2\nsizes = { values = [3], '
        'shares = [1] }\n[rollout]\nto = { points_per_weight = 16 }\nwaves = [{ name = '
        '"all", share = 1.0 }]\nrollback = { wave = "al", stage = 1 }',
        ["rollout.rollback.wave must be the name of a wave: 'all'", "'al'"]),
}


@pytest.mark.parametrize("case", list(BAD_SCENARIOS))
def test_bad_scenario_exits_2_with_one_message_and_writes_nothing(
    case: str, write_scenario: Callable[[str], Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each malformed scenario gets a one-line error naming the file and field; exit 2; no file."""
    text, fragments = BAD_SCENARIOS[case]
    path = write_scenario(text)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: ")
    assert len(err.splitlines()) == 1
    for fragment in fragments:
        assert fragment in err
    assert not out.exists()


def test_a_bad_file_stops_all_scenarios_before_any_work(
    write_scenario: Callable[[str, str], Path], tmp_path: Path,
) -> None:
    """With a good and a bad scenario, validation fails first and neither result is written."""
    good = write_scenario(SMALL_SCENARIO, "good.toml")
    bad = write_scenario("[servers]\ncount = 0", "bad.toml")
    out = tmp_path / "out"
    assert main(["run", str(good), str(bad), "--out", str(out)]) == 2
    assert not out.exists()


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A scenario path that does not exist is a bad-input error, not a traceback."""
    assert main(["run", str(tmp_path / "nope.toml"), "--out", str(tmp_path)]) == 2
    assert "cannot open the scenario file (No such file or directory)" in capsys.readouterr().err


def test_defaults_fill_a_minimal_scenario(write_scenario: Callable[[str], Path]) -> None:
    """A file with only a server count gets the documented defaults."""
    scenario = load_scenario(write_scenario("[servers]\ncount = 3"))
    assert scenario.generator.sweep[0]["hash"] == "blake2b-32"
    assert scenario.generator.points_per_weight == (160,)
    assert scenario.recipes()[0].params["layout"] == "numpy-aligned"
    assert scenario.keys.count == 200_000
    assert scenario.measure.layouts[:5] == ("tuples", "numpy-aligned", "numpy-packed",
                                            "cffi-aligned", "cffi-packed")
    assert all(LAYOUTS[name].hash_bits == 32 for name in scenario.measure.layouts)
    wide = load_scenario(write_scenario('[servers]\ncount = 3\n[generator]\nhash = "blake2b-64"'))
    assert wide.measure.layouts and all(LAYOUTS[n].hash_bits == 64 for n in wide.measure.layouts)
    assert [s.name for s in scenario.servers] == ["server-0", "server-1", "server-2"]


def test_capabilities_filter_the_ring(write_scenario: Callable[[str], Path]) -> None:
    """generator.requires keeps only the servers holding every required capability."""
    scenario = load_scenario(write_scenario(
        '[servers]\nlist = [{name = "a", capabilities = ["pci"]}, {name = "b"}]\n'
        '[generator]\nrequires = ["pci"]'
    ))
    assert [s.name for s in scenario.ring_servers()] == ["a"]


def test_ring_only_metrics_need_no_layout(write_scenario: Callable[[str], Path]) -> None:
    """A 64-bit scenario measuring only balance and collisions is valid with no layout."""
    scenario = load_scenario(write_scenario(
        '[servers]\ncount = 3\n[generator]\nhash = "blake2b-64"\n'
        '[measure]\nlayouts = []\nmetrics = ["balance", "collisions"]'
    ))
    assert scenario.measure.layouts == ()
    # No layout to measure: the ring is routed by the reference on its own arrays.
    assert scenario.recipes()[0].params["layout"] == "none"


def test_construction_point_counts_set_the_estimate(write_scenario: Callable[[str], Path]) -> None:
    """libketama gives each server a share of 40 digests per server whatever its weight, so
    weights 1 and 1e7 make a 320-point ring: accepted, not refused as hundreds of GiB."""
    from harness.run.estimate import estimate_peak_bytes

    scenario = load_scenario(write_scenario(
        '[servers]\nlist = [{name = "a", weight = 1}, {name = "b", weight = 1e7}]\n'
        '[generator]\nconstruction = "libketama"'))
    assert estimate_peak_bytes(scenario) < 2**30


@pytest.mark.parametrize(("text", "message"), [
    ('[algorithm]\nname = "nope"\n[servers]\ncount = 3', "algorithm.name must be one of 'ring'"),
    ('[algorithm]\npoints_per_weight = 3\n[servers]\ncount = 3',
     "algorithm.points_per_weight must be left out: the ring's parameters go in [generator]"),
])
def test_algorithm_table(text: str, message: str, write_scenario: Callable[[str], Path],
                         capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """[algorithm] names a registered algorithm; the ring keeps its parameters in [generator]."""
    assert main(["run", str(write_scenario(text)), "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("name", ["jump", "binomial", "fliphash", "powerch"])
def test_range_hashes_refuse_removing_a_middle_server(name: str,
                                                      write_scenario: Callable[[str], Path],
                                                      capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    """jump and its successors renumber buckets after a removed one: only the last can go."""
    text = (f'[algorithm]\nname = "{name}"\n[servers]\ncount = 5\n'
            '[[operations]]\nkind = "remove"\nserver = "server-2"\n')
    assert main(["run", str(write_scenario(text)), "--out", str(tmp_path / "o")]) == 2
    assert (f"{name} can remove only the last server ('server-4')"
            in capsys.readouterr().err)


@pytest.mark.parametrize("name", ["binomial", "fliphash", "powerch"])
def test_range_hashes_measure_adding_and_removing_the_last_server(
    name: str, write_scenario: Callable[[str], Path], tmp_path: Path,
) -> None:
    """Adding a server moves keys only to it, removing the last only its keys (each operation
    from the scenario's fleet)."""
    text = (f'[algorithm]\nname = "{name}"\n[servers]\ncount = 6\n[keys]\ncount = 3000\n'
            '[measure]\nmetrics = ["balance", "movement"]\n'
            '[[operations]]\nkind = "add"\nserver = "server-6"\n'
            '[[operations]]\nkind = "remove"\nserver = "server-5"\n')
    assert main(["run", str(write_scenario(text)), "--out", str(tmp_path / "o")]) == 0
    result = json.loads(next((tmp_path / "o").glob("*.json")).read_text())
    added, removed = result["runs"][0]["figures"]["movement"]
    assert added["ring_only_changed_server"] and removed["ring_only_changed_server"]
    assert 0 < added["ring_moved"] < 3000 and 0 < removed["ring_moved"] < 3000
    # The removal is the same hash over one bucket fewer (`without`), as a deployment runs it.
    assert removed["as_it_falls"] and not added["as_it_falls"]


@pytest.mark.parametrize("name", ["jump", "maglev", "rendezvous", "multi-probe", "binomial",
                                  "fliphash", "powerch"])
def test_a_process_of_an_algorithm_without_layouts_is_refused(
    name: str, write_scenario: Callable[[str], Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every one-form algorithm, not only bounded-load: [process] costs rings held in layouts
    (it used to fail at run time with an AssertionError, after the work had started)."""
    path = write_scenario(f'[algorithm]\nname = "{name}"\n[servers]\ncount = 5\n[process]\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert (f"process must be left out for {name}: a process is costed as rings held in "
            f"layouts, one per eligibility set; {name} has no layouts") in capsys.readouterr().err


def test_a_ring_only_run_says_no_form_was_checked(write_scenario: Callable[[str], Path]) -> None:
    """With no layout the reference routes alone: the report says so, not "all 0 forms", and
    that no peer was checked either."""
    from harness.report.sections import parity_section
    from harness.run.runner import run_scenario

    scenario = load_scenario(write_scenario(
        '[servers]\ncount = 3\n[keys]\ncount = 500\n'
        '[measure]\nlayouts = []\nmetrics = ["balance"]'))
    section = parity_section(run_scenario(scenario, show_progress=False))
    assert section.paragraphs == ["k=160: no form to check: the reference alone routed 500 "
                                  "keys. No peer was checked."]


@pytest.mark.parametrize(("spec", "accepted"), [
    ("", True), (":s", True), (":>8", True), (":.>8", True), (":x<10s", True),
    # An integer type fails on a server's name when names are made, and a precision cuts
    # names short until two servers share one: both refused as they are read.
    (":d", False), (":x", False), (":.3", False), (":>8.4s", False), ("!r:d", False),
])
def test_a_servers_format_spec_is_a_string_spec(
        spec: str, accepted: bool, write_scenario: Callable[[str], Path],
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """{server} takes fill, align, width and the string type, and nothing a string cannot
    take: a refusal is one line naming the field, never a traceback after the work."""
    path = write_scenario("[servers]\ncount = 3\n[generator]\n"
                          f'point_name = "{{server{spec}}}-{{j}}"\n[keys]\ncount = 100\n'
                          "[measure]\nrepeats = 1\nscalar_keys = 10\nmetrics = ['balance']\n")
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--no-history"])
    err = capsys.readouterr().err
    if accepted:
        assert code == 0, err
    else:
        assert code == 2
        assert err.count("\n") == 1 and "generator.point_name must be a name template" in err
        assert "plain or with a string format spec" in err
        assert not (tmp_path / "out").exists()


LONG = "r" * 201
CLIENTS = ("[clients]\nfleets = [{{ servers = 3{fleet} }}]\n"
           "recipes = [{{ name = \"{recipe}\", algorithm = \"jump\" }}]\n")


@pytest.mark.parametrize(("text", "field"), [
    (CLIENTS.format(fleet="", recipe=LONG), "clients.recipes[0].name"),
    (CLIENTS.format(fleet=f', label = "{LONG}"', recipe="r"), "clients.fleets[0].label"),
    (f'[measure]\npeers = [{{ command = ["python3"], name = "{LONG}" }}]\n',
     "measure.peers[0].name"),
    # 208 bytes of UTF-8 in 104 characters: the limit is on bytes, as files hold them
    (CLIENTS.format(fleet="", recipe="ключ" * 26), "clients.recipes[0].name"),
])
def test_a_label_longer_than_200_bytes_is_refused(
        text: str, field: str, write_scenario: Callable[[str], Path],
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A recipe's, a fleet's or a peer's name labels every row and chart that shows it, so
    a long one multiplied through results (954 MiB at the peak for a million-character
    recipe name): refused as the file is read, one line naming the field."""
    path = write_scenario(f"[servers]\ncount = 3\n[keys]\ncount = 100\n{text}")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-history"]) == 2
    err = capsys.readouterr().err
    assert f"{field} must be a non-empty name of at most 200 bytes" in err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()
