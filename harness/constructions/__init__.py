"""The construction registry: one module per production ring recipe, one typed map.

`CONSTRUCTIONS[name].build_ring(servers)` builds the ring that system would
build; `CONSTRUCTIONS[name].key_hashes(keys)` hashes keys the way it does.
"""

from __future__ import annotations

from harness.constructions.base import Construction
from harness.constructions.libketama import LibketamaConstruction
from harness.constructions.nginx import NginxConstruction
from harness.errors import UnknownNameError

CONSTRUCTIONS: dict[str, Construction] = {
    construction.name: construction
    for construction in (NginxConstruction(), LibketamaConstruction())
}


def get_construction(name: str) -> Construction:
    """The construction called `name`, or an error that lists the valid names."""
    try:
        return CONSTRUCTIONS[name]
    except KeyError:
        raise UnknownNameError("construction", name, list(CONSTRUCTIONS)) from None


__all__ = ["CONSTRUCTIONS", "Construction", "get_construction"]
