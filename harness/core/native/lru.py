"""Bindings of cext/lru.c: the replay of a request stream through one LRU cache per
server (lru.h), for harness.core.cache_model."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import c_input, ffi, lib, u32_buffer

__all__ = ["lru_replay", "lru_workspace_bytes"]


def lru_workspace_bytes(n_servers: int, capacity: int) -> int:
    """Bytes `lru_replay` allocates for these caches, or 0 if cext/lru.c cannot index them."""
    return int(lib.lru_workspace_bytes(n_servers, capacity))


def lru_replay(
    servers: npt.NDArray[np.uint16], keys: npt.NDArray[np.uint32], n_servers: int, capacity: int
) -> npt.NDArray[np.bool_]:
    """cext/lru.c's replay: True where request i missed. The caller has checked the inputs
    (harness.core.cache_model): the C code trusts every server index."""
    servers = c_input(servers, np.uint16)
    keys = c_input(keys, np.uint32)
    missed = np.empty(len(keys), dtype=np.uint8)
    status = lib.lru_replay(
        ffi.from_buffer("uint16_t[]", servers),
        u32_buffer(keys),
        len(keys),
        n_servers,
        capacity,
        ffi.from_buffer("uint8_t[]", missed, require_writable=True),
    )
    if status != 0:
        raise HarnessError(
            f"LRU replay: could not allocate {lru_workspace_bytes(n_servers, capacity):,} bytes "
            f"for {n_servers} caches of {capacity} objects"
        )
    return missed.view(np.bool_)
