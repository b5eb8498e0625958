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


#: points per unit weight of the most generous shipped peer (uhashring's 160; hashring's
#: 40 digests of 4 points per server, libketama style, are as many at weight 1)
PEER_POINTS_PER_WEIGHT = 160
#: resident bytes of a peer's point, an upper bound over the shipped peers: uhashring
#: deep-sizes at 81-102 bytes a point, and the allocator rounds each object up
PEER_BYTES_PER_POINT = 200


def estimated_peer_bytes(servers: Sequence[Server]) -> float:
    """Bytes a peer holds once built for `servers`, before it is built: an upper bound
    over the shipped peers, whose rings hold at most 160 points per unit of integer
    weight (those without a ring, jump and rendezvous, hold next to nothing)."""
    points = PEER_POINTS_PER_WEIGHT * sum(max(1, math.ceil(s.weight)) for s in servers)
    return float(PEER_BYTES_PER_POINT * points)
