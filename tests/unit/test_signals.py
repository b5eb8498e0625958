"""Signals: SIGTERM is handled like Ctrl-C. The memory child is stopped and reaped, the
run's temporary folder removed, no result written, one line, exit 143 (130 for SIGINT)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCENARIO = """
name = "slow"
[servers]
count = 50
[generator]
points_per_weight = [2000, 2001, 2002, 2003]
[keys]
count = 300000
[measure]
layouts = ["tuples", "numpy-packed"]
metrics = ["memory"]
"""


def _children(pid: int) -> list[int]:
    """PIDs whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize(("signum", "code", "word"), [(signal.SIGTERM, 143, "terminated"),
                                                      (signal.SIGINT, 130, "interrupted")])
def test_signal_stops_children_and_cleans_up(
    signum: int, code: int, word: str, tmp_path: Path,
) -> None:
    """Sent while a memory child runs: the child goes too, and nothing is left behind."""
    scenario = tmp_path / "slow.toml"
    scenario.write_text(SCENARIO)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    run = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(scenario), "--out", str(tmp_path / "out"),
         "--no-progress"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    children: list[int] = []
    while not children and time.monotonic() < deadline and run.poll() is None:
        children = _children(run.pid)
        time.sleep(0.05)
    assert children, "the run never started its memory child"
    run.send_signal(signum)
    _, err = run.communicate(timeout=60)
    assert run.returncode == code
    assert err.strip().splitlines() == [
        f"{word}; no result file was written for scenario 'slow'"]
    time.sleep(0.2)
    assert not any(_running(child) for child in children)
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / "out").exists()


def test_children_die_with_a_killed_run(tmp_path: Path) -> None:
    """Even SIGKILL of the run (which it cannot handle) takes its memory child with it."""
    scenario = tmp_path / "slow.toml"
    scenario.write_text(SCENARIO)
    run = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(scenario), "--out", str(tmp_path / "out"),
         "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    children: list[int] = []
    while not children and time.monotonic() < deadline and run.poll() is None:
        children = _children(run.pid)
        time.sleep(0.05)
    assert children
    run.kill()
    run.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_running(child) for child in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(child) for child in children)


LATE = """
import os, signal, sys, time
from harness.cli import main
code = main(["run", sys.argv[1], "--out", sys.argv[2], "--no-history", "--no-progress"])
assert code == 0, code
os.kill(os.getpid(), signal.SIGTERM)  # as the run is exiting: main has returned
time.sleep(30)
"""


def test_a_sigterm_as_the_run_exits_says_so(tmp_path: Path) -> None:
    """A SIGTERM that lands after the command returned, before the process ended, once
    killed it by the default action with no message (3 tries in 6): now one line saying
    the files written are complete, and exit 143."""
    scenario = tmp_path / "late.toml"
    scenario.write_text("[servers]\ncount = 3\n[keys]\ncount = 100\n[measure]\nrepeats = 1\n"
                        "scalar_keys = 10\nmetrics = ['balance']\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", LATE, str(scenario), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 143, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("terminated as it was exiting; 3 file(s) were written before "
                           "that, complete:")
    assert (tmp_path / "out" / "late.json").is_file()


GATE_LATE = """
import os, signal, time
from harness.cli.gate import _stopped_by_signals
with _stopped_by_signals():
    pass  # the gate's work, done: its verdict given
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(30)
"""


def test_a_sigterm_as_the_gate_exits_says_so() -> None:
    """ring-bench-gate, like run: a SIGTERM after its work is one line and exit 143, not
    the default action's silent end."""
    done = subprocess.run([sys.executable, "-c", GATE_LATE], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().endswith("terminated as it was exiting, after its verdict")
