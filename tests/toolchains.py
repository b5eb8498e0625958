"""Tools the live tests of foreign peers need (a C compiler, libmemcached, node, go, java):
a test skips, with the reason, where one is missing, except under CI (the `CI` variable
set), where .ci/install-peers.sh installed them all and a missing one is a failure."""

from __future__ import annotations

import os
import shutil
import subprocess
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


ROOT = Path(__file__).resolve().parents[1]
#: where `bash peers/build.sh` puts the adapters by default, and where shipped scenarios
#: that name them (scenarios/foreign-overhead.toml) look, from the repository's root
SHIPPED_ADAPTERS = ROOT / "build" / "peers"


def shipped_adapters() -> Path:
    """build/peers with the C adapters in it, built there by peers/build.sh if missing
    (skipped locally, failed in CI, without a C compiler or libmemcached-dev)."""
    require_program("cc")
    require_file("/usr/include/libmemcached/memcached.h", "libmemcached-dev")
    if not all((SHIPPED_ADAPTERS / name).exists()
               for name in ("libmemcached_ketama.so", "abi_pipe")):
        subprocess.run(["bash", str(ROOT / "peers" / "build.sh"), str(SHIPPED_ADAPTERS)],
                       check=True, capture_output=True)
    return SHIPPED_ADAPTERS
