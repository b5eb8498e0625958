"""Foreign peers: ring implementations in any language, measured beside ours.

Two doors: a shared library behind the C ABI of `harness/core/native/abi/ring_peer.h`
(`library_peer`, loaded in a supervised worker process), and any command that speaks the
process protocol on its stdin and stdout (`protocol`, the codec; `process`, the driver;
`process_peer`). A scenario names either in `measure.peers` (`spec`); `DOORS` is how
every table names each door, by the peer's kind.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.servers import Server
from harness.recipes.peers.foreign.base import ForeignPeer
from harness.recipes.peers.foreign.library_peer import LibraryPeer
from harness.recipes.peers.foreign.process_peer import ProcessPeer
from harness.recipes.peers.foreign.spec import ForeignPeerSpec, parse_foreign_peer

#: each door's label, by a spec's `kind`: the one the Foreign peers and clients tables show,
#: owned by the class that runs it
DOORS = {"library": LibraryPeer.DOOR, "command": ProcessPeer.DOOR}


def open_foreign_peer(spec: ForeignPeerSpec, servers: Sequence[Server]) -> ForeignPeer:
    """The peer built for the servers (a started process, or a loaded library)."""
    if spec.library is not None:
        return LibraryPeer(spec, servers)
    return ProcessPeer(spec, servers)


__all__ = ["DOORS", "ForeignPeer", "ForeignPeerSpec", "LibraryPeer", "ProcessPeer",
           "open_foreign_peer", "parse_foreign_peer"]
