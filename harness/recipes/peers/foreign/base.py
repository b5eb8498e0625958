"""What a foreign peer is once started: the `ForeignPeer` protocol, shared by the library
(C ABI) and the process (pipe) peers.

A foreign peer is built for the run's servers and routes keys by name in batches (one
call, or one request, per batch: a per-key call through a pipe would time the pipe's
round trip, not the peer). Owners are checked on the way in: as many as keys, each an
index of a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from harness.recipes.peers.foreign.protocol import SharedLookup, SharedRoute
from harness.recipes.peers.foreign.spec import ForeignPeerSpec


@dataclass(frozen=True)
class Batch:
    """A batch of keys ready to route: packed, and for a process peer encoded once."""

    blob: bytes
    offsets: npt.NDArray[np.uint64]
    #: the ROUTE request's frame (process peers), or b""
    request: bytes = b""
    #: for a peer given key hashes: its recipe's hashes of the keys (LOOKUP), else None
    hashes: npt.NDArray[np.uint64] | None = None
    #: for a peer that takes shared batches: where the batch lies in the region (the
    #: request then names only that)
    shared: SharedRoute | SharedLookup | None = None

    @property
    def keys(self) -> int:
        return len(self.offsets) - 1


class ForeignPeer(Protocol):
    #: how tables name its door: where its code runs (`DOORS`)
    DOOR: ClassVar[str]
    spec: ForeignPeerSpec
    #: what the peer says it is ("libmemcached 1.1.4 ketama"), for the report
    identity: str

    @property
    def name(self) -> str: ...

    @property
    def entries(self) -> int:
        """Points on the peer's ring as it reports them; 0 when it does not know."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes the peer believes its structure holds; 0 when it does not know."""
        ...

    def route_packed(self, blob: bytes,
                     offsets: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        """Owners of the keys held back to back in `blob` (see `protocol.packed_keys`)."""
        ...

    def prepare(self, blob: bytes, offsets: npt.NDArray[np.uint64],
                hashes: npt.NDArray[np.uint64] | None = None) -> Batch:
        """The batch in the form the door takes (a library: as is; a process: the encoded
        request), made once before timing, as the keys are packed once for a library;
        `hashes` for a peer given key hashes (`spec.input == "hashes"`)."""
        ...

    def route_prepared(self, batch: Batch) -> npt.NDArray[np.uint16]: ...

    def route_many(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]: ...

    def lookup_key(self, key: str) -> int: ...

    def close(self) -> None: ...
