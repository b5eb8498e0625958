"""Third-party registration: algorithms and layouts from installed packages.

A package declares entry points in the groups `ring_harness.algorithms` and
`ring_harness.layouts`, each naming a class that follows the `Algorithm` or
`Layout` protocol. The registries (`Registry`) load them on first use, so a
plugin's classes appear in every scenario, table and parity check like ours;
loading lazily lets a plugin import the harness's own modules (its base
classes) without a circular import. A plugin that fails to load, or whose
name is already taken, stops the harness with a message naming it: a
benchmark silently missing a contestant is worse.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any, TypeVar

from harness.core.errors import HarnessError

T = TypeVar("T")


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


class Registry(dict[str, T]):
    """Our classes by name, plus the plugins of one entry-point group, loaded on first use."""

    def __init__(self, group: str, ours: Mapping[str, T]) -> None:
        super().__init__(ours)
        self.group = group
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True  # before loading: a plugin may look names up while importing
            self.update(load_plugins(self.group, self))

    def __getitem__(self, name: str) -> T:
        self._load()
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        self._load()
        return super().__contains__(name)

    def __iter__(self) -> Iterator[str]:
        self._load()
        return super().__iter__()

    def __len__(self) -> int:
        self._load()
        return super().__len__()

    def keys(self) -> Any:
        self._load()
        return super().keys()

    def values(self) -> Any:
        self._load()
        return super().values()

    def items(self) -> Any:
        self._load()
        return super().items()

    def get(self, name: str, default: Any = None) -> Any:
        self._load()
        return super().get(name, default)
