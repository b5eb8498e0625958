"""`ring-harness identify`: which recipe routes like observed traffic.

`identify(routing, servers, max_minutes)` reads the observations
(`observations.read_observations`), declares the search space and its cost before any work
(`search.declare`, refused past `max_minutes`), searches (`search.run_search`), confirms
each reported recipe by building it as a scenario would and routing every key, and returns
the report (`report.render`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from harness.apps.identify.observations import Observations, read_observations
from harness.apps.identify.report import confirmed, render, render_space
from harness.apps.identify.search import Search, Space, declare, run_search
from harness.core.errors import ScenarioError

__all__ = ["Observations", "Search", "Space", "declare", "identify", "read_observations",
           "run_search"]


def identify(routing: Path, servers: Path, max_minutes: float,
             say: Callable[[str], None], seeds: Sequence[int] = ()) -> tuple[str, bool]:
    """The report, and whether some recipe reproduces every observation; `seeds` are
    rendezvous seeds tried besides the search's own."""
    observations = read_observations(routing, servers)
    space = declare(observations, seeds)
    if space.cost.seconds > 60 * max_minutes:
        raise ScenarioError(
            f"{routing}: the search must fit the time budget of --max-minutes {max_minutes:g} "
            f"(got an estimated {space.cost.seconds / 60:,.1f} minutes: "
            f"{space.cost.why_seconds}); expected fewer servers or keys, or a larger "
            "--max-minutes")
    say(render_space(observations, space))
    search = run_search(observations, lambda text: say(f"  searching: {text}"), seeds)
    checked = confirmed(observations, search)
    return render(observations, space, search, checked), bool(checked and
                                                               checked[0][1] == 1.0)
