"""What every peer is: the `Peer` protocol.

A peer is a third-party ring library measured as it is, beside our layouts:
built from the same servers, asked for keys (not key hashes, since it hashes
keys itself), and sized by its own structures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol, Self

from harness.generator import Server


class Peer(Protocol):
    """A third-party ring, wrapped so the runner can time and size it like a layout."""

    #: registry name, e.g. "uhashring-ketama"
    name: ClassVar[str]

    @classmethod
    def check_servers(cls, servers: Sequence[Server]) -> str | None:
        """What the servers must be, if these are refused (checked before any work)."""
        ...

    @classmethod
    def build(cls, servers: Sequence[Server]) -> Self: ...

    @property
    def entries(self) -> int:
        """Number of distinct points on the peer's ring."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes of the peer's own structures (see `harness.peers.sizing`)."""
        ...

    def lookup_key(self, key: str) -> int:
        """Index, in the servers it was built from, of the server owning `key`."""
        ...
