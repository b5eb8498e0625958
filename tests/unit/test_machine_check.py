"""Reading a scenario is the same on every machine; whether this machine can run it is the
second check, which `run` makes before any work (harness.run.machine_check), from the one
table of optional tools (harness.core.tools) that the tests' skips read too."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.errors import ScenarioError
from harness.core.tools import TOOLS, Tool, tool_problem
from harness.run.machine_check import check_machine, machine_problems
from harness.run.scenario import load_scenario, parse_scenario
from tests import toolchains
from tests.paths import ROOT

PEERS = """
[servers]
count = 3
[keys]
count = 100
[measure]
repeats = 1
scalar_keys = 10
peers = ["uhashring", { library = "build/nowhere/libring.so", name = "mine" },
         { command = ["no-such-program-anywhere", "--serve"] }]
"""


def test_a_scenario_naming_what_this_machine_lacks_still_reads(tmp_path: Path) -> None:
    """A library that is not built and a program that is not installed: the file reads
    (its fields are what they should be), and the machine check names each, in order,
    with its field, what it must be and what it is."""
    path = tmp_path / "peers.toml"
    path.write_text(PEERS)
    scenario = load_scenario(path)
    assert [spec.where for spec in scenario.measure.foreign_peers] == [
        "measure.peers[1]", "measure.peers[2]"]
    problems = machine_problems(scenario)
    assert problems[:2] == [
        f"{scenario.path}: measure.peers[1].library must be the path of an existing shared "
        "library file on this machine (got 'build/nowhere/libring.so', a string)",
        f"{scenario.path}: measure.peers[2].command must be a command whose program is on "
        "PATH on this machine (got ['no-such-program-anywhere', '--serve'], an array)",
    ]
    with pytest.raises(ScenarioError, match=r"measure\.peers\[1\]\.library"):
        check_machine([scenario])


def test_run_refuses_it_before_any_work(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "peers.toml"
    path.write_text(PEERS)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-history"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "measure.peers[1].library must be the path" in err[0]
    assert not out.exists()


def test_a_registry_peers_package_is_checked(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer that wraps a test-extra package, where it is not installed: refused with the
    pip command, not a failure after the work."""
    scenario = parse_scenario({"servers": {"count": 3},
                               "measure": {"peers": ["uhashring", "pymemcache"]}}, "s.toml")
    assert machine_problems(scenario) == []
    real = __import__("importlib.util").util.find_spec
    monkeypatch.setattr("harness.run.machine_check.importlib.util.find_spec",
                        lambda name: None if name == "uhashring" else real(name))
    assert machine_problems(scenario) == [
        "s.toml: measure.peers names 'uhashring', which needs the Python package "
        "'uhashring': pip install 'uhashring>=2.5' (or the test extra, ring-harness[test])"]


def test_shipped_scenarios_read_from_any_folder_with_no_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shipped scenario reads from a folder with no build/ and no peers/ (the first
    contact that broke: scenarios/foreign-overhead.toml names build/peers/...)."""
    monkeypatch.chdir(tmp_path)
    for path in sorted((ROOT / "scenarios").rglob("*.toml")):
        load_scenario(path)
    overhead = load_scenario(ROOT / "scenarios" / "foreign-overhead.toml")
    assert any("build/peers/libmemcached_ketama.so" in line
               for line in machine_problems(overhead))


def test_every_tool_says_how_to_install_it() -> None:
    for tool in TOOLS.values():
        assert tool.install.startswith("apt-get install "), tool.name
        assert tool.programs or tool.files, tool.name
        assert tool.used_by, tool.name


def test_a_tool_is_here_only_when_all_of_it_is(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    header = tmp_path / "x.h"
    tool = Tool("x", "tests", programs=("x-prog",), files=(str(header),),
                install="apt-get install x")
    monkeypatch.setattr("harness.core.tools.shutil.which", lambda _name: None)
    assert tool.problem() == (f"x is missing (x-prog, {header} are not found): install it "
                              "with `apt-get install x`")
    monkeypatch.setattr("harness.core.tools.shutil.which", lambda name: f"/bin/{name}")
    assert tool.missing() == f"{header} is not found"
    header.write_text("")
    assert tool.problem() is None


def test_a_missing_tool_skips_naming_it_or_fails_when_required(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.core.tools.shutil.which", lambda _name: None)
    assert tool_problem("nginx") is not None
    monkeypatch.delenv(toolchains.STRICT_VARIABLE, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^needs nginx: nginx is missing .*"
                                                    r"apt-get install nginx"):
        toolchains.require_tool("nginx")
    monkeypatch.setenv(toolchains.STRICT_VARIABLE, "1")
    with pytest.raises(pytest.fail.Exception, match="RING_HARNESS_REQUIRE_TOOLS is set"):
        toolchains.require_tool("nginx")
    monkeypatch.setenv(toolchains.STRICT_VARIABLE, "0")
    with pytest.raises(pytest.skip.Exception):
        toolchains.require_program("haproxy")


FAKE_CC = """#!/bin/bash
echo built >> "$LOG"
while [ $# -gt 0 ]; do
    if [ "$1" = -o ]; then mkdir -p "$(dirname "$2")"; : > "$2"; fi
    shift
done
"""


def test_the_adapters_are_rebuilt_when_a_toolchain_appears(tmp_path: Path) -> None:
    """peers/run.sh's stamp lists the toolchains it found: one installed after the first
    build (here a `go` put on PATH) makes the next call build again; nothing new, nothing
    built."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "peers", checkout / "peers",
                    ignore=shutil.ignore_patterns("node_modules"))
    shutil.copytree(ROOT / "harness" / "core" / "native" / "abi",
                    checkout / "harness" / "core" / "native" / "abi")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("bash", "find", "flock", "cat", "mkdir", "dirname", "touch", "rm"):
        found = shutil.which(program)
        assert found is not None, program
        (bin_dir / program).symlink_to(found)
    cc = bin_dir / "cc"
    cc.write_text(FAKE_CC)
    cc.chmod(0o755)
    log = tmp_path / "cc.log"
    env = {"PATH": str(bin_dir), "LOG": str(log), "HOME": str(tmp_path)}

    def build() -> int:
        subprocess.run([str(bin_dir / "bash"), str(checkout / "peers" / "run.sh"), "build"],
                       env=env, check=True, capture_output=True)
        return len(log.read_text().splitlines()) if log.exists() else 0

    first = build()
    assert first >= 1 and (checkout / "build" / "peers" / "abi_pipe").exists()
    assert build() == first
    go = bin_dir / "go"
    go.write_text("#!/bin/bash\nexit 0\n")
    go.chmod(0o755)
    assert build() > first
    assert str(go) in (checkout / "build" / "peers" / ".built").read_text()
