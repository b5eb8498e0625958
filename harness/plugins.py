"""Third-party registration: algorithms and layouts from installed packages.

A package declares entry points in the groups `ring_harness.algorithms` and
`ring_harness.layouts`, each naming a class that follows the `Algorithm` or
`Layout` protocol; the registries load them at import, so a plugin's classes
appear in every scenario, table and parity check like ours. A plugin that
fails to load, or whose name is already taken, stops the harness with a
message naming it: a benchmark silently missing a contestant is worse.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from harness.errors import HarnessError


def load_plugins(group: str, taken: Mapping[str, Any]) -> dict[str, Any]:
    """{name: class} of every entry point in `group`, keyed by the class's `name`."""
    found: dict[str, Any] = {}
    for entry in entry_points(group=group):
        try:
            cls = entry.load()
        except Exception as exc:  # a plugin's own import error, whatever it is
            raise HarnessError(f"plugin {entry.value!r} ({group}) failed to load: {exc}") from exc
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise HarnessError(f"plugin {entry.value!r} ({group}) has no string `name`")
        if name in taken or name in found:
            raise HarnessError(f"plugin {entry.value!r} ({group}) registers {name!r}, "
                               "a name already taken")
        found[name] = cls
    return found
