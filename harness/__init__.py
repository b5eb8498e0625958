"""ring-harness: benchmark and memory-profile consistent-hash rings in several layouts.

The public API is `__all__`: what a user scripts with, re-exported from the layer
that owns each name (`docs/reference/api.md` shows it in use):

- servers, hashes and rings: `Server`, `numbered_servers`, `get_hash`, `hash_one`,
  `hash_many`, `HASHES`, `Ring`, `reference_lookup`, `generate_ring`;
- algorithms, constructions and layouts by name: `get_algorithm` / `ALGORITHMS`,
  `get_construction` / `CONSTRUCTIONS`, `get_layout` / `LAYOUTS`;
- scenarios: `find_scenario` (a file, or a built-in scenario's name), `load_scenario`,
  `run_scenario`;
- results: `load_result`, `write_result`, the model (`Result`, `Run`, `Subject`,
  `Parity`, `RingInfo`, `Machine`) and `result_schema`, the JSON Schema of the format;
- the errors the harness raises (`HarnessError` and its kinds).

Anything not in `harness.__all__` is internal and may move between releases, even
when its module has no leading underscore.

The names load on first use (PEP 562 `__getattr__`). Importing any module of the
package runs this file first: eager imports of the runner and the report here would make
`import harness.core.ring` (about 0.1 s, 260 modules, measured) cost what the runner and
the report do (about 0.4 s, 540 modules), in every fresh process that measures one form
too. The layering allows either: this file is the root, above every layer, and no module
of the package imports it, so its imports (those under TYPE_CHECKING, which import-linter
and tests/unit/test_layers.py read) point down and close no cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.core.version import VERSION as __version__

if TYPE_CHECKING:
    from harness.core.errors import HarnessError, ParityError, ResultFormatError, ScenarioError
    from harness.core.hashing import HASHES, get_hash, hash_many, hash_one
    from harness.core.model import Machine, Parity, Result, RingInfo, Run, Subject
    from harness.core.ring import Ring, reference_lookup
    from harness.core.servers import Server, numbered_servers
    from harness.recipes.algorithms import ALGORITHMS, Algorithm, get_algorithm
    from harness.recipes.constructions import CONSTRUCTIONS, Construction, get_construction
    from harness.recipes.constructions.generator import generate_ring
    from harness.recipes.layouts import LAYOUTS, Layout, get_layout
    from harness.report.results import load_result, write_result
    from harness.report.schema import result_schema
    from harness.run.builtin import find_scenario
    from harness.run.runner import run_scenario
    from harness.run.scenario import Scenario, load_scenario

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
    "Machine": "harness.core.model",
    "Parity": "harness.core.model",
    "Result": "harness.core.model",
    "RingInfo": "harness.core.model",
    "Run": "harness.core.model",
    "Subject": "harness.core.model",
    "Ring": "harness.core.ring",
    "reference_lookup": "harness.core.ring",
    "Server": "harness.core.servers",
    "numbered_servers": "harness.core.servers",
    "ALGORITHMS": "harness.recipes.algorithms",
    "Algorithm": "harness.recipes.algorithms",
    "get_algorithm": "harness.recipes.algorithms",
    "CONSTRUCTIONS": "harness.recipes.constructions",
    "Construction": "harness.recipes.constructions",
    "get_construction": "harness.recipes.constructions",
    "generate_ring": "harness.recipes.constructions.generator",
    "LAYOUTS": "harness.recipes.layouts",
    "Layout": "harness.recipes.layouts",
    "get_layout": "harness.recipes.layouts",
    "load_result": "harness.report.results",
    "write_result": "harness.report.results",
    "result_schema": "harness.report.schema",
    "find_scenario": "harness.run.builtin",
    "run_scenario": "harness.run.runner",
    "Scenario": "harness.run.scenario",
    "load_scenario": "harness.run.scenario",
}

__all__ = [
    "ALGORITHMS",
    "CONSTRUCTIONS",
    "HASHES",
    "LAYOUTS",
    "Algorithm",
    "Construction",
    "HarnessError",
    "Layout",
    "Machine",
    "Parity",
    "ParityError",
    "Result",
    "ResultFormatError",
    "Ring",
    "RingInfo",
    "Run",
    "Scenario",
    "ScenarioError",
    "Server",
    "Subject",
    "__version__",
    "find_scenario",
    "generate_ring",
    "get_algorithm",
    "get_construction",
    "get_hash",
    "get_layout",
    "hash_many",
    "hash_one",
    "load_result",
    "load_scenario",
    "numbered_servers",
    "reference_lookup",
    "result_schema",
    "run_scenario",
    "write_result",
]


def __getattr__(name: str) -> Any:
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(importlib.import_module(owner), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
