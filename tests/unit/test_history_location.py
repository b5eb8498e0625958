"""Where the run history and the tuning cache live when no flag says: each branch of
`default_history_dir`'s rule, `run` and `compare latest` on the folder it chooses, and the
tuning cache's folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.recipes.layouts.bucketed_cache import CACHE_VARIABLE, tuning_cache_dir
from harness.report.history import HISTORY_VARIABLE, default_history_dir, entries, machine_name
from tests.unit.test_history import TINY


@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current folder in no git work tree, no history variable, and user folders in
    tmp_path; returns the user data folder's history."""
    monkeypatch.delenv(HISTORY_VARIABLE, raising=False)
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    # git looks no higher than tmp_path for a work tree (tmp_path could be inside one).
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    return tmp_path / "data" / "ring-harness" / "history"


def _git_project(top: Path, ignore: str) -> None:
    top.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    (top / ".gitignore").write_text(ignore, encoding="utf-8")


def test_variable_first(nowhere: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$RING_HARNESS_HISTORY wins over a history already in the current folder."""
    Path("runs/history").mkdir(parents=True)
    monkeypatch.setenv(HISTORY_VARIABLE, str(tmp_path / "named"))
    assert default_history_dir() == (tmp_path / "named", f"${HISTORY_VARIABLE} names it")


def test_outside_a_project_the_user_data_folder(nowhere: Path) -> None:
    """In no git work tree and with no runs/history here: the user data folder."""
    folder, why = default_history_dir()
    assert folder == nowhere
    assert why.startswith("the user data folder")


def test_a_history_already_here(nowhere: Path) -> None:
    """A runs/history in the current folder (kept there before) is used again."""
    Path("runs/history").mkdir(parents=True)
    assert default_history_dir() == (Path("runs/history"),
                                      "the current folder holds a run history")


def test_a_git_work_tree_that_ignores_runs(nowhere: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """In a work tree that ignores runs/ (the checkout's .gitignore): runs/history at its
    top, relative from the top itself, absolute from a folder below it."""
    top = tmp_path / "project"
    _git_project(top, "runs/\n")
    (top / "docs").mkdir()
    monkeypatch.chdir(top)
    folder, why = default_history_dir()
    assert folder == Path("runs/history") and str(top) in why
    monkeypatch.chdir(top / "docs")
    assert default_history_dir()[0] == top / "runs" / "history"


def test_a_git_work_tree_that_does_not_ignore_runs(nowhere: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A work tree that would show runs/ as untracked files gets none: the user data
    folder."""
    top = tmp_path / "theirs"
    _git_project(top, "*.pyc\n")
    monkeypatch.chdir(top)
    assert default_history_dir()[0] == nowhere


def test_without_git(nowhere: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No git program: no work tree is found, and the rule goes on to the user data folder."""
    top = tmp_path / "project"
    _git_project(top, "runs/\n")
    monkeypatch.chdir(top)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    assert default_history_dir()[0] == nowhere


def test_run_and_compare_use_the_chosen_folder(nowhere: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`run` without --history keeps its entry in the folder the rule chose and says so in
    its last line; `compare latest` reads the same folder; nothing else is written."""
    top = tmp_path / "project"
    _git_project(top, "runs/\n")
    monkeypatch.chdir(top)
    Path("small.toml").write_text(TINY, encoding="utf-8")
    assert main(["run", "small.toml", "--no-progress"]) == 0
    out = capsys.readouterr().out
    history = top / "runs" / "history"
    assert [e.run_id for e in entries(history, machine_name())] == ["0001"]
    assert f"run history: runs/history (in the git work tree {top}, which ignores " in out
    assert main(["compare", "latest", "latest"]) == 0
    assert "A: `latest = runs/history/" in capsys.readouterr().out
    assert not nowhere.exists()


def test_tuning_cache_folder(nowhere: Path, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The tuning cache: $RING_HARNESS_TUNING_CACHE, else the platform's user cache folder."""
    assert tuning_cache_dir() == (tmp_path / "cache" / "ring-harness", "the user cache folder")
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "tuned"))
    assert tuning_cache_dir() == (tmp_path / "tuned", f"${CACHE_VARIABLE} names it")
