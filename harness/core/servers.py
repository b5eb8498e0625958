"""Servers and the changes to a server list: the one home of the server concept.

A `Server` is a named backend with a weight; `server_list_problem` is the one place
the server-count rule lives (owners are uint16 indexes). An `Operation` adds or
removes one server and `servers_after` applies it. A router process keeps one ring
per eligibility set (`eligibility_sets`), each holding the servers with every
capability the set requires (`servers_with`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.errors import HarnessError
from harness.core.ring import MAX_SERVERS

#: the weights a server may have: shares are divided by weights, so a weight far below
#: 1e-6 underflows a server's share per unit weight, and one above 1e12 makes point counts
#: overflow a machine integer
WEIGHT_BOUNDS = (1e-6, 1e12)


@dataclass(frozen=True)
class Server:
    """A named backend; `weight` scales its number of points."""

    name: str
    weight: float = 1.0


def server_list_problem(servers: Sequence[Server]) -> str | None:
    """What a server list must be, if this one cannot be routed to; None if it is fine.

    The one place the server-count rule lives: owners are uint16 indexes.
    """
    if not servers:
        return "at least one server"
    if len(servers) > MAX_SERVERS:
        return f"at most {MAX_SERVERS} servers, since owners are 16-bit (got {len(servers)})"
    return None


def require_servers(construction: str, servers: Sequence[Server]) -> None:
    """Refuse server lists a ring with uint16 owners cannot hold."""
    problem = server_list_problem(servers)
    if problem:
        raise HarnessError(f"{construction}: a ring needs {problem}")


def numbered_servers(count: int, name: str = "server-{i}", weight: float = 1.0) -> list[Server]:
    """`count` servers named by `name.format(i=i)`, all of one weight."""
    return fleet_servers(count, (weight,), name)


def fleet_servers(count: int, pattern: Sequence[float], name: str = "server-{i}") -> list[Server]:
    """`count` servers named by `name.format(i=i)`, weights repeating the pattern."""
    return [Server(name.format(i=i), pattern[i % len(pattern)]) for i in range(count)]


@dataclass(frozen=True)
class Operation:
    """Add or remove one server, to measure which keys move."""

    kind: str
    server: str
    weight: float = 1.0


def servers_after(servers: Sequence[Server], operation: Operation) -> list[Server]:
    """The server list once the operation is applied (an added server goes last)."""
    if operation.kind == "add":
        return [*servers, Server(operation.server, operation.weight)]
    return [s for s in servers if s.name != operation.server]


def eligibility_sets(capabilities: Sequence[tuple[str, ...]],
                     listed: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The listed sets, or every combination of capabilities some server holds, and the
    empty set (every server): each subset of a server's capabilities is a set a request
    could need."""
    if listed:
        return [tuple(sorted(s)) for s in dict.fromkeys(tuple(sorted(s)) for s in listed)]
    found: set[tuple[str, ...]] = {()}
    for held in capabilities:
        ordered = sorted(set(held))
        for size in range(1, len(ordered) + 1):
            found.update(itertools.combinations(ordered, size))
    return sorted(found, key=lambda s: (len(s), s))


def servers_with(servers: Sequence[Server], capabilities: Sequence[tuple[str, ...]],
                 requires: Sequence[str]) -> list[Server]:
    """The servers holding every required capability, in order (`capabilities[i]` is what
    `servers[i]` holds)."""
    need = set(requires)
    return [s for s, held in zip(servers, capabilities, strict=True) if need <= set(held)]
