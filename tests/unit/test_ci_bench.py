""".ci/bench.sh picks its mode from the clone: A/B against the merge base with origin/main
when there is one (the commit before on main itself), the committed baseline otherwise
(a shallow clone, no origin/main), and says which. tox is replaced by a `python3` on PATH
that records its arguments and passes, so only the script's own choices run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT

SHIM = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/calls.txt"
exit 0
"""


def git(folder: Path, *arguments: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c",
                           "user.email=t@t", *arguments], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def commit(folder: Path, name: str) -> str:
    (folder / name).write_text(name)
    git(folder, "add", name)
    git(folder, "commit", "-q", "-m", name)
    return git(folder, "rev-parse", "HEAD")


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    """A repository with two commits on main and the CI script in it."""
    folder = tmp_path / "upstream"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "bench.sh", folder / ".ci" / "bench.sh")
    git(folder, "add", ".ci")
    commit(folder, "one")
    commit(folder, "two")
    return folder


def bench(clone: Path, tmp_path: Path) -> tuple[str, list[str]]:
    """Run the clone's .ci/bench.sh with the recording python3: its output and the calls."""
    shims = tmp_path / "shims"
    shims.mkdir(exist_ok=True)
    (shims / "python3").write_text(SHIM)
    (shims / "python3").chmod(0o755)
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("RING_BENCH_")}
    environment["PATH"] = f"{shims}{os.pathsep}{environment['PATH']}"
    done = subprocess.run(["bash", str(clone / ".ci" / "bench.sh")], capture_output=True,
                          text=True, env=environment, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = (shims / "calls.txt").read_text().splitlines()
    return done.stdout, [call for call in calls if "-e" in call]


def test_a_branch_is_gated_against_its_merge_base(upstream: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    fork = git(clone, "rev-parse", "HEAD")
    git(clone, "checkout", "-q", "-b", "change")
    commit(clone, "three")
    out, calls = bench(clone, tmp_path)
    assert f"mode A/B: this change against {fork}" in out
    assert calls == [f"-m tox -e bench-ab -- --against {fork}"]


def test_main_itself_is_gated_against_the_commit_before(upstream: Path,
                                                        tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    before = git(clone, "rev-parse", "HEAD~1")
    out, calls = bench(clone, tmp_path)
    assert f"mode A/B: this change against {before}" in out
    assert calls == [f"-m tox -e bench-ab -- --against {before}"]


def test_a_shallow_clone_falls_back_to_the_baseline(upstream: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", upstream.as_uri(), str(clone))
    out, calls = bench(clone, tmp_path)
    assert "mode baseline: no merge base in this clone" in out
    assert calls == ["-m tox -e bench -- --bench-mode=short"]


def test_a_clone_without_origin_falls_back_to_the_baseline(upstream: Path,
                                                           tmp_path: Path) -> None:
    out, calls = bench(upstream, tmp_path)
    assert "mode baseline" in out
    assert calls == ["-m tox -e bench -- --bench-mode=short"]
