"""Deep size of plain Python structures: how pure-Python peers are sized.

`sys.getsizeof` counts one object; a ring held in lists, dicts and ints is
mostly the objects those containers point to. Each object is counted once
(by identity), so an int that is both a list item and a dict key costs once,
as it does in memory. Small ints and interned strings that the interpreter
shares anyway are counted too: a slight overcount, the same for every run.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence

from harness.core.servers import Server

_ATOMS = (int, float, str, bytes, bool, type(None))
_SEQUENCES = (list, tuple, set, frozenset)


def _children(obj: object) -> Iterator[object]:
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            yield key
            yield value
    elif isinstance(obj, _SEQUENCES):
        yield from obj


def deep_sizeof(roots: Iterable[object]) -> int:
    """Bytes of `roots` and every container item and dict entry they reach, each counted once."""
    seen: set[int] = set()
    stack = list(roots)
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if not isinstance(obj, (*_ATOMS, *_SEQUENCES, Mapping)):
            raise TypeError(f"deep_sizeof sizes plain data only (got {type(obj).__name__})")
        total += sys.getsizeof(obj)
        stack.extend(_children(obj))
    return total


#: bytes of one point of a Python peer's ring (a 32-bit or 128-bit int key, its dict slot
#: and its place in the sorted list): uhashring measured 96-102 bytes a point (tracemalloc,
#: 100 to 1,000 servers), its ketama mode 75-90, hashring 72-91; with the allocator's
#: rounding and a margin, 200
BYTES_PER_POINT = 200
#: what a peer's first build imports and allocates once (pymemcache's: 1.4 MB measured)
FIXED_BYTES = 2 << 20


def ring_peer_bytes(points: int) -> float:
    """Bytes a Python peer with a ring of `points` points holds once built, at most."""
    return float(FIXED_BYTES + BYTES_PER_POINT * points)


def per_server_bytes(servers: Sequence[Server], each: int) -> float:
    """Bytes a peer without a ring (rendezvous, jump) holds, at `each` bytes a server."""
    return float(FIXED_BYTES + each * len(servers))


def points_per_weight(servers: Sequence[Server], per_unit: int) -> int:
    """Points of a ring of `per_unit` points per unit of integer weight (uhashring)."""
    return per_unit * sum(max(1, math.ceil(s.weight)) for s in servers)


def points_per_server(servers: Sequence[Server], per_server: int) -> int:
    """Points of a ring that shares a fixed number of points per server among the servers
    by weight, rounding each share down (libketama's 160, hashring's 120): at most
    `per_server` times the servers, whatever the weights."""
    return per_server * len(servers)
