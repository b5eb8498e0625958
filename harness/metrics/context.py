"""What a metric is given: the run's plan before work starts, its context once built.

Plain values only (servers, arrays, built algorithms, numbers): nothing here
knows about scenario files, so metrics can be driven by any caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from harness.core.executor import LOCAL, ExecutorChoice
from harness.core.servers import Operation, Server
from harness.recipes.algorithms.base import Algorithm
from harness.recipes.peers.base import Peer
from harness.recipes.peers.foreign import ForeignPeer

#: "run": a metric gives one figure per sweep point; "subject": one per measured form or peer
Scope = Literal["run", "subject"]


@dataclass(frozen=True)
class Settings:
    """How much to measure: timing rounds, scalar keys, the workload's shape."""

    #: timed rounds per subject, after one warm-up round
    repeats: int = 5
    #: keys per round of the scalar (Python loop) timing
    scalar_keys: int = 20_000
    #: "uniform" (distinct keys) or "zipf" (requests drawn with repeats)
    distribution: str = "uniform"


@dataclass(frozen=True)
class RunPlan:
    """What one sweep point will measure, known before building anything (for progress)."""

    forms: int
    peers: int
    operations: int
    settings: Settings
    #: foreign peers, and how many of them are libraries (the memory metric measures those)
    foreign: int = 0
    foreign_libraries: int = 0
    #: options of metrics configured by their own scenario table (their share of progress)
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class RunContext:
    """One sweep point, built: the algorithm in each form, the keys and their owners."""

    label: str
    servers: Sequence[Server]
    #: the algorithm in its reference form (the ring: its base layout)
    algorithm: Algorithm
    #: every physical form measured, by name (the ring: one per layout)
    forms: Mapping[str, Algorithm]
    peers: Mapping[str, Peer]
    key_names: list[str]
    key_hashes: npt.NDArray[np.unsignedinteger]
    #: each key's owner by the reference (checked against every form)
    owners: npt.NDArray[np.uint16]
    operations: Sequence[Operation]
    settings: Settings
    #: builds the same recipe for another server list (movement)
    rebuild: Callable[[Sequence[Server]], Algorithm]
    #: the folder for this run's temporary files (removed when the run ends)
    workdir: str
    #: builds another recipe (parameters) for a server list (migrations)
    build: Callable[[Sequence[Server], dict[str, Any]], Algorithm] = (
        lambda _servers, _params: _unavailable("build"))
    #: a builder of the recipe (None: the run's own; else parameters as `build` takes) for
    #: parts of `servers`, each of some of them in their order (a process's rings): a ring
    #: is filtered from the fleet's points hashed once (harness.recipes.algorithms.parts)
    parts: Callable[[dict[str, Any] | None], Callable[[Sequence[Server]], Algorithm]] = (
        lambda _params: _unavailable("parts"))
    #: entries the recipe gives a server list, known before building (processes)
    estimated_entries: Callable[[Sequence[Server]], int] = (
        lambda _servers: _unavailable("estimated_entries"))
    #: each server's capabilities, in `servers` order (processes)
    capabilities: Sequence[tuple[str, ...]] = ()
    #: each server's zone (rack or data centre), in `servers` order (replication)
    zones: Sequence[str] = ()
    #: options of metrics configured by their own scenario table ([process], [migration])
    options: Mapping[str, Any] = field(default_factory=dict)
    #: foreign peers, started and built (harness.recipes.peers.foreign)
    foreign_peers: Mapping[str, ForeignPeer] = field(default_factory=dict)
    #: progress: name what is happening now, and count steps done
    stage: Callable[[str], None] = lambda _text: None
    advance: Callable[[int], None] = lambda _steps: None
    #: where a metric's independent tasks run (a fleet's data centres): the command line's
    executor: ExecutorChoice = LOCAL
    #: where finished tasks are kept (None: not kept), and the scenario's hash they go under
    task_root: Path | None = None
    scenario_sha256: str = ""


def _unavailable(what: str) -> Any:
    raise NotImplementedError(f"this run context has no {what}")
