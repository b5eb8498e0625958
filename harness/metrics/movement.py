"""Movement: which keys change owner when one server is added or removed.

Owners are compared by server name, since removing a server shifts the
indexes of the servers after it. On the ring every moved key must move to the
added server, or from the removed one; `ring_only_changed_server` checks it.
With `hash mod N`, key h goes to the server at index h mod N of the list.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Movement:
    operation: str
    server: str
    servers_before: int
    servers_after: int
    keys: int
    ring_moved: int
    ring_moved_fraction: float
    mod_n_moved: int
    mod_n_moved_fraction: float
    #: the changed server's exact share of the ring (after an add, before a remove)
    changed_server_share: float
    ring_only_changed_server: bool

    def as_record(self) -> dict[str, object]:
        return asdict(self)


def names_of(owners: npt.NDArray[np.uint16], servers: tuple[str, ...]) -> npt.NDArray[np.str_]:
    return np.asarray(servers)[owners]


def measure_movement(
    operation: str,
    server: str,
    key_hashes: npt.NDArray[np.unsignedinteger],
    owners_before: npt.NDArray[np.str_],
    owners_after: npt.NDArray[np.str_],
    servers_before: tuple[str, ...],
    servers_after: tuple[str, ...],
    changed_server_share: float,
) -> Movement:
    """Compare owners (by name) before and after one add or remove, on the ring and mod N."""
    moved = owners_before != owners_after
    if operation == "add":
        only_changed = bool(np.all(owners_after[moved] == server))
    else:
        only_changed = bool(np.all(owners_before[moved] == server))
    mod_before = np.asarray(servers_before)[key_hashes % len(servers_before)]
    mod_after = np.asarray(servers_after)[key_hashes % len(servers_after)]
    mod_moved = int(np.count_nonzero(mod_before != mod_after))
    keys = len(key_hashes)
    ring_moved = int(np.count_nonzero(moved))
    return Movement(
        operation=operation,
        server=server,
        servers_before=len(servers_before),
        servers_after=len(servers_after),
        keys=keys,
        ring_moved=ring_moved,
        ring_moved_fraction=ring_moved / keys,
        mod_n_moved=mod_moved,
        mod_n_moved_fraction=mod_moved / keys,
        changed_server_share=changed_server_share,
        ring_only_changed_server=only_changed,
    )
