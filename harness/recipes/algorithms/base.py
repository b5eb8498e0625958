"""What every consistent-hashing algorithm is: the `Algorithm` protocol.

An algorithm answers one question, "which server owns this key", and so is
measured on the same terms as every other: memory, build time, lookup time
(scalar and batch), balance, load and movement. The contract:

- `ALGORITHMS[name].build(servers, **params)` returns an instance, where
  `servers` is a sequence of `harness.recipes.constructions.generator.Server(name, weight)` in
  configuration order. Parameters are checked with the scenario's one-line
  errors (`parse_params`), and `check_servers` refuses server lists the
  algorithm cannot take; both run when a scenario loads, before any work.
- `instance.route(keys)` takes `bytes` keys and returns a uint16 array: each
  key's owner as an index into `servers`. It hashes keys the algorithm's own
  way (`hash_keys`).
- `instance.lookup(key_hash)` / `instance.lookup_many(key_hashes)` answer on
  the algorithm's own key-hash type (uint32 or uint64).
- `instance.reference_lookup_many(hashes)` is the plain-Python definition and
  `instance.reference_owners(hashes)` its vectorised form; every run checks
  that the fast paths (`lookup`, `lookup_many`) agree with them ("parity").
- `instance.nbytes` is the size of the structure it routes with.
- `instance.forms(names)` are the physical forms measured side by side (the
  ring's layouts); an algorithm with one form returns itself.
- `ALGORITHMS[name].from_params(servers, params)` builds from parameters that
  `parse_params` returned, for servers `check_servers` accepted, checking
  neither again: what a scenario's run calls, its parameters checked once, at load.

Optional members, declared here like the rest, have their default in `Routing`,
the base class of every algorithm of ours (and of the demo plugin): the removal
or metric an algorithm cannot measure (`removal_problem`, `metric_problem`),
what a client's build alone holds (`estimated_client_bytes`), a stream to
`reset`, the `ring` and `construction` it routes with, a one-call `route_one`,
maglev's `slot_counts`, and how a ring loses a server (`without`) and is
rebalanced (`rebalanced`). `DEFAULTS` lists them; a plugin that does not
subclass `Routing` must define them too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, Self, cast

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.params import Param, keyword_fields, parse_params
from harness.core.ring import Ring
from harness.core.servers import Server, server_list_problem
from harness.recipes.constructions.base import Construction, Rebalanced


class Algorithm(Protocol):
    """One consistent-hashing algorithm, built for a list of servers."""

    #: registry name, e.g. "ring"
    name: ClassVar[str]

    @classmethod
    def parse_params(cls, fields: Fields) -> dict[str, Any]:
        """Every parameter, read and checked from a table (defaults filled in)."""
        ...

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        """What the servers must be, if these are refused for these parameters; else None."""
        ...

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        """Entries the structure will hold, known before building (for the memory estimate)."""
        ...

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        """How a run with these parameters is named in tables, e.g. "k=160" or "nginx"."""
        ...

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        """The public API: keyword parameters and servers checked, with the scenario's
        one-line errors (`checked_keywords`), then built."""
        ...

    @classmethod
    def from_params(cls, servers: Sequence[Server], params: dict[str, Any]) -> Self:
        """Built from what `parse_params` returned, for servers `check_servers` accepted:
        nothing is checked again (default: `build(servers, **params)`, which checks)."""
        ...

    @classmethod
    def removal_problem(cls, servers: Sequence[Server], name: str) -> str | None:
        """Why removing server `name` from `servers` cannot be measured, or None if it can
        (default: None, any server)."""
        ...

    @classmethod
    def metric_problem(cls, metric: str) -> str | None:
        """Why the named metric cannot be measured on this algorithm, or None if it can
        (default: None, every metric)."""
        ...

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """Seconds its own work takes beyond its build (`estimated_build_seconds`) and
        hashing keys (what every recipe pays): `reference_keys` looked up by its
        vectorised reference, `fast_keys` by its fastest form and `plain_keys` by its
        plain-Python reference; and what sets them. Checked against the run's time budget
        before any work (default: 0, nothing beyond)."""
        ...

    @classmethod
    def estimated_build_seconds(cls, servers: Sequence[Server], params: dict[str, Any]
                                ) -> tuple[float, str]:
        """Seconds one `from_params` takes for these servers (a ring's points generated and
        held in its own layout; an algorithm's tables filled), and what sets them; what
        its reference builds on first use is priced by `estimated_seconds` where it is the
        larger cost (Maglev's, anchor's, DxHash's plain tables). Checked against the run's
        time budget before any work, once for every build a run makes (default:
        `build_seconds_per_entry`, or `UNMEASURED_BUILD_SECONDS_PER_ENTRY` when it is None,
        per estimated entry)."""
        ...

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server], params: dict[str, Any]) -> float:
        """Bytes one built form holds at most, its reference's tables included, known
        before building (for the memory estimate of an algorithm without a ring; default:
        `ALGORITHM_BYTES_PER_ENTRY` per estimated entry)."""
        ...

    @classmethod
    def estimated_client_bytes(cls, servers: Sequence[Server], params: dict[str, Any]
                               ) -> float:
        """The most bytes a client's build holds: what `from_params` builds and routes
        with (`route`), its references never built (a `[clients]` recipe, a peer's claimed
        `routes_like`); default: `estimated_bytes`."""
        ...

    @property
    def servers(self) -> tuple[Server, ...]: ...

    @property
    def params(self) -> dict[str, Any]:
        """The parameters it was built with, defaults filled in (JSON-serialisable)."""
        ...

    @property
    def form(self) -> str:
        """Name of this physical form (the ring's layout; the algorithm's name otherwise)."""
        ...

    @property
    def key_bits(self) -> int:
        """Width of the key hashes `lookup` takes (32 or 64)."""
        ...

    @property
    def entries(self) -> int:
        """Entries of the structure (points, slots, servers)."""
        ...

    @property
    def entry_size(self) -> int:
        """Bytes per entry of the representation, padding included."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes of the structure itself, as the algorithm accounts for it."""
        ...

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]: ...

    def route(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]: ...

    def lookup(self, key_hash: int) -> int: ...

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        ...

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]: ...

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]: ...

    def forms(self, names: Sequence[str]) -> dict[str, Algorithm]: ...

    def exact_shares(self) -> npt.NDArray[np.float64] | None:
        """Each server's exact share of the key-hash space, where the structure gives it."""
        ...

    @property
    def ring(self) -> Ring | None:
        """The sorted points it routes with by arcs, the ring-only metrics' subject; None when
        it routes otherwise (default: None)."""
        ...

    @property
    def construction(self) -> Construction | None:
        """The construction that built its ring (default: None)."""
        ...

    @property
    def route_one(self) -> Callable[[bytes], int] | None:
        """`route([key])[0]` for one key in one call, timed as the whole route where given
        (default: None)."""
        ...

    def reset(self) -> None:
        """Empty a stateful algorithm's stream of requests, so that the next `lookup` is a
        first request (default: nothing, a stateless algorithm has none)."""
        ...

    def slot_counts(self) -> npt.NDArray[np.int64] | None:
        """Slots of its lookup table each server holds, where it has one (default: None)."""
        ...

    def without(self, index: int) -> Algorithm | None:
        """This algorithm after server `index` leaves, as a deployment loses it; None when it
        is rebuilt from the shorter list instead (default: None)."""
        ...

    def rebalanced(self, cv_target: float) -> tuple[Algorithm, Rebalanced] | None:
        """This algorithm with points re-placed to bring its arc CV per weight to `cv_target`,
        and what that moved; None when it cannot re-place points (default: None)."""
        ...


#: bytes an entry of an algorithm's structure holds at most, by default: a Python list's
#: pointer and int object for the reference, and the fast form's own table
ALGORITHM_BYTES_PER_ENTRY = 64

#: seconds a build takes per entry of an algorithm that does not say (a plugin's): a
#: plain-Python table an entry, as the slowest of ours fill theirs (anchor's reference,
#: 0.5 us a slot)
UNMEASURED_BUILD_SECONDS_PER_ENTRY = 1e-6

#: the members of `Algorithm` with a default in `Routing`
DEFAULTS: tuple[str, ...] = (
    "from_params", "removal_problem", "metric_problem", "estimated_seconds",
    "estimated_build_seconds",
    "estimated_bytes", "estimated_client_bytes", "ring",
    "construction", "route_one", "reset", "slot_counts", "without", "rebalanced")


def checked_keywords(algorithm: type[Algorithm], servers: Sequence[Server],
                     params: dict[str, Any]) -> dict[str, Any]:
    """Keyword parameters of `build` checked like a scenario table (declared, in range, none
    unknown), and the servers checked for them: the one path every algorithm's build takes."""
    fields = keyword_fields(f"algorithm {algorithm.name!r}", params)
    checked = algorithm.parse_params(fields)
    fields.finish()
    problem = algorithm.check_servers(servers, checked)
    if problem:
        raise HarnessError(f"algorithm {algorithm.name!r}: servers must be {problem}")
    return checked


def require_servers_for(algorithm: type[Algorithm], servers: Sequence[Server],
                        params: dict[str, Any]) -> Sequence[Server]:
    """The servers, if the algorithm takes them with these (checked) parameters; else the
    error `build` gives (`checked_keywords`)."""
    problem = algorithm.check_servers(servers, params)
    if problem:
        raise HarnessError(f"algorithm {algorithm.name!r}: servers must be {problem}")
    return servers


def rebuilt(algorithm: type[Algorithm], params: dict[str, Any],
            servers: Sequence[Server]) -> Algorithm:
    """The algorithm built again from its checked parameters on another fleet (a metric's
    fleet after a change), the servers checked too: not every list a metric rebuilds for (a
    process's eligibility sets) was checked at load. A run gives its metrics this, bound to
    its recipe, rather than a function of its own they would call back up into."""
    return algorithm.from_params(require_servers_for(algorithm, servers, params), params)


class Routing:
    """The base class of every algorithm: `route`, which follows from `hash_keys` and
    `lookup_many`, and the defaults of the protocol's optional members (`DEFAULTS`)."""

    #: no ring: the ring-only metrics (collisions, counts, processes) leave it out
    ring: Ring | None = None
    #: no construction: balance has no theory to compare with, and results no ring
    construction: Construction | None = None
    #: no one-call route: the comparison times no "(route)" row
    route_one: Callable[[bytes], int] | None = None
    #: seconds `from_params` takes per estimated entry, measured by
    #: benchmarks/build_rates.py (each algorithm says where); None: not measured, priced at
    #: `UNMEASURED_BUILD_SECONDS_PER_ENTRY` (tests/unit/test_build_prices.py requires every
    #: registered algorithm of ours to say)
    build_seconds_per_entry: ClassVar[float | None] = None

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        raise NotImplementedError

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        raise NotImplementedError

    def route(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return self.lookup_many(self.hash_keys(keys))

    @classmethod
    def from_params(cls, servers: Sequence[Server], params: dict[str, Any]) -> Self:
        """`build(servers, **params)`: for an algorithm that defines only `build` (a plugin's),
        whose parameters are then checked again; ours define `from_params` themselves."""
        built = cast("type[Algorithm]", cls).build(servers, **params)
        return cast(Self, built)

    @classmethod
    def removal_problem(cls, servers: Sequence[Server], name: str) -> str | None:
        """None: any server can be removed."""
        return None

    @classmethod
    def metric_problem(cls, metric: str) -> str | None:
        """None: every metric can be measured."""
        return None

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """0: nothing beyond the work every recipe does."""
        return 0.0, ""

    @classmethod
    def estimated_build_seconds(cls, servers: Sequence[Server], params: dict[str, Any]
                                ) -> tuple[float, str]:
        """`build_seconds_per_entry` per estimated entry (`UNMEASURED_BUILD_SECONDS_PER_ENTRY`
        when it is None)."""
        algorithm = cast("type[Algorithm]", cls)
        rate = (UNMEASURED_BUILD_SECONDS_PER_ENTRY if cls.build_seconds_per_entry is None
                else cls.build_seconds_per_entry)
        entries = algorithm.estimated_entries(servers, params)
        return rate * entries, f"{algorithm.name} builds {entries:,} entries"

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server], params: dict[str, Any]) -> float:
        """`ALGORITHM_BYTES_PER_ENTRY` per estimated entry: a C or numpy table beside a plain
        reference that keeps Python lists of it."""
        # Every algorithm declares estimated_entries (it is not optional), Routing does not.
        algorithm = cast("type[Algorithm]", cls)
        return float(ALGORITHM_BYTES_PER_ENTRY * algorithm.estimated_entries(servers, params))

    @classmethod
    def estimated_client_bytes(cls, servers: Sequence[Server], params: dict[str, Any]
                               ) -> float:
        """`estimated_bytes`: an algorithm whose references cost more than its built form
        says what a client's build alone holds."""
        return cast("type[Algorithm]", cls).estimated_bytes(servers, params)

    def reset(self) -> None:
        """Nothing: a stateless algorithm has no stream of requests."""

    def slot_counts(self) -> npt.NDArray[np.int64] | None:
        """None: no lookup table of slots."""
        return None

    def without(self, index: int) -> Algorithm | None:
        """None: the algorithm is rebuilt from the shorter server list."""
        return None

    def rebalanced(self, cv_target: float) -> tuple[Algorithm, Rebalanced] | None:
        """None: nothing to re-place."""
        return None


def unweighted_problem(algorithm: str, servers: Sequence[Server]) -> str | None:
    """What the servers of an algorithm without weights must be, if any weighs other than 1."""
    problem = server_list_problem(servers)
    if problem:
        return problem
    weighted = next((s for s in servers if s.weight != 1), None)
    if weighted is not None:
        return (f"all of weight 1, since {algorithm} has no weights (got weight "
                f"{weighted.weight:g} for {weighted.name!r})")
    return None


class OneForm(Routing):
    """An algorithm with a single physical form, its parameters declared as `Param`s.

    Holds the servers and parameters; `checked_params` reads keyword arguments
    as a scenario table is read, so `build` gets the scenario's one-line errors;
    `from_params` (the scenario's path) takes parameters already read.
    """

    name: ClassVar[str]
    #: the parameters `parse_params` reads, in order
    declared: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        self._servers, self._params = tuple(servers), dict(params)

    @classmethod
    def parse_params(cls, fields: Fields) -> dict[str, Any]:
        return parse_params(cls.declared, fields)

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return server_list_problem(servers)

    @classmethod
    def checked_params(cls, servers: Sequence[Server], params: dict[str, Any]) -> dict[str, Any]:
        """Keyword parameters checked like a scenario table, and the servers for them."""
        return checked_keywords(cast("type[Algorithm]", cls), servers, params)

    @classmethod
    def from_params(cls, servers: Sequence[Server], params: dict[str, Any]) -> Self:
        return cls(servers, params)

    @classmethod
    def metric_problem(cls, metric: str) -> str | None:
        """Why the named metric cannot be measured on this algorithm, or None if it can."""
        if metric == "process":
            return ("a process is costed as rings held in layouts, one per eligibility set; "
                    f"{cls.name} has no layouts")
        return None

    @property
    def servers(self) -> tuple[Server, ...]:
        return self._servers

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def form(self) -> str:
        return self.name

    def forms(self, names: Sequence[str]) -> dict[str, Algorithm]:
        return {self.name: cast(Algorithm, self)}
