"""ring-harness: benchmark and memory-profile consistent-hash rings in several layouts.

The public API; everything else lives in modules of one concept each.
"""

from harness.errors import HarnessError, ParityError, ResultFormatError, ScenarioError
from harness.generator import Server, generate_ring, numbered_servers
from harness.hashing import HASHES, get_hash, hash_many, hash_one
from harness.layouts import LAYOUTS, Layout, get_layout
from harness.ring import Ring, reference_lookup

__version__ = "0.1.0"

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
