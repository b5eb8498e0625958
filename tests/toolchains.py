"""The optional tools a test needs (a live nginx, a browser, valgrind, a peer's toolchain):
the test skips where one is missing, with a reason that names the tool and the command that
installs it (harness.core.tools, the table `ring-harness doctor` reads too).

Set RING_HARNESS_REQUIRE_TOOLS=1 and a missing tool fails the test instead: CI sets it for
its full run, where .ci/install-peers.sh installed every tool, so that nothing it expects to
test is skipped silently. Its bare-machine run leaves it unset and checks the skips instead.

A test asks with `require_tool(name)`, `require_program(name)` or `require_file(...)` in its
body or fixture, or for a whole test or module with the marker `pytest.mark.tools(name, ...)`
(conftest.py's setup hook asks for each).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.core.tools import TOOLS, tool_problem

#: set (to anything but "" or "0") by .ci/run: a missing tool fails the test
STRICT_VARIABLE = "RING_HARNESS_REQUIRE_TOOLS"
#: how every skip for a missing tool begins, so a skip report can be checked for its tool
SKIP_PREFIX = "needs "
#: programs the harness needs anyway (the README's first line), and what installs them
CORE_PROGRAMS = {"cc": "apt-get install gcc", "bash": "apt-get install bash",
                 "python3": "apt-get install python3"}


def strict() -> bool:
    return os.environ.get(STRICT_VARIABLE, "") not in ("", "0")


def missing(tool: str, problem: str) -> None:
    """Skip, or fail under RING_HARNESS_REQUIRE_TOOLS, naming the tool and its install."""
    reason = f"{SKIP_PREFIX}{tool}: {problem}"
    if strict():
        pytest.fail(f"{reason} ({STRICT_VARIABLE} is set: every tool must be here)")
    pytest.skip(reason)


def require_tool(name: str) -> None:
    """The named tool of harness.core.tools, or a skip (a failure when strict); valgrind
    also needs the C core's counted marker built with its header (the counts metric's own
    check says how)."""
    if (problem := tool_problem(name)) is not None:
        missing(name, problem)
    if name == "valgrind":
        from harness.metrics.callgrind import valgrind_problem

        if (problem := valgrind_problem()) is not None:
            missing(name, problem)


def _tool_of(program: str) -> str | None:
    return next((t.name for t in TOOLS.values() if program in t.programs), None)


def require_program(name: str) -> str:
    """The path of a program on PATH: the whole tool it belongs to is required (javac brings
    the Java peers' jars with it), else a core program such as the C compiler."""
    import shutil

    if (tool := _tool_of(name)) is not None:
        require_tool(tool)
    path = shutil.which(name)
    if path is None:
        missing(name, f"{name} is not found: install it with "
                      f"`{CORE_PROGRAMS.get(name, 'apt-get install ' + name)}`")
    assert path is not None
    return path


def require_file(path: str, what: str, install: str) -> Path:
    """A file that must exist (a module a package manager puts in the checkout)."""
    if not Path(path).exists():
        missing(what, f"{path} is not found: install it with `{install}`")
    return Path(path)


ROOT = Path(__file__).resolve().parents[1]
#: where `bash peers/build.sh` puts the adapters by default, and where shipped scenarios
#: that name them (scenarios/foreign-overhead.toml) look, from the repository's root
SHIPPED_ADAPTERS = ROOT / "build" / "peers"
#: npm hashring 3.2.0, which peers/js/hashring_peer.js wraps
NPM_HASHRING = ROOT / "peers" / "js" / "node_modules" / "hashring"
NPM_HASHRING_INSTALL = "npm install --no-save --prefix peers/js hashring@3.2.0"


def require_npm_hashring() -> Path:
    require_tool("node")
    return require_file(str(NPM_HASHRING), "npm-hashring", NPM_HASHRING_INSTALL)


def shipped_adapters() -> Path:
    """build/peers with the C adapters in it, built there by peers/build.sh if missing
    (skipped, or failed when strict, without a C compiler or libmemcached-dev)."""
    require_program("cc")
    require_tool("libmemcached")
    if not all((SHIPPED_ADAPTERS / name).exists()
               for name in ("libmemcached_ketama.so", "abi_pipe")):
        subprocess.run(["bash", str(ROOT / "peers" / "build.sh"), str(SHIPPED_ADAPTERS)],
                       check=True, capture_output=True)
    return SHIPPED_ADAPTERS
