"""What the clients metric records: per fleet and state, the agreement of every pair of
clients with its causes and prediction; per client, what it moves and how fast it is."""

from __future__ import annotations

from dataclasses import dataclass

from harness.metrics.instruments.timing import Timing


@dataclass
class PairAgreement:
    a: str
    b: str
    #: share of the workload's keys both send to the same server (by name)
    measured: float
    #: worked out from the two clients' recipes (None: one has no exact recipe of ours)
    predicted: float | None
    #: how `predicted` was worked out
    basis: str
    #: each trait their recipes differ in ("key hash: MD5 ... vs CRC-32")
    causes: list[str]


@dataclass
class FleetState:
    #: "as it is", "without X", "without X, with Y"
    label: str
    servers: int
    clients: list[str]
    #: measured agreement, clients x clients in `clients` order
    matrix: list[list[float]]
    #: every pair (a before b in `clients`)
    pairs: list[PairAgreement]
    #: each client's agreement with its own recipe (None: it has no exact recipe)
    with_recipe: list[float | None]


@dataclass
class ClientMoves:
    client: str
    #: share of keys whose server (by name) changed on the removal, on the addition
    on_remove: float | None
    on_add: float | None
    #: how the changes reached it: "its own ADD and REMOVE" (a process peer that supports
    #: them) or "built again for each state"
    through: str = "built again for each state"


@dataclass
class FleetAgreement:
    label: str
    servers: int
    weights: list[float]
    states: list[FleetState]
    moves: list[ClientMoves]


@dataclass
class ClientSpeed:
    """One client on the first fleet as it is, timed in rounds interleaved with our recipe."""

    client: str
    #: "Python" or a foreign peer's door (`recipes.peers.foreign.DOORS`)
    runtime: str
    #: our recipe it routes like, in the form timed ("ring construction=libketama, cffi-packed")
    recipe: str
    #: ns per key by the client's own clock: a Python loop for a Python peer, TIME for a
    #: process peer that answers it, the C call for a library; None otherwise
    own_ns: Timing | None
    #: ns per key of one batch through the pipe (process peers), timed by us
    protocol_ns: Timing | None
    #: ns per key of our recipe's route of the same keys in the same rounds
    ours_ns: Timing
    #: bytes it reports of its structure (0: it does not say)
    reported_bytes: int = 0
    #: a process peer's PSS after BUILD
    pss_bytes: int | None = None
    #: ns per key of our recipe's lookup of the same keys' precomputed hashes (no hashing)
    ours_lookup_ns: Timing | None = None
    #: whether the client was given our recipe's key hashes (input = "hashes"): it is then
    #: compared with our lookup, not our route
    given_hashes: bool = False


@dataclass
class ClientsAgreement:
    keys: int
    fleets: list[FleetAgreement]
    speeds: list[ClientSpeed]
