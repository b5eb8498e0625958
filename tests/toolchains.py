"""Tools the live tests of foreign peers need (a C compiler, libmemcached, node, go, java):
a test skips, with the reason, where one is missing, except under CI (the `CI` variable
set), where .ci/install-peers.sh installed them all and a missing one is a failure."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

INSTALL = ".ci/install-peers.sh installs it"


def require(present: bool, what: str) -> None:
    """Skip (locally) or fail (in CI) when `what` is missing."""
    if present:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing in CI ({INSTALL})")
    pytest.skip(f"{what} is not installed ({INSTALL})")


def require_program(name: str) -> str:
    path = shutil.which(name)
    require(path is not None, name)
    assert path is not None
    return path


def require_file(path: str, what: str) -> Path:
    require(Path(path).exists(), what)
    return Path(path)
