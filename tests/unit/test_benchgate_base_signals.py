"""SIGTERM and SIGINT while `ring-bench-gate --against` builds its base: the gate (a real
process) exits 143 or 130 with one line, and leaves no compiler running, no half-built base
in the cache and no temporary folder. The base's setup.py builds a C extension through
setuptools with CC pointing at a script that records its pid and sleeps: a compiler that
never finishes, started by setuptools as the real build starts cc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.apps.benchgate.ab_base import REQUIRED_FILES

#: the fake compiler: answers --version at once (the cache key asks), sleeps on a compile
SLOW_CC = """#!/bin/sh
case "$*" in *--version*) echo "slowcc 1.0"; exit 0;; esac
echo $$ >> "{pids}"
exec sleep 300
"""
SETUP = """from setuptools import Extension, setup
setup(name="base", ext_modules=[Extension("one", ["one.c"]), Extension("two", ["two.c"])])
"""


def git(folder: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t",
                    *arguments], capture_output=True, check=True)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def mentioning(text: str) -> list[int]:
    """Live processes whose command line holds `text` (the test's folder): the gate's
    compilers, setup.py, workers."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in command and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize(("signum", "status", "word"), [
    (signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_during_the_base_build_stops_everything_and_keeps_nothing(
        signum: int, status: int, word: str, tmp_path: Path) -> None:
    """The compiler started, then the signal: one line, the exit of the signal, no
    compiler or worker left, an empty cache, an empty TMPDIR."""
    repo, cache, scratch = tmp_path / "repo", tmp_path / "cache", tmp_path / "tmp"
    pids, compiler = tmp_path / "compiler.pids", tmp_path / "slowcc"
    compiler.write_text(SLOW_CC.format(pids=pids))
    compiler.chmod(0o755)
    repo.mkdir()
    scratch.mkdir()
    files = {**{name: "" for name in REQUIRED_FILES}, "setup.py": SETUP,
             "one.c": "int one;\n", "two.c": "int two;\n"}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    environment = {**os.environ, "CC": str(compiler), "RING_BENCH_AB_CACHE": str(cache),
                   "TMPDIR": str(scratch)}
    gate = subprocess.Popen([sys.executable, "-m", "harness.cli.gate", "--against", "HEAD",
                             "--suite", str(repo / "benchmarks")], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (pids.exists() and pids.read_text().strip()):
            assert gate.poll() is None, gate.communicate()
            assert time.monotonic() < deadline, "the base's build never started its compiler"
            time.sleep(0.05)
        gate.send_signal(signum)
        out, err = gate.communicate(timeout=60)
    finally:
        if gate.poll() is None:
            gate.kill()
            gate.wait()
    lines = err.decode().splitlines()
    assert (gate.returncode, len(lines)) == (status, 1), err.decode()
    assert f"gate: {word}: the base's build and both workers stopped" in lines[0]
    assert b"Traceback" not in out + err
    compilers = [int(pid) for pid in pids.read_text().split()]
    time.sleep(0.2)  # the orphaned compilers' reaper collects them
    assert [pid for pid in compilers if alive(pid)] == []
    assert mentioning(str(tmp_path)) == []
    assert (sorted(os.listdir(cache)) if cache.exists() else []) == []
    assert os.listdir(scratch) == []
