"""`doctor`: what this machine has for the harness, on one screen.

The C core and how it was built, the CPU name results will carry, where the run history
and the tuning cache live, every optional tool (found, or missing with its install
command), the Python packages the registry peers wrap, and what follows here: which
metrics and built-in scenarios `run` would refuse, and which tests would skip. Everything
comes from the tables the rest of the harness reads (harness.core.tools, the peers'
packages, the machine check of `run`), so doctor cannot disagree with them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import HarnessError
from harness.core.machine import cpu_model
from harness.core.native.bucketed import compiled_module_file
from harness.core.native.counted import BUILT_WITH_CALLGRIND
from harness.core.native.foreign import ABI_VERSION, HEADER
from harness.core.tools import INSTALL_ALL, TOOLS
from harness.metrics.registry import metric_names, unavailable
from harness.recipes.layouts.bucketed_cache import CACHE_FILE, tuning_cache_dir
from harness.recipes.peers import PEERS
from harness.report.history import default_history_dir
from harness.run.builtin import builtin_names, builtin_path
from harness.run.machine_check import machine_problems
from harness.run.scenario import load_scenario


@dataclass(frozen=True)
class Refusal:
    """A built-in scenario `run` would refuse here, and the first reason."""

    name: str
    reason: str


def refused_scenarios(names: Sequence[str] | None = None) -> list[Refusal]:
    """The built-in scenarios this machine cannot run, with the first reason of each."""
    refused = []
    for name in builtin_names() if names is None else names:
        path = builtin_path(name)
        if path is None:
            continue
        try:
            problems = machine_problems(load_scenario(path))
        except HarnessError as exc:  # a shipped scenario that does not read is a bug: say so
            problems = [str(exc)]
        if problems:
            refused.append(Refusal(name, problems[0].split(": ", 1)[-1]))
    return refused


def _folder(path: Path, why: str) -> str:
    return f"{path} ({why})"


def report(command: str) -> list[str]:
    """The lines doctor prints; `command` is the program's name as the user typed it."""
    lines = [f"{command} doctor: what this machine has for ring-harness", ""]
    counted = ("built with valgrind's header: the counts metric can count"
               if BUILT_WITH_CALLGRIND else
               "built without valgrind's header: install valgrind, then reinstall")
    lines += ["C core",
              f"  compiled   {compiled_module_file()}",
              f"  counted    {counted}",
              f"  ABI        {HEADER.name} version {ABI_VERSION} ({command} abi --path)",
              f"CPU          {cpu_model()} (results carry this name)"]
    history, why = default_history_dir()
    cache, cache_why = tuning_cache_dir()
    lines += ["Folders",
              f"  history    {_folder(history, why)}",
              f"  tuning     {_folder(cache / CACHE_FILE, cache_why)}", ""]
    missing = {name: tool for name, tool in TOOLS.items() if tool.missing() is not None}
    lines.append(f"Optional tools: {len(TOOLS) - len(missing)} of {len(TOOLS)} found "
                 f"(in a checkout, `{INSTALL_ALL}` installs them all)")
    width = max(map(len, TOOLS))
    for name, tool in TOOLS.items():
        if name in missing:
            lines.append(f"  {name:<{width}}  missing: {tool.install}  ({tool.used_by})")
        else:
            lines.append(f"  {name:<{width}}  found")
    packages = {name: peer.package for name, peer in PEERS.items()}
    absent = {name: requirement for name, (module, requirement) in packages.items()
              if importlib.util.find_spec(module) is None}
    lines.append(f"Peer packages: {len(packages) - len(absent)} of {len(packages)} "
                 "importable" + ("" if not absent else " (pip install 'ring-harness[test]' "
                                 "brings them all)"))
    lines += [f"  {name:<{width}}  missing: pip install '{requirement}'"
              for name, requirement in absent.items()]
    lines += ["", "Here"]
    metrics = [f"{name} ({problem})" for name in metric_names()
               if (problem := unavailable(name)) is not None]
    lines.append("  metrics refused: " + ("; ".join(metrics) if metrics else "none"))
    refusals = refused_scenarios()
    lines.append(f"  built-in scenarios refused: {len(refusals)}"
                 + (" (" + command + " scenarios lists them all)" if refusals else ""))
    lines += [f"    {r.name}: {r.reason}" for r in refusals]
    lines.append("  tests skipped: " + (
        "those needing " + ", ".join(missing) + " (each skip names its tool)"
        if missing else "none for a missing tool"))
    return lines
