"""libmemcached 1.1.4's distributions through the shipped C adapter's parameter string
(`mode=weighted`, `mode=spy`, `mode=ketama`), run live: each routes 100,000 keys of 10
"host:port" servers of equal weight and of 100 at 1:2:4 (where the mode takes weights)
exactly like our `libmemcached` construction in that mode; and the spymemcached
compatibility mode is measured against the ring spymemcached 2.12.3 really builds."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import numpy as np
import pytest

from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers.foreign import ForeignPeerSpec, open_foreign_peer
from tests.paths import ROOT
from tests.toolchains import require_program, require_tool

KEYS = [f"key-{i}".encode() for i in range(100_000)]
TEN = [Server(f"10.0.{i}.1:11211") for i in range(10)]
WEIGHTED = [Server(f"10.0.{i}.1:11212", (1, 2, 4)[i % 3]) for i in range(100)]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_program("cc")
    require_tool("libmemcached")
    out = tmp_path_factory.mktemp("peers")
    subprocess.run(["bash", str(ROOT / "peers" / "build.sh"), str(out)], check=True)
    yield str(out / "libmemcached_ketama.so")


def _ours(servers: list[Server], **params: str) -> np.ndarray:
    ring = get_algorithm("ring")
    parsed = ring.parse_params(Fields("test", "r", params))
    return ring.from_params(servers, parsed).route(KEYS)


def _routed(library: str, params: str, servers: list[Server]) -> np.ndarray:
    peer = open_foreign_peer(ForeignPeerSpec("libmemcached", library=library, params=params),
                             servers)
    try:
        return peer.route_many(KEYS)
    finally:
        peer.close()


@pytest.mark.parametrize(("mode", "servers"), [
    ("weighted", TEN), ("weighted", WEIGHTED), ("spy", TEN), ("spy", WEIGHTED),
    ("ketama", TEN), ("ketama", [Server(f"10.0.{i}.1:11212") for i in range(100)]),
])
def test_each_mode_routes_like_our_construction(library: str, mode: str,
                                                servers: list[Server]) -> None:
    """libmemcached in each distribution puts every key where our construction in the same
    mode does (agreement 1.000000)."""
    routed = _routed(library, f"mode={mode}", servers)
    ours = _ours(servers, construction="libmemcached", mode=mode)
    assert np.array_equal(routed, ours)
    if mode == "weighted":
        assert np.array_equal(_routed(library, "", servers), ours)  # the default


def test_spy_mode_is_not_spymemcached_2_12(library: str) -> None:
    """libmemcached's spymemcached mode names points "/host:port-i"; spymemcached 2.12.3
    names them "host:port-i" (our libketama ring, tests/live/test_foreign_adapters.py), so the
    two "compatible" clients agree on about 1/N of the keys: 0.10 at 10 servers."""
    agreement = float(np.mean(_routed(library, "mode=spy", TEN)
                              == _ours(TEN, construction="libketama")))
    assert 0.05 < agreement < 0.15


def test_mode_refusals_are_one_line(library: str) -> None:
    """An unknown mode, and weights under the unweighted mode, are refused at build by the
    adapter and by the construction, each in one line."""
    with pytest.raises(HarnessError, match=r"build failed: params must be empty or "
                                           r"mode=weighted, mode=spy or mode=ketama"):
        _routed(library, "mode=modula", TEN)
    with pytest.raises(HarnessError, match="mode=ketama takes no weights"):
        _routed(library, "mode=ketama", WEIGHTED)
    with pytest.raises(HarnessError, match="all of weight 1 for mode = 'ketama'"):
        get_algorithm("ring").build(WEIGHTED, construction="libmemcached", mode="ketama")
