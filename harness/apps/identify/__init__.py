"""`ring-harness identify`: which recipe routes like observed traffic.

`identify(routing, servers, max_minutes)` reads the observations
(`observations.read_observations`), declares the search space and each stage's cost before
any work (`search.declare`), searches (`search.run_search`) with the budget held stage by
stage (`budget.StageBudget`: a stage is refused before it starts when the estimates of the
stages run and its own outgrow `max_minutes`), confirms each reported recipe by building it
as a scenario would and routing every key, and returns the report (`report.render`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from harness.apps.identify.budget import StageBudget
from harness.apps.identify.observations import Observations, read_observations
from harness.apps.identify.report import confirmed, render, render_space
from harness.apps.identify.search import Search, Space, declare, run_search

__all__ = ["Observations", "Search", "Space", "StageBudget", "declare", "identify",
           "read_observations", "run_search"]


def identify(routing: Path, servers: Path, max_minutes: float,
             say: Callable[[str], None], seeds: Sequence[int] = ()) -> tuple[str, bool]:
    """The report, and whether some recipe reproduces every observation; `seeds` are
    rendezvous seeds tried besides the search's own."""
    observations = read_observations(routing, servers)
    space = declare(observations, seeds)
    say(render_space(observations, space, max_minutes))
    budget = StageBudget(space, max_minutes, str(routing))
    search = run_search(observations, lambda text: say(f"  searching: {text}"), seeds,
                        budget)
    checked = confirmed(observations, search)
    return (render(observations, space, search, checked, max_minutes),
            bool(checked and checked[0][1] == 1.0))
