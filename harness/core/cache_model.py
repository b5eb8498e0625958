"""The cache model for a staged migration: one LRU cache per server, and which requests miss.

A request stream (server, object key) is replayed in order; a miss is a fetch from the
origin, so the origin load of a migration stage is the miss count of its requests.

Two implementations of one rule, cross-checked by tests/unit/test_cache_model.py:
- `lru_misses_reference`: plain Python, an OrderedDict per server; the definition.
- `lru_misses`: cext/lru.c, one open-addressing table over every server's objects and
  an intrusive recency list per server, allocated once per replay (29 MB for 100
  servers of 10,000 objects) and nothing per request.

Speed, on one stream: 10M requests drawn zipf (exponent 1) over 1M keys, each key on
one of 100 servers, 10,000 objects per server (miss ratio 7.6%).
measured: 0.3 to 0.5 s for 10M requests on this machine in most runs, up to 1.5 s while
other work loaded its two shared cores (load average 6); `benchmarks/lru_replay.py` times
it (tests/unit/test_cache_model.py checks its miss ratio, not its speed).

Why C rather than a library: every Python LRU pays interpreter work per request.
cachetools.LRUCache (8.0.2) is pure Python: 5.5 to 6 s for the first 1M requests of
that stream, so about a minute for 10M; the OrderedDict reference, whose dict is C but
whose loop is not, takes 2.6 to 3 s per 1M and 26 s for all 10M. functools.lru_cache is C but
memoises one function: it neither reports a miss without a side effect per call nor
holds one cache per server. A replay is one C call over two numpy arrays, so the C
needs no Python object per request.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.machine import available_memory_bytes
from harness.core.native import lru as c_lru

#: servers are uint16 indices
MAX_SERVERS = 2**16
#: cext/lru.c indexes slots with uint32 and reserves UINT32_MAX
MAX_SLOTS = 2**32 - 2


def _checked(
    servers: npt.ArrayLike, keys: npt.ArrayLike, n_servers: int, capacity: int
) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.integer]]:
    """The request arrays, once every input is known to be valid; else a HarnessError."""
    for name, value in (("n_servers", n_servers), ("capacity", capacity)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise HarnessError(
                f"LRU replay: {name} must be an integer (got {value!r}, {type(value).__name__})"
            )
    n_servers, capacity = int(n_servers), int(capacity)
    if not 1 <= n_servers <= MAX_SERVERS:
        raise HarnessError(f"LRU replay: n_servers must be 1 to {MAX_SERVERS} (got {n_servers})")
    if capacity < 1:
        raise HarnessError(f"LRU replay: capacity must be at least 1 object (got {capacity})")
    if capacity * n_servers > MAX_SLOTS:
        raise HarnessError(
            f"LRU replay: capacity * n_servers must be at most {MAX_SLOTS:,} objects "
            f"(got {capacity:,} * {n_servers:,} = {capacity * n_servers:,})"
        )
    server_array = _integers("servers", servers, n_servers, "n_servers")
    key_array = _integers("keys", keys, 2**32, "2**32")
    if len(server_array) != len(key_array):
        raise HarnessError(
            f"LRU replay: servers and keys must have one entry per request "
            f"(got {len(server_array)} servers, {len(key_array)} keys)"
        )
    workspace = c_lru.lru_workspace_bytes(n_servers, capacity)
    available = available_memory_bytes()
    if available is not None and workspace > available:
        raise HarnessError(
            f"LRU replay: {n_servers} caches of {capacity:,} objects need {workspace:,} bytes; "
            f"this machine has {available:,} available"
        )
    return server_array, key_array


def _integers(
    name: str, values: npt.ArrayLike, limit: int, limit_name: str
) -> npt.NDArray[np.integer]:
    """`values` as a 1-D integer array in [0, limit), refused otherwise (never wrapped)."""
    array = np.asarray(values)
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) or array.size == 0):
        raise HarnessError(
            f"LRU replay: {name} must be a 1-D array of integers "
            f"(got a {array.ndim}-D array of {array.dtype})"
        )
    if array.size and (int(array.min()) < 0 or int(array.max()) >= limit):
        bad = int(np.argmax((array < 0) | (array >= limit)))
        raise HarnessError(
            f"LRU replay: {name} must be in [0, {limit_name} = {limit}) "
            f"(got {int(array[bad])} at request {bad})"
        )
    return array


def lru_misses(
    servers: npt.NDArray[np.uint16], keys: npt.NDArray[np.uint32], n_servers: int, capacity: int
) -> npt.NDArray[np.bool_]:
    """Replay requests in order through one LRU cache per server (each holding `capacity`
    objects); request i asks server servers[i] for object keys[i]; True where it missed
    (the object was fetched from the origin and inserted, evicting the least recently
    used object of that server when full)."""
    server_array, key_array = _checked(servers, keys, n_servers, capacity)
    return c_lru.lru_replay(
        server_array.astype(np.uint16, copy=False),
        key_array.astype(np.uint32, copy=False),
        n_servers,
        capacity,
    )


def lru_misses_reference(
    servers: npt.NDArray[np.uint16], keys: npt.NDArray[np.uint32], n_servers: int, capacity: int
) -> npt.NDArray[np.bool_]:
    """`lru_misses` in plain Python, one OrderedDict per server (oldest first)."""
    server_array, key_array = _checked(servers, keys, n_servers, capacity)
    caches: list[OrderedDict[int, None]] = [OrderedDict() for _ in range(n_servers)]
    missed: list[bool] = []
    for server, key in zip(server_array.tolist(), key_array.tolist(), strict=True):
        cache = caches[server]
        if key in cache:
            cache.move_to_end(key)
            missed.append(False)
        else:
            cache[key] = None
            if len(cache) > capacity:
                cache.popitem(last=False)
            missed.append(True)
    return np.array(missed, dtype=np.bool_)
