"""Shared fixtures: small scenario files written into a temporary folder.

Every `run` the tests make keeps its history entry in a temporary folder, not in the
checkout's runs/history: RING_HARNESS_HISTORY is set before the harness is imported.
Likewise the bucketed layout's tuning cache (RING_HARNESS_TUNING_CACHE), so the tests
neither read a tuning measured outside them nor leave one in the user's cache.

The shipped adapters are brought up to date in build/peers (ignored by git) before the
first test, where a C compiler is found, for the tests that run a shipped scenario naming
one (scenarios/foreign-overhead.toml); reading that scenario needs none of them.

A test needing an optional tool (a live server, a browser, valgrind, a peer's toolchain)
says so with `pytest.mark.tools(...)` or tests/toolchains.py: skipped, naming the tool and
its install command, where it is missing, and failed instead under
RING_HARNESS_REQUIRE_TOOLS (which CI's full run sets).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

#: the session's own folders, removed when it ends (a variable set outside is left alone)
_OWN_FOLDERS: list[str] = []
for _variable, _prefix in (("RING_HARNESS_HISTORY", "ring-harness-test-history-"),
                           ("RING_HARNESS_TUNING_CACHE", "ring-harness-test-tuning-"),
                           ("RING_HARNESS_TASKS", "ring-harness-test-tasks-")):
    if not os.environ.get(_variable):
        os.environ[_variable] = tempfile.mkdtemp(prefix=_prefix)
        _OWN_FOLDERS.append(os.environ[_variable])

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "tools(*names): the optional tools of harness.core.tools the test needs; "
                   "skipped where one is missing (failed under RING_HARNESS_REQUIRE_TOOLS)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    from tests.toolchains import require_tool  # after the variables above are set

    for marker in item.iter_markers("tools"):
        for name in marker.args:
            require_tool(name)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Nothing left in TMPDIR by the session's own history and tuning folders."""
    for folder in _OWN_FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Build the shipped adapters once (peers/run.sh skips what is up to date, and each
    adapter whose toolchain is missing); the tests needing one say so if it is absent."""
    if shutil.which("cc") and shutil.which("bash"):
        subprocess.run(["bash", str(ROOT / "peers" / "run.sh"), "build"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


SMALL_SCENARIO = """
name = "small"
description = "a small end-to-end scenario"

[servers]
count = 10

[generator]
hash = "blake2b-32"
points_per_weight = [4, 40]

[keys]
count = 5000

[measure]
repeats = 2
scalar_keys = 500

[[operations]]
kind = "remove"
server = "server-9"

[[operations]]
kind = "add"
server = "server-10"
"""


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
