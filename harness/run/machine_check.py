"""Whether this machine can run a scenario: the second of the two checks before any work.

Reading a scenario (`harness.run.scenario`) checks what the file says, the same on every
machine: a scenario that names a library built elsewhere, a program this machine lacks or
the counts metric without valgrind still reads, lists, validates and appears in the
scenario reference. Running it needs more, and `run` (and `reproduce`) ask this module
before any work starts:

- every metric can run here (counts: valgrind, and a C core built with its header);
- every foreign peer's library file exists and its program is on PATH (or an executable
  file), taken relative to the folder the harness runs in;
- every registry peer's Python package can be imported.

Each problem is one line naming the scenario file and the field, what it must be, and what
it is, as a validation error would; `machine_problems` lists them all (`doctor` shows
them), `check_machine` raises the first.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from harness.core.errors import ScenarioError
from harness.core.fields import describe
from harness.metrics.registry import unavailable
from harness.recipes.peers import PEERS
from harness.run.scenario import Scenario


def machine_problems(scenario: Scenario) -> list[str]:
    """Every reason this machine cannot run `scenario`, one line each (empty: it can)."""
    file, measure = scenario.path, scenario.measure
    problems = [f"{file}: measure.metrics must be metrics that can run here ({name}: "
                f"{problem})" for name in measure.metrics if (problem := unavailable(name))]
    for spec in measure.foreign_peers:
        if (found := spec.machine_problem()) is not None:
            key, expected, got = found
            where = f"{spec.where}.{key}" if spec.where else f"peer {spec.name!r} {key}"
            problems.append(f"{file}: {where} must be {expected} on this machine "
                            f"(got {describe(got)})")
    for name in measure.peers:
        module, requirement = PEERS[name].package
        if importlib.util.find_spec(module) is None:
            problems.append(f"{file}: measure.peers names {name!r}, which needs the Python "
                            f"package {module!r}: pip install '{requirement}' (or the test "
                            "extra, ring-harness[test])")
    return problems


def check_machine(scenarios: Sequence[Scenario]) -> None:
    """Refuse, before any work, a scenario this machine cannot run (the first problem)."""
    for scenario in scenarios:
        if problems := machine_problems(scenario):
            raise ScenarioError(problems[0])
