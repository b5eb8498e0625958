"""What a piece of work costs, before it is done: one value every component returns.

A `Cost` is the bytes a component holds for the rest of the run once it is made (`held`),
the most it holds at once while it works (`peak`, its held bytes included), the seconds
its work takes, and what sets each, as an error names it (`why`, `why_seconds`).

One rule combines them, and `harness.run.estimate` folds a run with it:

- `a + b`: both held at once, their work done one after the other. Held bytes add; the
  peak is everything held plus the largest of their transients (peak minus held);
  seconds add. A sweep point's forms, peers and metrics are combined this way: the
  forms stay resident while each metric works in turn.
- `a.then(b)`: one after the other, the first released before the second is made (the
  ring's generation, then the ring held; one sweep point, then the next). Bytes are the
  larger of the two; seconds still add.
- `a.repeated(n)`: the same work done n times, one after another (a table metric's work
  at every sweep point): bytes unchanged, seconds n times, named as one part.

Either way the text is that of the largest part (by its own peak, and by its own seconds):
a sum names the component that dominates it, not the running total.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Cost:
    """Bytes held, peak bytes, seconds, and what sets them."""

    #: bytes held once made, for as long as the run holds the component
    held: float = 0.0
    #: the most bytes held at once while it works, `held` included
    peak: float = 0.0
    seconds: float = 0.0
    #: what sets the bytes: the fields a user changes to lower them ("" for nothing nameable)
    why: str = ""
    #: what sets the seconds
    why_seconds: str = ""
    #: the peak and the seconds of the part each text names (a sum's largest part)
    named_peak: float = field(default=-1.0, compare=False)
    named_seconds: float = field(default=-1.0, compare=False)

    def __post_init__(self) -> None:
        if self.peak < self.held:
            object.__setattr__(self, "peak", self.held)
        if self.named_peak < 0:
            object.__setattr__(self, "named_peak", self.peak)
        if self.named_seconds < 0:
            object.__setattr__(self, "named_seconds", self.seconds)

    @property
    def transient(self) -> float:
        """What its work holds beyond what it keeps."""
        return self.peak - self.held

    def __add__(self, other: Cost) -> Cost:
        held = self.held + other.held
        return self._named(other, Cost(held, held + max(self.transient, other.transient),
                                       self.seconds + other.seconds))

    def then(self, other: Cost) -> Cost:
        return self._named(other, Cost(max(self.held, other.held), max(self.peak, other.peak),
                                       self.seconds + other.seconds))

    def _named(self, other: Cost, total: Cost) -> Cost:
        """`total` named by the larger part of each, `self` on a tie; an empty text never
        wins over a named one."""
        bytes_by = (other if not self.why or (other.why and other.named_peak > self.named_peak)
                    else self)
        seconds_by = (other if not self.why_seconds or (
            other.why_seconds and other.named_seconds > self.named_seconds) else self)
        return replace(total, why=bytes_by.why, named_peak=bytes_by.named_peak,
                       why_seconds=seconds_by.why_seconds,
                       named_seconds=seconds_by.named_seconds)

    def whole(self) -> Cost:
        """The same cost, its texts naming all of it: in a later sum it is one part."""
        return replace(self, named_peak=self.peak, named_seconds=self.seconds)

    def repeated(self, times: int) -> Cost:
        """The same work `times` times, one after another, each released before the next:
        its bytes once, its seconds `times` over, as one part."""
        return replace(self, seconds=times * self.seconds).whole()

    def bytes_only(self) -> Cost:
        """Its bytes, without its seconds (a sweep point's share of work the sweep repeats,
        whose seconds are summed over the sweep as one part)."""
        return Cost(self.held, self.peak, why=self.why, named_peak=self.named_peak)

    def passing(self) -> Cost:
        """The same work, nothing of it kept once done: its held bytes are part of its peak
        (a table's recipes, built while it works and released after)."""
        return replace(self, held=0.0)

    def seconds_only(self) -> Cost:
        """Its seconds, without its bytes."""
        return Cost(seconds=self.seconds, why_seconds=self.why_seconds,
                    named_seconds=self.named_seconds)


NOTHING = Cost()


def total(costs: list[Cost] | tuple[Cost, ...]) -> Cost:
    """The costs held at once (`+`), left to right; nothing for none."""
    found = NOTHING
    for cost in costs:
        found = found + cost
    return found


def largest(costs: list[Cost] | tuple[Cost, ...]) -> Cost:
    """The costs one after another (`then`), left to right; nothing for none."""
    found = NOTHING
    for cost in costs:
        found = found.then(cost)
    return found
