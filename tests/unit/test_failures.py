"""Failures at the edges of the command line: closed pipes, ASCII terminals, outputs that
cannot be written, names too long, reproduce on results of the wrong shape."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from tests.paths import FIXTURES

FORMAT1 = FIXTURES / "format1"


def _harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, check=False)


def test_closed_pipe_ends_quietly() -> None:
    """`show big.json | head -1`: the reader leaves early; no BrokenPipeError traceback."""
    shown = subprocess.run(
        f"{sys.executable} -m harness show {FORMAT1 / 'default.json'} | head -1",
        shell=True, capture_output=True, text=True, check=False)
    assert shown.stdout == "# default\n"
    assert "Traceback" not in shown.stderr and "BrokenPipe" not in shown.stderr


def test_ascii_only_output_escapes_instead_of_failing(tmp_path: Path) -> None:
    """With PYTHONIOENCODING=ascii, non-ASCII names are escaped; the run succeeds."""
    scenario = tmp_path / "s.toml"
    scenario.write_text('description = "Zürich → Genève"\n[servers]\ncount = 3\n'
                        'name = "sérveur-{i}"\n[keys]\ncount = 100\n'
                        '[measure]\nlayouts = []\nmetrics = ["balance"]\n', encoding="utf-8")
    done = _harness("run", str(scenario), "--out", str(tmp_path / "out"), "--no-progress",
                    env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert done.returncode == 0, done.stderr
    assert "\\xfc" in done.stdout or "\\u2192" in done.stdout
    assert "Genève" in (tmp_path / "out" / "s.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("out", "message"), [
    ("file", "is not a directory"),
    ("/proc/ring-harness", "under /proc"),
    ("/sys/ring-harness", "under /sys"),
])
def test_unusable_out_is_refused_before_work(
    out: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """--out that is a file, or under /proc or /sys: one line, exit 2, before any work."""
    if out == "file":
        (tmp_path / "file").write_text("x")
        out = str(tmp_path / "file")
    assert main(["run", "--out", out]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_300_character_name_is_refused(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A name too long for a file name is refused at validation, naming the field."""
    scenario = tmp_path / "s.toml"
    scenario.write_text(f'name = "{"n" * 300}"\n[servers]\ncount = 3\n')
    assert main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 2
    assert "name must be at most 200 bytes" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_reproduce_on_results_of_the_wrong_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """reproduce --no-run over a result that is not a result: one line, exit 2, no report."""
    folder = tmp_path / "reproduce"
    shutil.copytree(FORMAT1 / "reproduce", folder)
    (folder / "b_doubling.json").write_text(json.dumps({"format": "ring-harness-result",
                                                        "format_version": 1}))
    assert main(["reproduce", "--no-run", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "b_doubling.json" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "REPRODUCTION.md").exists()
