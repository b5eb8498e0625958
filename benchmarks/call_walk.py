"""The walk of one scenario through `run_scenario`, room to room: how often it climbs back
up a floor, and how often it returns to a room it already left.

    .venv/bin/python benchmarks/call_walk.py [SCENARIO] [--keys 2000] [--edges]

Runs the scenario (default: the built-in `default`, with few keys and one timed round)
under `sys.setprofile`, and records each call from code of one place of the harness to
code of another, as a distinct edge (caller -> callee) the first time it is taken.

The house: the *floors* are the layers of docs/design.md, core at the bottom, cli at the
top; the *rooms* are the packages of its module map (`harness.run`,
`harness.recipes.algorithms`, `harness.metrics.instruments`, ...), a module counting as
the package that holds it. Rooms, not modules, because a package is the unit the design
gives one concept, and its modules are that concept's parts: `recipes/layouts/costs.py`
pricing a layout and `recipes/layouts/tuples.py` building it are one room, where counting
them apart would call a ring built after it was priced a walk back and forth. Every figure
is also counted module by module and printed beside it, so nothing coarser hides it.

- a *climb* is an edge from a lower floor to a higher one: code below calling back up (a
  callback, a method of an object made above), which the import contracts cannot see;
- a *return* is an edge into a room above the bottom floor that the walk already entered
  and left, reached again from a caller new to it: the walk came back and went into the
  same place by another way. The bottom floor (`harness.core`: errors, servers, fields)
  is reached from everywhere by design and is not counted.

Each edge counts once, the first time it is taken, and a room's first caller is never a
return. Calls through C (a `functools.partial`, a bound builtin) show as a call from the
code that made them. Code generated at run time (a dataclass's `__init__`, cattrs's
structuring functions: a file name in angle brackets) is written by no module of the
harness, so it is no place: what it calls counts from the place that called it (a
record's `__post_init__`, written in its module, would still count). Prints the counts
(and with `--edges` each counted edge); nothing is written.

On the default scenario, by room: 28 edges, 0 climbs, 7 returns; by module: 129 edges,
0 climbs, 35 returns. Before the results model took the metrics' record types as a table
instead of calling the registry back, a bucketed calibration's records moved down to the
model's floor (`core/calibration.py`: reading one ran their checks in
`recipes/layouts`), the estimate read a layout's hash bits from its cost instead of the
registry beside it, and the runner redacted its parameters with `core/redact.py`
instead of a construction's helper: 31, 1 and 10 by room; 128, 1 and 39 by module (141,
9 and 48 counting generated code as its module's, as this script did before: the
dataclass `__init__` of each metric's record, called by the results model). #37 was
filed at 11 climbs and 20 returns. docs/design.md, section 9; tests/unit/test_call_walk.py
holds the room figures to #37's targets, 4 climbs and 8 returns.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from harness.run.builtin import find_scenario
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario

#: docs/design.md's layers, bottom first
LAYERS = ("core", "recipes", "metrics", "run", "report", "apps", "cli")


def layer_of(module: str) -> int | None:
    """The layer of a harness module (None outside the layered packages)."""
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "harness" or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def room_of(module: str) -> str:
    """The package of the module map that holds a module: itself if it is a package."""
    loaded = sys.modules.get(module)
    return module if hasattr(loaded, "__path__") else module.rsplit(".", 1)[0]


@dataclasses.dataclass
class Walk:
    """The distinct place -> place edges of a walk, in the order first taken; a place is
    what `place_of` makes of a module (the module itself, or its room)."""

    place_of: Callable[[str], str] = lambda module: module
    edges: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    seen: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    #: the places of the harness frames on the stack, innermost last
    stack: list[str] = dataclasses.field(default_factory=list)
    #: places entered, then left (no longer on the stack)
    left: set[str] = dataclasses.field(default_factory=set)
    returns: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    #: for each place, the callers it was entered from
    callers: dict[str, set[str]] = dataclasses.field(default_factory=dict)

    def enter(self, module: str) -> None:
        place = self.place_of(module)
        caller = self.stack[-1] if self.stack else None
        self.stack.append(place)
        if caller is None or caller == place:
            return
        edge = (caller, place)
        if edge in self.seen:
            return
        self.seen.add(edge)
        self.edges.append(edge)
        known = self.callers.setdefault(place, set())
        if (place in self.left and place not in self.stack[:-1] and known
                and caller not in known and layer_of(place) != 0):
            self.returns.append(edge)
        known.add(caller)

    def leave(self, module: str) -> None:
        place = self.place_of(module)
        if self.stack and self.stack[-1] == place:
            self.stack.pop()
            if place not in self.stack:
                self.left.add(place)

    def climbs(self) -> list[tuple[str, str]]:
        return [(a, b) for a, b in self.edges
                if (layer_of(b) or 0) > (layer_of(a) or 0)]


@dataclasses.dataclass
class Walks:
    """One walk counted by room and by module, from the same calls."""

    by_room: Walk = dataclasses.field(default_factory=lambda: Walk(room_of))
    by_module: Walk = dataclasses.field(default_factory=Walk)

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or frame.f_code.co_filename.startswith("<"):
            return
        module = frame.f_globals.get("__name__", "")
        if layer_of(module) is None:
            return
        for walk in (self.by_room, self.by_module):
            (walk.enter if event == "call" else walk.leave)(module)


def walk(scenario_name: str, keys: int) -> Walks:
    scenario = load_scenario(find_scenario(scenario_name))
    scenario = dataclasses.replace(
        scenario, keys=dataclasses.replace(scenario.keys, count=keys),
        measure=dataclasses.replace(scenario.measure, repeats=1,
                                    scalar_keys=min(keys, scenario.measure.scalar_keys)))
    found = Walks()
    sys.setprofile(found.profile)
    try:
        run_scenario(scenario, show_progress=False)
    finally:
        sys.setprofile(None)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default="default")
    parser.add_argument("--keys", type=int, default=2_000)
    parser.add_argument("--edges", action="store_true", help="print each counted edge")
    args = parser.parse_args()
    found = walk(args.scenario, args.keys)
    for unit, counted in (("room", found.by_room), ("module", found.by_module)):
        print(f"by {unit}: {len(counted.edges)} edges, {len(counted.climbs())} climbs, "
              f"{len(counted.returns)} returns")
    if args.edges:
        for unit, counted in (("room", found.by_room), ("module", found.by_module)):
            for name, edges in (("climb", counted.climbs()), ("return", counted.returns)):
                for caller, callee in edges:
                    print(f"{unit} {name}: {caller} -> {callee}")


if __name__ == "__main__":
    main()
