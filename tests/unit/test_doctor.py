"""`doctor`: one screen of what this machine has for the harness, read from the same tables
that the machine check of `run` and the tests' skips read."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.apps import doctor
from harness.cli import main
from harness.core.tools import TOOLS


def _doctor(capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["doctor"]) == 0
    return capsys.readouterr().out.splitlines()


def test_every_section_on_one_screen(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _doctor(capsys)
    assert len(lines) <= 50
    text = "\n".join(lines)
    for heading in ("C core", "CPU ", "Folders", "Optional tools: ", "Peer packages: ",
                    "Here", "  metrics refused: ", "  built-in scenarios refused: ",
                    "  tests skipped: "):
        assert heading in text, heading
    for name in TOOLS:
        assert any(line.startswith(f"  {name} ") for line in lines), name


def test_a_missing_tool_shows_its_install_command_and_what_skips(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.core.tools.shutil.which", lambda _name: None)
    lines = _doctor(capsys)
    nginx = next(line for line in lines if line.startswith("  nginx "))
    assert "missing: apt-get install nginx" in nginx
    skipped = next(line for line in lines if line.startswith("  tests skipped: "))
    assert "nginx" in skipped and "haproxy" in skipped
    refused = next(line for line in lines if line.startswith("  metrics refused: "))
    assert refused.startswith("  metrics refused: counts (valgrind is missing")


def test_refused_scenarios_name_their_first_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in scenario whose peer's program is missing here is named with the line
    `run` would refuse it with, less the file."""
    monkeypatch.setattr("harness.run.machine_check.unavailable", lambda _name: None)
    monkeypatch.setattr("harness.recipes.peers.foreign.spec.shutil.which", lambda _name: None)
    refused = {r.name: r.reason for r in doctor.refused_scenarios(["clients", "tutorial"])}
    assert list(refused) == ["clients"]
    assert refused["clients"].startswith("measure.peers[")
    assert "must be a command whose program is on PATH" in refused["clients"]


def test_folders_shown_are_escaped(capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A folder named by the environment reaches the terminal with its controls escaped."""
    monkeypatch.setenv("RING_HARNESS_HISTORY", str(tmp_path / "a\x1b[31mred"))
    lines = _doctor(capsys)
    history = next(line for line in lines if line.startswith("  history "))
    assert "\x1b" not in history and "red" in history
    assert "RING_HARNESS_HISTORY" in history
