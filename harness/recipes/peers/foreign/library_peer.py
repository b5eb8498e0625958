"""A foreign peer in our process: a shared library behind the C ABI (`ring_peer.h`).

It is measured as a layout is: its mallocs are in our process, so memray sizes it in the
memory metric's fresh process; its batch route is timed in the same interleaved rounds
as our forms.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native.foreign import ForeignLibrary
from harness.core.servers import Server
from harness.recipes.peers.foreign.base import Batch
from harness.recipes.peers.foreign.protocol import packed_keys
from harness.recipes.peers.foreign.spec import ForeignPeerSpec


class LibraryPeer:
    """A ring a shared library built, called through cffi in ABI mode."""

    def __init__(self, spec: ForeignPeerSpec, servers: Sequence[Server]) -> None:
        assert spec.library is not None
        self.spec, self._servers = spec, len(servers)
        try:
            library = ForeignLibrary.open(spec.library)
            self._has_lookup = library.has_lookup
            self._ring = library.build([s.name for s in servers],
                                       [float(s.weight) for s in servers], spec.params)
        except HarnessError as exc:
            raise HarnessError(f"peer {spec.name!r}: {exc}") from None
        self.identity = spec.library

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def entries(self) -> int:
        return max(0, self._ring.entries)

    @property
    def nbytes(self) -> int:
        return max(0, self._ring.nbytes)

    def route_packed(self, blob: bytes,
                     offsets: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        try:
            return self._checked(self._ring.route(blob, offsets))
        except HarnessError as exc:
            raise HarnessError(f"peer {self.name!r}: {exc}") from None

    def _checked(self, owners: npt.NDArray[np.uint16]) -> npt.NDArray[np.uint16]:
        if len(owners) and int(owners.max()) >= self._servers:
            at = int(np.argmax(owners >= self._servers))
            raise HarnessError(f"routed key {at} to owner "
                               f"{int(owners[at])}, out of range for {self._servers} servers")
        return owners

    def prepare(self, blob: bytes, offsets: npt.NDArray[np.uint64],
                hashes: npt.NDArray[np.uint64] | None = None) -> Batch:
        return Batch(blob, offsets, hashes=hashes)

    def route_prepared(self, batch: Batch) -> npt.NDArray[np.uint16]:
        if batch.hashes is None:
            return self.route_packed(batch.blob, batch.offsets)
        if not self._has_lookup:
            raise HarnessError(f"peer {self.name!r}: is given key hashes (input = "
                               "'hashes') but exports no ring_peer_lookup")
        try:
            return self._checked(self._ring.lookup(batch.hashes))
        except HarnessError as exc:
            raise HarnessError(f"peer {self.name!r}: {exc}") from None

    def route_many(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return self.route_packed(*packed_keys(keys))

    def lookup_key(self, key: str) -> int:
        return int(self.route_many([key.encode()])[0])

    def close(self) -> None:
        """The library frees its ring when this peer is collected (cffi's gc)."""
