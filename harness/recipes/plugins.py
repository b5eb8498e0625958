"""Third-party registration: algorithms and layouts from installed packages.

A package declares entry points in the groups `ring_harness.algorithms` and
`ring_harness.layouts`, each naming a class that follows the `Algorithm` or
`Layout` protocol. The registries (`Registry`) load them on first use, so a
plugin's classes appear in every scenario, table and parity check like ours;
loading lazily lets a plugin import the harness's own modules (its base
classes) without a circular import.

A plugin gets the protocol's optional members (their defaults) by subclassing
our base class, as ours do: `Routing` for an algorithm, `LayoutBase` for a
layout. Registration checks the contract: every member the protocol declares
must be on the class, bar `lookup` and `lookup_many`, which a fast path may
bind per instance (as ours do, to C functions). A plugin that fails to load, lacks a member, or
whose name is already taken, stops the harness with a one-line message naming
it: a benchmark silently missing a contestant, or failing halfway through a
run, is worse.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import FrameType, TracebackType
from typing import Any, TypeVar

from harness.core.errors import HarnessError

T = TypeVar("T")

#: every plugin class loaded so far, and the entry point that named it (with its group)
_PLUGIN_CLASSES: dict[type, str] = {}


@dataclass(frozen=True)
class Contract:
    """What a registry's classes must have: the protocol's members, and where the optional
    ones (those with a default) come from."""

    #: the protocol, e.g. "Algorithm (harness/recipes/algorithms/base.py)"
    protocol: str
    #: every member the protocol declares
    members: tuple[str, ...]
    #: the members with a default, and the base class that gives them
    defaults: tuple[str, ...] = ()
    base: str = ""
    #: members a class may bind per instance (a C function, in `__init__`): not on the class
    per_instance: tuple[str, ...] = ("lookup", "lookup_many")


def protocol_members(protocol: type) -> tuple[str, ...]:
    """The public members a protocol class declares (annotated, or defined in its body)."""
    names = [*vars(protocol).get("__annotations__", {}), *vars(protocol)]
    return tuple(dict.fromkeys(name for name in names if not name.startswith("_")))


def contract_problem(cls: Any, contract: Contract) -> str | None:
    """What the class lacks of the contract, in a few words; None if nothing."""
    if not isinstance(cls, type):
        return f"is not a class (got {type(cls).__name__})"
    missing = next((member for member in contract.members
                    if member not in contract.per_instance and not hasattr(cls, member)), None)
    if missing is None:
        return None
    problem = f"lacks `{missing}`, which the {contract.protocol} protocol declares"
    if missing in contract.defaults:
        problem += f" (its default comes with subclassing {contract.base})"
    return problem


def load_plugins(group: str, taken: Mapping[str, Any], contract: Contract) -> dict[str, Any]:
    """{name: class} of every entry point in `group`, keyed by the class's `name`, each
    checked against the contract."""
    found: dict[str, Any] = {}
    for entry in entry_points(group=group):
        try:
            cls = entry.load()
        except Exception as exc:  # a plugin's own import error, whatever it is
            raise HarnessError(f"plugin {entry.value!r} ({group}) failed to load: {exc}") from exc
        problem = contract_problem(cls, contract)
        if problem:
            raise HarnessError(f"plugin {entry.value!r} ({group}) {problem}")
        name = cls.name
        if not isinstance(name, str) or not name:
            raise HarnessError(f"plugin {entry.value!r} ({group}) has no string `name`")
        if name in taken or name in found:
            raise HarnessError(f"plugin {entry.value!r} ({group}) registers {name!r}, "
                               "a name already taken")
        found[name] = cls
        _PLUGIN_CLASSES[cls] = f"{entry.value} ({group})"
    return found


@dataclass(frozen=True)
class PluginFailure:
    """Where a plugin's own code raised: the plugin, its function, and whether the harness
    was validating a scenario then (bad input) or running one (a failed run)."""

    plugin: str
    function: str
    validating: bool

    def message(self, exc: BaseException) -> str:
        what = (f"exited with status {exc.code}" if isinstance(exc, SystemExit)
                else f"raised {type(exc).__name__}: {exc}")
        return f"plugin {self.plugin}: {self.function} {what}".replace("\n", " ")


def _plugin_of(frame: FrameType) -> str | None:
    """The plugin a frame runs the code of: its class (through `self` or `cls`), or any
    plugin class defined in the frame's module."""
    owner = frame.f_locals.get("cls", None)
    if not isinstance(owner, type):
        owner = type(frame.f_locals["self"]) if "self" in frame.f_locals else None
    module = frame.f_globals.get("__name__", "")
    by_module = None
    for cls, entry in _PLUGIN_CLASSES.items():
        if owner is not None and issubclass(owner, cls):
            return entry
        if by_module is None and cls.__module__ == module:
            by_module = entry
    return by_module


def plugin_failure(trace: TracebackType | None) -> PluginFailure | None:
    """The plugin whose code the traceback ends in (its innermost plugin frame), if any."""
    blamed: PluginFailure | None = None
    validating = False
    plugin_modules = {cls.__module__ for cls in _PLUGIN_CLASSES}
    while trace is not None:
        frame = trace.tb_frame
        module = str(frame.f_globals.get("__name__", ""))
        validating = validating or module == "harness.run.scenario"
        if module in plugin_modules:
            plugin = _plugin_of(frame)
            if plugin is not None:
                blamed = PluginFailure(plugin, frame.f_code.co_name, validating)
        trace = trace.tb_next
    return blamed


class Registry(dict[str, T]):
    """Our classes by name, plus the plugins of one entry-point group, loaded on first use;
    with `instances`, a plugin's class is instantiated once (a metric), as ours are. The
    registry decides that itself, by a flag: a subclass above overriding how it loads
    would make every lookup here call back up into the layer that made it."""

    def __init__(self, group: str, ours: Mapping[str, T], contract: Contract, *,
                 instances: bool = False) -> None:
        super().__init__(ours)
        self.group = group
        self.contract = contract
        self.instances = instances
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True  # before loading: a plugin may look names up while importing
            plugins = load_plugins(self.group, self, self.contract)
            self.update({name: cls() for name, cls in plugins.items()}
                        if self.instances else plugins)

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
