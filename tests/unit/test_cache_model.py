"""The LRU cache model: cext/lru.c replays request streams exactly as the OrderedDict
reference does (hypothesis streams with heavy eviction churn, and one large zipf stream),
the reference is LRU and not FIFO, and bad inputs are refused before any work."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import cache_model
from harness.core.cache_model import lru_misses, lru_misses_reference
from harness.core.errors import HarnessError
from harness.metrics.migration.metric import zipf_stream

pytestmark = pytest.mark.c_core

# A handful of distinct keys per stream keeps caches of 1 to 5 objects evicting all the
# time; the ends of the uint32 range are drawn often, as the C table keys are uint32.
keys_st = st.one_of(st.integers(0, 7), st.sampled_from([2**32 - 2, 2**32 - 1]))


@st.composite
def streams(draw: st.DrawFn) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint32], int, int]:
    """(servers, keys, n_servers, capacity): up to 300 requests over 1 to 4 servers."""
    n_servers = draw(st.integers(1, 4))
    capacity = draw(st.integers(1, 5))
    requests = draw(st.lists(st.tuples(st.integers(0, n_servers - 1), keys_st), max_size=300))
    servers = np.array([s for s, _ in requests], dtype=np.uint16)
    keys = np.array([k for _, k in requests], dtype=np.uint32)
    return servers, keys, n_servers, capacity


def _both(servers: Any, keys: Any, n_servers: int, capacity: int) -> list[bool]:
    """The C replay's misses, after checking they equal the reference's."""
    c_missed = lru_misses(servers, keys, n_servers, capacity)
    assert c_missed.dtype == np.bool_
    assert c_missed.tolist() == lru_misses_reference(servers, keys, n_servers, capacity).tolist()
    return list(c_missed.tolist())


@settings(max_examples=400, deadline=None)
@given(stream=streams())
def test_c_replay_equals_reference(
    stream: tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint32], int, int],
) -> None:
    """Any small stream, 1 to 4 servers, capacities 1 to 5: C misses exactly where Python does."""
    _both(*stream)


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(keys_st, max_size=200))
def test_capacity_one_misses_on_every_change_of_key(keys: list[int]) -> None:
    """With one object per cache a request hits exactly when it repeats the previous key."""
    servers = np.zeros(len(keys), dtype=np.uint16)
    missed = _both(servers, np.array(keys, dtype=np.uint32), 1, 1)
    assert missed == [i == 0 or keys[i] != keys[i - 1] for i in range(len(keys))]


def test_least_recently_used_is_evicted_not_first_inserted() -> None:
    """a b a c b with room for 2: c evicts b (used longest ago), not a (inserted first)."""
    a, b, c = 10, 20, 30
    missed = _both(np.zeros(5, dtype=np.uint16), np.array([a, b, a, c, b], dtype=np.uint32), 1, 2)
    assert missed == [True, True, False, True, True]
    assert _both(np.zeros(2, dtype=np.uint16), np.array([a, a], dtype=np.uint32), 1, 2) == [
        True, False
    ]


def test_servers_cache_apart() -> None:
    """The same key on two servers is two objects: each server misses it once."""
    servers = np.array([0, 1, 0, 1, 3], dtype=np.uint16)
    keys = np.array([5, 5, 5, 5, 5], dtype=np.uint32)
    assert _both(servers, keys, 4, 1) == [True, True, False, False, True]


def test_large_zipf_stream_equals_reference() -> None:
    """200,000 zipf requests over 20 servers of 300 objects (table far past its first
    evictions and backward shifts): C equals the reference, and misses are neither all
    nor none."""
    rng = np.random.default_rng(12)
    keys = (rng.zipf(1.2, 200_000) % 1_000_003).astype(np.uint32)
    servers = (keys.astype(np.uint64) * 2654435761 % 2**32 % 20).astype(np.uint16)
    missed = _both(servers, keys, 20, 300)
    assert 0.05 < np.mean(missed) < 0.95


@pytest.mark.slow
def test_ten_million_zipf_requests_miss_as_measured() -> None:
    """The stream of the harness.core.cache_model docstring (10M requests, 1M keys, 100 servers
    of 10,000 objects) misses at the ratio quoted there. Its speed is a benchmark's
    (benchmarks/lru_replay.py), not this test's."""
    keys = zipf_stream(1_000_000, 1.0, 10_000_000, seed=1)
    servers = (keys.astype(np.uint64) * 2654435761 % 2**32 % 100).astype(np.uint16)
    missed = lru_misses(servers, keys, 100, 10_000)
    assert np.mean(missed) == pytest.approx(0.076, abs=0.002)


def test_empty_stream() -> None:
    """No requests: an empty boolean array from both."""
    assert _both(np.array([], dtype=np.uint16), np.array([], dtype=np.uint32), 3, 2) == []


def test_edge_servers_and_keys() -> None:
    """Server 65,535 of 65,536 and keys 0 and 2**32 - 1 are cached like any other."""
    servers = np.array([65_535, 65_535, 0, 65_535], dtype=np.uint16)
    keys = np.array([2**32 - 1, 0, 2**32 - 1, 2**32 - 1], dtype=np.uint32)
    assert _both(servers, keys, 2**16, 2) == [True, True, True, False]


def test_other_dtypes_and_misaligned_views() -> None:
    """int64 inputs, plain lists and views at an odd byte offset give the uint16/uint32 answer."""
    servers = np.array([0, 1, 0, 0, 1, 0], dtype=np.uint16)
    keys = np.array([1, 1, 2, 3, 1, 1], dtype=np.uint32)
    expected = _both(servers, keys, 2, 2)
    assert _both(servers.astype(np.int64), keys.astype(np.int64), 2, 2) == expected
    assert _both(servers.tolist(), keys.tolist(), 2, 2) == expected
    buffer = np.zeros(keys.nbytes + 1, dtype=np.uint8)
    misaligned = buffer[1:].view(np.uint32)
    misaligned[:] = keys
    assert not misaligned.flags.aligned
    assert _both(servers, misaligned, 2, 2) == expected


u16, u32 = np.uint16, np.uint32
BAD_INPUTS: dict[str, tuple[Any, Any, int, Any, list[str]]] = {
    "lengths differ": (np.zeros(3, u16), np.zeros(2, u32), 1, 1,
                       ["one entry per request", "got 3 servers, 2 keys"]),
    "server out of range": (np.array([0, 4, 1], u16), np.zeros(3, u32), 4, 1,
                            ["servers must be in [0, n_servers = 4)", "got 4 at request 1"]),
    "negative server": (np.array([0, -1]), np.zeros(2, u32), 4, 1,
                        ["servers must be in [0, n_servers = 4)", "got -1 at request 1"]),
    "key too large": (np.zeros(2, u16), np.array([0, 2**32]), 1, 1,
                      ["keys must be in [0, 2**32 = 4294967296)", "got 4294967296 at request 1"]),
    "float keys": (np.zeros(2, u16), np.array([0.5, 1.0]), 1, 1,
                   ["keys must be a 1-D array of integers", "got a 1-D array of float64"]),
    "2-D servers": (np.zeros((2, 2), u16), np.zeros(4, u32), 1, 1,
                    ["servers must be a 1-D array of integers", "got a 2-D array of uint16"]),
    "capacity 0": (np.zeros(1, u16), np.zeros(1, u32), 1, 0,
                   ["capacity must be at least 1 object", "got 0"]),
    "fractional capacity": (np.zeros(1, u16), np.zeros(1, u32), 1, 2.5,
                            ["capacity must be an integer", "got 2.5, float"]),
    "no servers": (np.zeros(0, u16), np.zeros(0, u32), 0, 1,
                   ["n_servers must be 1 to 65536", "got 0"]),
    "too many servers": (np.zeros(0, u16), np.zeros(0, u32), 2**16 + 1, 1,
                         ["n_servers must be 1 to 65536", "got 65537"]),
    "slots past uint32": (np.zeros(1, u16), np.zeros(1, u32), 2, 2**31,
                          ["capacity * n_servers must be at most 4,294,967,294 objects",
                           "got 2,147,483,648 * 2 = 4,294,967,296"]),
}


@pytest.mark.parametrize("replay", [lru_misses, lru_misses_reference])
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_inputs_are_refused(replay: Any, case: str) -> None:
    """Each bad input gets one HarnessError naming the field, the bound and what was given."""
    servers, keys, n_servers, capacity, fragments = BAD_INPUTS[case]
    with pytest.raises(HarnessError) as raised:
        replay(servers, keys, n_servers, capacity)
    for fragment in fragments:
        assert fragment in str(raised.value)


def test_caches_larger_than_available_memory_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Caches needing more bytes than the machine has available are refused before allocating."""
    monkeypatch.setattr(cache_model, "available_memory_bytes", lambda: 1_000_000)
    with pytest.raises(HarnessError, match=r"100 caches of 10,000 objects need [\d,]+ bytes; "
                                           r"this machine has 1,000,000 available"):
        lru_misses(np.zeros(1, u16), np.zeros(1, u32), 100, 10_000)
