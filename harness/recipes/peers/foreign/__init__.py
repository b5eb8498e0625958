"""Foreign peers: ring implementations in any language, measured beside ours.

Two doors: a shared library behind the C ABI of `harness/core/native/abi/ring_peer.h`
(`library_peer`, in our process), and any command that speaks the process protocol on
its stdin and stdout (`protocol`, the codec; `process`, the driver; `process_peer`).
A scenario names either in `measure.peers` (`spec`).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.servers import Server
from harness.recipes.peers.foreign.base import ForeignPeer
from harness.recipes.peers.foreign.library_peer import LibraryPeer
from harness.recipes.peers.foreign.process_peer import ProcessPeer
from harness.recipes.peers.foreign.spec import ForeignPeerSpec, parse_foreign_peer


def open_foreign_peer(spec: ForeignPeerSpec, servers: Sequence[Server]) -> ForeignPeer:
    """The peer built for the servers (a started process, or a loaded library)."""
    if spec.library is not None:
        return LibraryPeer(spec, servers)
    return ProcessPeer(spec, servers)


__all__ = ["ForeignPeer", "ForeignPeerSpec", "LibraryPeer", "ProcessPeer",
           "open_foreign_peer", "parse_foreign_peer"]
