"""The walk of one scenario through `run_scenario`, module to module: how often it climbs.

    .venv/bin/python benchmarks/call_walk.py [SCENARIO] [--keys 2000] [--edges]

Runs the scenario (default: the built-in `default`, with few keys and one timed round)
under `sys.setprofile`, and records each call from a function of one harness module to
a function of another, as a distinct edge (caller module -> callee module) the first time
it happens. The layers are those of docs/design.md, core at the bottom, cli at the top.

- a *climb* is an edge from a lower layer's module to a higher one's: code below calling
  back up (a callback, a method of an object made above), which the import contracts
  cannot see;
- a *return* is an edge into a module above the bottom layer that the walk already
  entered and left, reached again from a different caller: the walk came back up and
  went down again into the same place by another way. The bottom layer (`harness.core`:
  errors, servers, fields) is reached from everywhere by design and is not counted.

Each edge counts once, the first time it is taken, and a module's first caller is never a
return; calls through C (a `functools.partial`, a bound builtin) show as a call from the
module whose Python code made them. Prints the two counts (and with `--edges` each counted
edge). Nothing is written. On the default scenario: 126 edges, 0 climbs, 38 returns (from
127, 6 and 43 before the progress bar moved to core and the runner stopped handing its
metrics closures of its own; docs/design.md, section 9).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
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


@dataclasses.dataclass
class Walk:
    """The distinct module -> module edges of a walk, in the order first taken."""

    edges: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    seen: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    #: the harness modules on the stack, innermost last
    stack: list[str] = dataclasses.field(default_factory=list)
    #: modules entered, then left (no longer on the stack)
    left: set[str] = dataclasses.field(default_factory=set)
    returns: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    #: for each module, the callers it was entered from
    callers: dict[str, set[str]] = dataclasses.field(default_factory=dict)

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if layer_of(module) is None:
            return
        if event == "return":
            if self.stack and self.stack[-1] == module:
                self.stack.pop()
                if module not in self.stack:
                    self.left.add(module)
            return
        caller = self.stack[-1] if self.stack else None
        self.stack.append(module)
        if caller is None or caller == module:
            return
        edge = (caller, module)
        if edge in self.seen:
            return
        self.seen.add(edge)
        self.edges.append(edge)
        known = self.callers.setdefault(module, set())
        if (module in self.left and module not in self.stack[:-1] and known
                and caller not in known and layer_of(module) != 0):
            self.returns.append(edge)
        known.add(caller)

    def climbs(self) -> list[tuple[str, str]]:
        return [(a, b) for a, b in self.edges
                if (layer_of(b) or 0) > (layer_of(a) or 0)]


def walk(scenario_name: str, keys: int) -> Walk:
    scenario = load_scenario(find_scenario(scenario_name))
    scenario = dataclasses.replace(
        scenario, keys=dataclasses.replace(scenario.keys, count=keys),
        measure=dataclasses.replace(scenario.measure, repeats=1,
                                    scalar_keys=min(keys, scenario.measure.scalar_keys)))
    found = Walk()
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
    climbs = found.climbs()
    print(f"{len(found.edges)} edges, {len(climbs)} climbs, {len(found.returns)} returns")
    if args.edges:
        for name, edges in (("climb", climbs), ("return", found.returns)):
            for caller, callee in edges:
                print(f"{name}: {caller} -> {callee}")


if __name__ == "__main__":
    main()
