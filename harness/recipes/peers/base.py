"""What every peer is: the `Peer` protocol.

A peer is a third-party ring library measured as it is, beside our layouts:
built from the same servers, asked for keys (not key hashes, since it hashes
keys itself), and sized by its own structures.

Each peer also says which of our recipes it should route like (`agrees_with`:
an algorithm name and its parameters, or None when none of ours can), and
whether that agreement is claimed to be exact (`exact`). The comparison
(`harness.metrics.comparison.metric`) reports the fraction of keys routed alike;
where `exact` is claimed the tests assert that fraction is 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, Self, runtime_checkable

from harness.core.servers import Server


class Peer(Protocol):
    """A third-party ring, wrapped so the runner can time and size it like a layout."""

    #: registry name, e.g. "uhashring-ketama"
    name: ClassVar[str]
    #: our recipe it should route like: {"algorithm": name, **params}; None if none of ours
    agrees_with: ClassVar[dict[str, Any] | None]
    #: whether that agreement is claimed to be exact (every key to the same server)
    exact: ClassVar[bool]
    #: why the agreement is not exact, or why no recipe of ours matches ("" when exact)
    agreement_note: ClassVar[str]
    #: the Python package it wraps, (module imported, requirement pip installs): a test
    #: extra, not a dependency, so `run` checks it is importable before any work
    package: ClassVar[tuple[str, str]]

    @classmethod
    def check_servers(cls, servers: Sequence[Server]) -> str | None:
        """What the servers must be, if these are refused (checked before any work)."""
        ...

    @classmethod
    def build(cls, servers: Sequence[Server]) -> Self: ...

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server]) -> float:
        """Bytes it holds once built for `servers`, an upper bound known before it is built
        (`harness.recipes.peers.sizing`; tests/live/test_peer_estimates.py checks each)."""
        ...

    @property
    def entries(self) -> int:
        """Number of distinct points on the peer's ring."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes of the peer's own structures (see `harness.recipes.peers.sizing`)."""
        ...

    def lookup_key(self, key: str) -> int:
        """Index, in the servers it was built from, of the server owning `key`."""
        ...


@runtime_checkable
class PrehashedPeer(Protocol):
    """A peer whose library takes key hashes, not keys (jump.hash): `lookup_key` hashes the
    key the way our matching recipe does and then calls the library; `lookup_hash` is the
    library call alone, so that it can be timed on its own."""

    def hash_key(self, key: str) -> int: ...

    def lookup_hash(self, key_hash: int) -> int: ...
