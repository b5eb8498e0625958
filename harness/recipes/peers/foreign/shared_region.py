"""The region a protocol-2 peer shares with us: a memfd both processes map.

A batch written here once is read by the peer in place, so a round's request is a few
bytes instead of the keys (2.5 MB for 100,000 keys: 3.9 ns a key for us to write into a
pipe, and as much again for the kernel to copy out for the peer). The peer inherits the
descriptor at its start; the file is sealed against shrinking, because a peer that cut it
short would make our next read of the mapping a SIGBUS instead of an error line.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from harness.recipes.peers.foreign.protocol import SharedLookup

if TYPE_CHECKING:
    from harness.recipes.peers.foreign.base import Batch

#: the region grows by whole pages, and by at least a quarter, so that growing is rare
_PAGE = mmap.PAGESIZE


class SharedRegion:
    """A memfd and our mapping of it; `fd` is what the peer inherits."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("ring-peer-batch", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        self.size = 0
        self._map: mmap.mmap | None = None

    def fit(self, size: int) -> bool:
        """Make the region hold at least `size` bytes; True when it grew (the peer must
        then be told its new size, SHARE, before it reads the batch)."""
        if size <= self.size:
            return False
        grown = max(size, self.size + self.size // 4)
        grown = -(-grown // _PAGE) * _PAGE
        os.ftruncate(self.fd, grown)
        # The old map is not closed here: a view of it may still be alive (numpy holds the
        # buffer); it is unmapped when the last one goes.
        self._map = mmap.mmap(self.fd, grown)
        self.size = grown
        return True

    def view(self, dtype: type[np.generic], at: int, count: int) -> npt.NDArray[np.generic]:
        """`count` items of `dtype` at byte `at` of the region, read and written in place."""
        assert self._map is not None and at + count * np.dtype(dtype).itemsize <= self.size
        return np.frombuffer(self._map, dtype, count, at)

    def write(self, at: int, data: bytes) -> None:
        assert self._map is not None and at + len(data) <= self.size
        self._map[at:at + len(data)] = data

    def load(self, batch: Batch) -> None:
        """Write a batch where its request says it lies: the key hashes of a LOOKUP, or the
        offsets and keys of a ROUTE (the region already fits it)."""
        assert batch.shared is not None
        if isinstance(batch.shared, SharedLookup):
            assert batch.hashes is not None
            self.view(np.uint64, batch.shared.hashes_at, batch.keys)[:] = batch.hashes
        else:
            self.view(np.uint64, batch.shared.offsets_at, batch.keys + 1)[:] = batch.offsets
            self.write(batch.shared.keys_at, batch.blob)

    def close(self) -> None:
        if self._map is not None:
            # A view still alive keeps the map's buffer exported; it then goes with the view.
            with contextlib.suppress(BufferError):
                self._map.close()
            self._map = None
        os.close(self.fd)
