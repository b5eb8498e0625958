"""The server-list check every construction shares."""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import HarnessError
from harness.generator import Server
from harness.ring import MAX_SERVERS


def require_servers(construction: str, servers: Sequence[Server]) -> None:
    """Refuse server lists a ring with uint16 owners cannot hold."""
    if not servers:
        raise HarnessError(f"{construction}: a ring needs at least one server")
    if len(servers) > MAX_SERVERS:
        raise HarnessError(
            f"{construction}: at most {MAX_SERVERS} servers fit 16-bit owners "
            f"(got {len(servers)})"
        )
