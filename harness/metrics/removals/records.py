"""The removals metric's typed records: per algorithm and order, the figures of each step.

`harness.metrics.removals.metric` measures them and `harness.metrics.removals.tables` renders
them; results store them as the `removals` figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.metrics.instruments.timing import Timing


@dataclass
class RemovalStep:
    """The algorithm after `removed` of the fleet's servers left."""

    removed: int
    share_removed: float
    live: int
    entries: int
    #: the structure's size as the algorithm accounts for it, and allocator bytes held
    #: (memray, fresh process; None when memory is not measured)
    nbytes: int
    structure_bytes: int | None
    scalar_ns: Timing | None
    batch_ns: Timing | None
    #: load per server over the live servers (uniform keys): CV and peak-to-mean
    cv: float
    peak_to_mean: float
    #: the same keys split perfectly evenly over the live servers (multinomial draws)
    noise_cv: float
    #: fractions of the keys whose owner changed since the previous step and since step 0
    moved_since_previous: float
    moved_since_start: float
    #: fractions of the keys owned by a server removed since the previous step, and since
    #: step 0: the least any algorithm moves
    minimal_since_previous: float
    minimal_since_start: float
    #: share of the moved keys whose owner was removed (1.0 for a monotone algorithm); None
    #: when no key moved
    monotone_since_previous: float | None
    monotone_since_start: float | None


@dataclass
class RemovalSeries:
    """One algorithm recipe removing servers in one order."""

    label: str
    algorithm: str
    params: dict[str, Any]
    order: str
    #: why the algorithm cannot follow this order (jump: only the last server); None if it can
    unsupported: str | None = None
    #: "as it falls" (the algorithm's own removal) or "rebuilt" (from the servers left)
    removed_by: str | None = None
    parity_keys: int = 0
    steps: list[RemovalStep] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.label} ({self.order})"


@dataclass
class Removals:
    servers: int
    keys: int
    max_share: float
    step: float
    seed: int
    orders: list[str]
    #: fleet indexes of the first servers to leave, per order (the random order's draw)
    first_removed: dict[str, list[int]]
    series: list[RemovalSeries]
