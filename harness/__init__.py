"""ring-harness: benchmark and memory-profile consistent-hash rings in several layouts.

The public API, re-exported from the layers that own each name. The names are
loaded on first use (PEP 562), so importing one layer's module does not load
the others through this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.core.version import VERSION as __version__

if TYPE_CHECKING:
    from harness.core.errors import HarnessError, ParityError, ResultFormatError, ScenarioError
    from harness.core.hashing import HASHES, get_hash, hash_many, hash_one
    from harness.core.ring import Ring, reference_lookup
    from harness.core.servers import Server, numbered_servers
    from harness.recipes.constructions.generator import generate_ring
    from harness.recipes.layouts import LAYOUTS, Layout, get_layout

#: each public name and the module that owns it
_OWNERS = {
    "HarnessError": "harness.core.errors",
    "ParityError": "harness.core.errors",
    "ResultFormatError": "harness.core.errors",
    "ScenarioError": "harness.core.errors",
    "HASHES": "harness.core.hashing",
    "get_hash": "harness.core.hashing",
    "hash_many": "harness.core.hashing",
    "hash_one": "harness.core.hashing",
    "Ring": "harness.core.ring",
    "reference_lookup": "harness.core.ring",
    "Server": "harness.core.servers",
    "numbered_servers": "harness.core.servers",
    "generate_ring": "harness.recipes.constructions.generator",
    "LAYOUTS": "harness.recipes.layouts",
    "Layout": "harness.recipes.layouts",
    "get_layout": "harness.recipes.layouts",
}

__all__ = [
    "HASHES",
    "LAYOUTS",
    "HarnessError",
    "Layout",
    "ParityError",
    "ResultFormatError",
    "Ring",
    "ScenarioError",
    "Server",
    "__version__",
    "generate_ring",
    "get_hash",
    "get_layout",
    "hash_many",
    "hash_one",
    "numbered_servers",
    "reference_lookup",
]


def __getattr__(name: str) -> Any:
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(importlib.import_module(owner), name)
