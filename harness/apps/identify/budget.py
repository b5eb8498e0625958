"""The time budget of `identify`, held stage by stage.

The declared bound of the whole search (`search.declare`) is dominated by the rings of
client traits: on 100 servers it is most of an hour, yet the shipped recipes and known
clients, tried first, answer most real fleets in about a second. So the budget is not
checked once against the whole bound: before each stage (`search.STAGES`) starts, the
estimates of the stages run so far plus this one's must fit it. The first stage is held
like the rest (a budget too small even for it is refused before any work). A stage that
does not fit is refused before it starts, with what the stages before it found; when a
candidate already reproduces every key, a stage that does not fit is left out instead
(the answer stands; the report names what was not searched).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.apps.identify.search import STAGES, Found, Space
from harness.core.errors import ScenarioError


class StageBudget:
    """`search.run_search`'s gate: admits each stage whose estimate, added to those of the
    stages admitted before it, fits `max_minutes`."""

    def __init__(self, space: Space, max_minutes: float, where: str) -> None:
        self.estimates = dict(space.stages)
        self.space = space
        self.max_minutes = max_minutes
        self.where = where
        self.admitted: list[str] = []
        self.spent = 0.0  # estimated seconds of the stages admitted

    def __call__(self, stage: str, found: list[Found]) -> bool:
        estimate = self.estimates[stage]
        if self.spent + estimate <= 60 * self.max_minutes:
            self.spent += estimate
            self.admitted.append(stage)
            return True
        if any(f.agreement == 1.0 for f in found):
            return False
        raise ScenarioError(self.refusal(stage, found))

    def refusal(self, stage: str, found: Sequence[Found]) -> str:
        """One line: what the stages run found, the stage refused, its estimate and the
        budget."""
        estimate = self.estimates[stage]
        why = f" ({self.space.cost.why_seconds})" if stage == "rings" else ""
        return (f"{self.where}: {self.found_text(found)}; {STAGES[stage]} would take an "
                f"estimated {_duration(estimate)}{why}"
                + (f" after {_duration(self.spent)} estimated for the stages before it"
                   if self.admitted else "")
                + f", over --max-minutes {self.max_minutes:g}; expected a larger "
                  "--max-minutes, or fewer servers or keys")

    def found_text(self, found: Sequence[Found]) -> str:
        if not self.admitted:
            return "nothing searched yet"
        searched = [STAGES[s] for s in self.admitted]
        listed = (", ".join(searched[:-1]) + " or " + searched[-1]) if len(searched) > 1 \
            else searched[0]
        best = (f" (the best, {found[0].candidate.label}, routes "
                f"{found[0].agreement:.2%} of them)") if found else ""
        return f"no candidate of {listed} reproduces every key{best}"


def _duration(seconds: float) -> str:
    return f"{seconds / 60:,.1f} minutes" if seconds >= 60 else f"{seconds:,.2f} s"
