"""Built-in scenarios: where they are found, how an argument names one, the `scenarios`
command, and what a result records when one is read from an installed package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.errors import ScenarioError
from harness.run import builtin
from harness.run.builtin import (
    builtin_folder,
    builtin_names,
    builtin_path,
    builtin_scenarios,
    find_scenario,
    recorded_path,
)
from tests.conftest import SMALL_SCENARIO
from tests.paths import ROOT

CHECKOUT = ROOT / "scenarios"


@pytest.fixture
def packaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A packaged copy as a wheel installs it, outside the current folder: `small`,
    `nested/deep` and a scenario whose description holds control characters."""
    folder = tmp_path / "site-packages" / "harness" / "run" / "builtin_scenarios"
    (folder / "nested").mkdir(parents=True)
    (folder / "small.toml").write_text(SMALL_SCENARIO, encoding="utf-8")
    (folder / "nested" / "deep.toml").write_text("[servers]\ncount = 3\n", encoding="utf-8")
    (folder / "loud.toml").write_text(
        'description = "red \\u001b[31m text\\nsecond line \\u0007"\n[servers]\ncount = 3\n',
        encoding="utf-8")
    monkeypatch.setattr(builtin, "PACKAGED", folder)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return folder


def test_a_checkout_reads_its_own_scenarios_folder() -> None:
    """Without a packaged copy (a checkout, an editable install) the folder is scenarios/;
    with one (a wheel), the copy holds exactly the checkout's files."""
    if not builtin.PACKAGED.is_dir():
        assert builtin_folder() == CHECKOUT
    elif CHECKOUT.is_dir():
        copied = sorted(p.relative_to(builtin.PACKAGED) for p in builtin.PACKAGED.rglob("*.toml"))
        assert copied == sorted(p.relative_to(CHECKOUT) for p in CHECKOUT.rglob("*.toml"))


def test_the_packaged_copy_wins_when_present(packaged: Path) -> None:
    """A wheel's copy is the folder, and its names are paths below it without .toml."""
    assert builtin_folder() == packaged
    assert builtin_names() == ["loud", "nested/deep", "small"]


def test_the_shipped_names() -> None:
    """The default, the tutorial and the reproduction set are built in, each by name."""
    names = builtin_names()
    assert {"default", "tutorial", "reproduce/a_balance_sweep"} <= set(names)
    assert all(builtin_path(name) is not None for name in names)
    assert builtin_path("tutorial") == builtin_path("tutorial.toml") is not None


@pytest.mark.parametrize("name", ["../scenarios/default", "/etc/passwd", "reproduce/../default",
                                  "nope", "", "reproduce\\a_balance_sweep"])
def test_names_outside_the_folder_name_nothing(name: str) -> None:
    """Absolute paths, `..`, backslashes and unknown names are no built-in scenario."""
    assert builtin_path(name) is None


def test_an_existing_file_wins_over_a_name(packaged: Path) -> None:
    """`small` in the current folder is that file, not the built-in scenario."""
    Path("small").write_text("[servers]\ncount = 2\n", encoding="utf-8")
    assert find_scenario("small") == Path("small")
    assert find_scenario("small.toml") == packaged / "small.toml"
    assert find_scenario("nested/deep") == packaged / "nested" / "deep.toml"


def test_a_folder_named_like_a_scenario_is_the_scenario(packaged: Path) -> None:
    """A folder is no scenario file: a built-in name is looked up; if none, the folder is
    returned for load_scenario to refuse by its kind."""
    Path("small").mkdir()
    Path("other").mkdir()
    assert find_scenario("small") == packaged / "small.toml"
    assert find_scenario("other") == Path("other")


def test_an_unknown_name_says_what_exists(packaged: Path) -> None:
    """Neither a file nor a name: the usual missing-file message, the closest names and
    what lists them, on one line."""
    with pytest.raises(ScenarioError) as error:
        find_scenario("smal", "`ring-harness scenarios`")
    message = str(error.value)
    assert message.startswith("smal: cannot open the scenario file (No such file or directory)")
    assert "(closest: small)" in message and "`ring-harness scenarios` lists them" in message
    assert "\n" not in message


def test_run_by_name_records_no_absolute_path(packaged: Path) -> None:
    """A built-in scenario read from an installed package (outside the current folder) is
    recorded as scenarios/NAME.toml, as a run from the checkout's root records it."""
    assert main(["run", "small", "--out", "out", "--no-history"]) == 0
    document = json.loads(Path("out/small.json").read_text(encoding="utf-8"))
    assert document["scenario_file"] == "scenarios/small.toml"
    assert str(packaged) not in Path("out/small.json").read_text(encoding="utf-8")


def test_recorded_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in scenario is scenarios/NAME.toml from any folder; a user's file is recorded
    as before (relative inside the current folder, else as given)."""
    monkeypatch.chdir(tmp_path)
    assert recorded_path(builtin_folder() / "reproduce" / "a_balance_sweep.toml") == (
        "scenarios/reproduce/a_balance_sweep.toml")
    assert recorded_path(tmp_path / "mine.toml") == "mine.toml"
    assert recorded_path("/elsewhere/a.toml") == "/elsewhere/a.toml"


def test_plan_and_explore_take_names(packaged: Path) -> None:
    """plan and explore resolve a scenario argument like run."""
    assert main(["explore", "small", "--out", "ring.html"]) == 0
    assert Path("ring.html").stat().st_size > 0
    assert main(["plan", "nested/deep", "--target-cv", "0.2", "--out", "plan"]) == 0
    assert Path("plan.md").stat().st_size > 0


def test_an_unknown_name_is_bad_input(packaged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """run with an unknown name: exit 2, one line pointing to the listing."""
    assert main(["run", "nope", "--no-history", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "scenarios` lists them" in err
    assert not Path("out").exists()


def test_the_scenarios_command_lists_every_one_escaped(
    packaged: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """One line per built-in scenario, name and description, after a line saying where
    they are; control characters reach the terminal escaped."""
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert str(packaged) in lines[0] and lines[0].startswith("3 built-in scenarios")
    assert [line.split()[0] for line in lines[1:]] == ["loud", "nested/deep", "small"]
    assert "red \\x1b[31m text\\nsecond line \\x07" in lines[1]
    assert "\x1b" not in out and "\x07" not in out
    assert lines[2].split(maxsplit=1)[1] == "nested/deep"  # no description: the name
    assert lines[3].endswith("a small end-to-end scenario")


def test_the_scenarios_command_lists_the_shipped_ones(capsys: pytest.CaptureFixture[str]) -> None:
    """Every shipped scenario has a line of its own."""
    assert main(["scenarios"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + len(builtin_scenarios()) == 1 + len(builtin_names())
