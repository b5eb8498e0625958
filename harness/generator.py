"""Ring generation: servers x points per unit weight x naming scheme x hash -> Ring.

Server `s` with weight `w` gets `max(1, round(points_per_weight * w))` points,
named by `point_name.format(server=s, j=j)` for j = 0, 1, ... (default
"{server}:{j}", as "Consistent Hashing from Scratch, and Why Cloudflare
Deleted 90% of It" and Semicolony's "Consistent hashing simulator" name
them) and hashed with the chosen hash. Collisions follow `Ring.from_points`:
the lowest server index wins. This is the `points` construction
(`harness.constructions.points`); `server_list_problem` is the one place the
server-count rule lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.errors import HarnessError
from harness.hashing import get_hash
from harness.ring import MAX_SERVERS, Ring

DEFAULT_POINT_NAME = "{server}:{j}"


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


def points_for(weight: float, points_per_weight: int) -> int:
    """Points a server of this weight gets (at least one, so every server is on the ring)."""
    return max(1, round(points_per_weight * weight))


def generate_ring(
    servers: Sequence[Server],
    points_per_weight: int,
    hash_name: str = "blake2b-32",
    point_name: str = DEFAULT_POINT_NAME,
) -> Ring:
    """Hash every point of every server and build the sorted, de-duplicated ring."""
    hash_function = get_hash(hash_name)
    problem = server_list_problem(servers)
    if problem:
        raise HarnessError(f"a ring needs {problem}")
    if points_per_weight < 1:
        raise HarnessError(f"points_per_weight must be >= 1 (got {points_per_weight})")
    counts = [points_for(s.weight, points_per_weight) for s in servers]
    positions = np.empty(sum(counts), dtype=hash_function.dtype)
    start = 0
    # One server at a time: the encoded names of all points would outweigh the ring itself.
    for server, count in zip(servers, counts, strict=True):
        names = [point_name.format(server=server.name, j=j).encode() for j in range(count)]
        positions[start : start + count] = hash_function.many(names)
        start += count
    owners = np.repeat(np.arange(len(servers), dtype=np.uint16), counts)
    return Ring.from_points(
        positions, owners, bits=hash_function.bits, servers=tuple(s.name for s in servers)
    )


def numbered_servers(count: int, name: str = "server-{i}", weight: float = 1.0) -> list[Server]:
    """`count` servers named by `name.format(i=i)`, all of one weight."""
    return [Server(name.format(i=i), weight) for i in range(count)]
