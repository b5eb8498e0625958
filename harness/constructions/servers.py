"""The server-list check every construction shares (the rule: generator.server_list_problem)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import HarnessError
from harness.generator import Server, server_list_problem


def require_servers(construction: str, servers: Sequence[Server]) -> None:
    """Refuse server lists a ring with uint16 owners cannot hold."""
    problem = server_list_problem(servers)
    if problem:
        raise HarnessError(f"{construction}: a ring needs {problem}")
