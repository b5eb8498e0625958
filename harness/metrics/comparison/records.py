"""The comparison's typed records: per fleet, each recipe's and each peer's figures.

`harness.metrics.comparison.metric` measures them and `harness.metrics.comparison.tables`
renders them; results store them as the `comparison` figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.metrics.instruments.timing import Timing
from harness.metrics.load import Load
from harness.metrics.memory import Memory
from harness.metrics.movement import Movement

#: the three changes whose moved keys (and resize times) are measured
OPERATIONS = ("add", "remove last", "remove middle")


@dataclass
class MoveFigure:
    operation: str
    server: str
    #: the least any algorithm can move: the changed server's weight share
    minimal_fraction: float
    movement: Movement | None = None
    unsupported: str | None = None
    #: ms to make the algorithm for the changed fleet (median of the comparison's repeats);
    #: None in results written before resize times were measured
    resize_ms: Timing | None = None


@dataclass
class RecipeFigures:
    label: str
    algorithm: str
    params: dict[str, Any]
    #: why this recipe cannot serve this fleet; None when measured
    unsupported: str | None = None
    entries: int | None = None
    #: the structure's size as the algorithm accounts for it
    nbytes: int | None = None
    memory: Memory | None = None
    build_ms: Timing | None = None
    scalar_ns: Timing | None = None
    batch_ns: Timing | None = None
    #: one key hashed and looked up in a single call, where the algorithm has `route_one`
    route_ns: Timing | None = None
    uniform: Load | None = None
    zipf: Load | None = None
    weight_share_error: float | None = None
    #: "exact" (the algorithm's own shares of the hash space) or "keys" (uniform keys)
    shares_from: str | None = None
    #: the largest share over its weight share, from exact shares (None where the
    #: algorithm has none): balance without the noise of a finite key set
    exact_peak_to_mean: float | None = None
    #: rings: the CV of share per weight predicted from point counts
    cv_theory: float | None = None
    #: tables of slots (maglev): the most minus the fewest slots of a server
    slot_spread: int | None = None
    moves: list[MoveFigure] = field(default_factory=list)
    parity_keys: int = 0


@dataclass
class PeerFigures:
    name: str
    #: the label of our recipe it should route like; None when none of ours can
    agrees_with: str | None
    exact: bool
    note: str
    unsupported: str | None = None
    entries: int | None = None
    nbytes: int | None = None
    memory: Memory | None = None
    agreement: float | None = None
    agreement_keys: int = 0
    #: the library's own lookup of one key (key hashing included)
    scalar_ns: Timing | None = None
    #: the library call alone on precomputed key hashes (libraries that take hashes)
    call_ns: Timing | None = None


@dataclass
class FleetFigures:
    servers: int
    #: the weight pattern, repeated over the servers
    weights: list[float]
    keys: int
    zipf_requests: int
    zipf_exponent: float
    #: a perfectly even split of the same keys (multinomial draws, median): what key
    #: noise alone gives
    noise_cv: float
    noise_peak_to_mean: float
    algorithms: list[RecipeFigures]
    peers: list[PeerFigures]

    @property
    def equal_weights(self) -> bool:
        return len(set(self.weights)) == 1

    @property
    def label(self) -> str:
        pattern = ("equal weights" if self.equal_weights
                   else "weights " + ":".join(f"{w:g}" for w in self.weights))
        return f"N={self.servers:,}, {pattern}"


@dataclass
class Comparison:
    fleets: list[FleetFigures]
