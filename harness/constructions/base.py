"""What every construction is: the `Construction` protocol.

A construction reproduces how a production system builds its ring (point
names, hash, points per server, collision rule) and how it hashes keys, so
that our layouts can be measured on exactly the ring that system routes with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from harness.generator import Server
from harness.ring import Ring


class Construction(Protocol):
    """A production ring recipe: `build_ring` for the servers, `key_hashes` for the keys."""

    #: registry name, e.g. "nginx"
    name: str

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        """The ring this system builds for `servers`, listed in configuration order."""
        ...

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
        """The system's own hash of each key, ready for the ring's lookup convention."""
        ...
