"""`ring-bench-gate` on the base install: its help and flag checks import neither scipy nor
pytest, and a mode whose dependencies are missing says in one line what to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: runs the gate's main with these top-level modules unimportable, as on a base install:
#: a meta path finder ahead of all others refuses them (and their submodules)
BLOCKED_GATE = """
import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
from harness.cli.gate import main
sys.exit(main(sys.argv[1:]))
"""
OPTIONAL = ("scipy", "pytest", "_pytest", "pytest_benchmark")


def _gate(*argv: str, blocked: tuple[str, ...] = OPTIONAL,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKED_GATE.format(blocked=set(blocked)),
                           *argv], capture_output=True, text=True, timeout=120, check=False,
                          cwd=cwd)


def test_help_and_flag_checks_need_no_optional_dependency() -> None:
    """--help exits 0 and a bad flag or a conflict of modes exits 2 with its own message,
    with scipy, pytest and pytest-benchmark unimportable."""
    helped = _gate("--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: ring-bench-gate [-h]")
    refused = _gate("--rounds", "0")
    assert refused.returncode == 2 and "--rounds: expected a whole number" in refused.stderr
    conflict = _gate("results.json", "--against", "HEAD")
    assert conflict.returncode == 2 and "give no results file" in conflict.stderr


def test_a_mode_names_what_to_install(tmp_path: Path) -> None:
    """Judging a results file without scipy, and --against without pytest-benchmark, exit 2
    with one line naming the missing distribution and the extra that has it."""
    judged = _gate("results.json", blocked=("scipy",), cwd=tmp_path)
    assert judged.returncode == 2
    assert judged.stderr == ("ring-bench-gate: judging a results file needs scipy, which the "
                             "base install leaves out: pip install 'ring-harness[test]'\n")
    against = _gate("--against", "HEAD", blocked=("pytest_benchmark",), cwd=tmp_path)
    assert against.returncode == 2
    assert against.stderr.startswith("ring-bench-gate: --against needs pytest-benchmark, ")
    assert not list(tmp_path.iterdir())
