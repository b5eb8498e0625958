"""Usage lines and hints name the command as the user typed it: `ring-harness` or
`ring-bench-gate` from the console scripts, `PYTHON -m harness` (or `-m harness.cli.gate`)
as a module, for the top level and every subcommand."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from harness.cli import COMMANDS, main

BIN = Path(sys.executable).parent
MODULE_NAME = f"{Path(sys.executable).name} -m harness"


def _script(name: str) -> str:
    """The console script installed beside this interpreter (pip install -e, or tox)."""
    found = shutil.which(name, path=str(BIN))
    if found is None:
        pytest.skip(f"{name} is not installed in {BIN} (pip install -e . installs it)")
    return found


def _run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False,
                          cwd=cwd)


def test_module_spelling() -> None:
    """`python -m harness --help` and a subcommand's help name `python -m harness`."""
    top = _run(sys.executable, "-m", "harness", "--help")
    assert top.returncode == 0 and top.stdout.startswith(f"usage: {MODULE_NAME} [-h]")
    run = _run(sys.executable, "-m", "harness", "run", "--help")
    assert run.stdout.startswith(f"usage: {MODULE_NAME} run [-h]")


def test_console_script_spelling(tmp_path: Path) -> None:
    """`ring-harness --help`, a subcommand's help, a refused flag and a hint in an error
    name `ring-harness`."""
    script = _script("ring-harness")
    assert _run(script, "--help").stdout.startswith("usage: ring-harness [-h]")
    assert _run(script, "compare", "--help").stdout.startswith("usage: ring-harness compare")
    refused = _run(script, "run", "--max-minutes", "0")
    assert refused.returncode == 2 and refused.stderr.startswith("error: ring-harness run: ")
    future = tmp_path / "future.json"
    future.write_text('{"format": "ring-harness-result", "format_version": 99}')
    hint = _run(script, "show", str(future))
    assert hint.returncode == 2 and "re-run its scenario with `ring-harness run`" in hint.stderr


def test_gate_both_spellings() -> None:
    """`ring-bench-gate` and `python -m harness.cli.gate` name themselves in their help and
    their refusals."""
    script = _script("ring-bench-gate")
    assert _run(script, "--help").stdout.startswith("usage: ring-bench-gate [-h]")
    refused = _run(script, "--rounds", "0")
    assert refused.returncode == 2 and refused.stderr.startswith("ring-bench-gate: argument")
    module = f"{Path(sys.executable).name} -m harness.cli.gate"
    helped = _run(sys.executable, "-m", "harness.cli.gate", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith(f"usage: {module} [-h]")
    conflict = _run(sys.executable, "-m", "harness.cli.gate")
    assert conflict.returncode == 2 and conflict.stderr.startswith(f"{module}: expected ")


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("started", ["console script", "module"])
def test_every_subcommand(command: str, started: str, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    """Every subcommand's usage line follows how the process was started (in-process: the
    process's argv[0] and __main__ module set as each way of starting sets them)."""
    entry = types.ModuleType("__main__")
    if started == "module":
        entry.__spec__ = types.SimpleNamespace(name="harness.__main__")  # type: ignore[assignment]
        monkeypatch.setattr(sys, "argv", ["/somewhere/harness/__main__.py"])
        expected = MODULE_NAME
    else:
        entry.__spec__ = None
        monkeypatch.setattr(sys, "argv", [str(BIN / "ring-harness")])
        expected = "ring-harness"
    monkeypatch.setitem(sys.modules, "__main__", entry)
    assert main([command, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: {expected} {command} [-h]")
