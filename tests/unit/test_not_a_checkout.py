"""A result names the commit of the code that ran, read from the package's own folder
(not the folder it ran in), and says "not a git checkout" in words where there is none,
its JSON keeping null."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import harness.core.machine
import harness.run.runner
from harness.cli import main
from harness.core.machine import NOT_A_CHECKOUT
from harness.report import html, markdown
from harness.report.history_page import history_report
from harness.report.results import load_result
from harness.report.sections import commit_markdown, result_report
from tests.paths import ROOT
from tests.unit.test_history import TINY

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def _machine_module_in(folder: Path) -> ModuleType:
    """harness/core/machine.py copied to FOLDER/harness/core/ and loaded from there, as a
    package installed in FOLDER would be."""
    copy = folder / "harness" / "core" / "machine.py"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(harness.core.machine.__file__, copy)
    spec = importlib.util.spec_from_file_location("copied_machine", copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_repository_around_the_package_is_not_its_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package installed inside another project's work tree (a virtual environment
    there, ignored) has no commit; the same files committed there have that commit."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    project = tmp_path / "project"
    subprocess.run([*GIT, "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".venv/\n", encoding="utf-8")
    subprocess.run([*GIT, "-C", str(project), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(project), "commit", "-q", "-m", "theirs"], check=True)
    installed = _machine_module_in(project / ".venv" / "site-packages")
    assert installed.git_commit() is None
    tracked = _machine_module_in(project)
    subprocess.run([*GIT, "-C", str(project), "add", "harness"], check=True)
    subprocess.run([*GIT, "-C", str(project), "commit", "-q", "-m", "ours"], check=True)
    head = subprocess.run([*GIT, "-C", str(project), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert tracked.git_commit() == head


def _expected_commit() -> str | None:
    """The commit of the checkout this test imports the package from; None when it is
    imported from an installed wheel (tox) rather than the checkout."""
    package = Path(harness.core.machine.__file__).resolve()
    if not package.is_relative_to(ROOT) or ".tox" in package.relative_to(ROOT).parts \
            or shutil.which("git") is None:
        return None
    found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                           text=True, check=False)
    return found.stdout.strip() if found.returncode == 0 else None


def test_run_outside_a_checkout_names_the_packages_commit(tmp_path: Path) -> None:
    """`python -m harness run` from a folder in no git work tree records the commit of the
    package's checkout (or null in JSON and "not a git checkout" in its Markdown, HTML and
    history page when the package is installed from a wheel): never the folder's."""
    (tmp_path / "small.toml").write_text(TINY, encoding="utf-8")
    package_parent = str(Path(harness.core.machine.__file__).resolve().parents[2])
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path),
           "PYTHONPATH": os.pathsep.join(filter(None, [package_parent,
                                                       os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "harness", "run", "small.toml", "--history",
                           "h", "--out", "out", "--no-progress"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    recorded = json.loads((tmp_path / "out" / "small.json").read_text(encoding="utf-8"))
    expected = _expected_commit()
    if expected is None:
        assert recorded["git_commit"] is None
    else:
        assert recorded["git_commit"].removesuffix("-dirty") == expected
    words = commit_markdown(recorded["git_commit"])
    assert f"commit {words};" in (tmp_path / "out" / "small.md").read_text(encoding="utf-8")
    if recorded["git_commit"] and recorded["git_commit"].endswith("-dirty"):
        assert "uncommitted or untracked files" in words


def test_no_commit_reads_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A result without a commit says "not a git checkout" in its Markdown, its HTML page,
    a comparison and the history's column heading; its JSON keeps null."""
    monkeypatch.setattr(harness.run.runner, "git_commit", lambda: None)
    (tmp_path / "small.toml").write_text(TINY, encoding="utf-8")
    history = tmp_path / "h"
    assert main(["run", str(tmp_path / "small.toml"), "--no-progress", "--history",
                 str(history)]) == 0
    entry = next(history.glob("*/0001.json"))
    assert json.loads(entry.read_text(encoding="utf-8"))["git_commit"] is None
    report = result_report(load_result(entry))
    assert f"commit {NOT_A_CHECKOUT};" in markdown.report(report)
    assert NOT_A_CHECKOUT in html.report(report) and "None" not in markdown.report(report)
    capsys.readouterr()
    assert main(["compare", str(entry), "latest", "--history", str(history)]) == 0
    assert f"commit {NOT_A_CHECKOUT})" in capsys.readouterr().out
    index = markdown.report(history_report(history))
    assert f"0001 ({NOT_A_CHECKOUT})" in index and "no comm" not in index


def test_an_untracked_input_marks_the_commit_dirty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the commit does not hold (a scenario not yet added) makes the run's commit
    '-dirty', as a changed tracked file does; ignored files and results/ do not."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    project = tmp_path / "project"
    subprocess.run([*GIT, "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".venv/\n__pycache__/\n", encoding="utf-8")
    tracked = _machine_module_in(project)
    subprocess.run([*GIT, "-C", str(project), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(project), "commit", "-q", "-m", "ours"], check=True)
    head = subprocess.run([*GIT, "-C", str(project), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    (project / ".venv").mkdir()
    (project / ".venv" / "ignored.txt").write_text("x", encoding="utf-8")
    (project / "results").mkdir()
    (project / "results" / "new.json").write_text("{}", encoding="utf-8")
    assert tracked.git_commit() == head
    (project / "scenarios").mkdir()
    (project / "scenarios" / "new.toml").write_text("name = 'new'\n", encoding="utf-8")
    assert tracked.git_commit() == f"{head}-dirty"
