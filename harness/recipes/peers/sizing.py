"""Deep size of plain Python structures: how pure-Python peers are sized.

`sys.getsizeof` counts one object; a ring held in lists, dicts and ints is
mostly the objects those containers point to. Each object is counted once
(by identity), so an int that is both a list item and a dict key costs once,
as it does in memory. Small ints and interned strings that the interpreter
shares anyway are counted too: a slight overcount, the same for every run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping

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
