"""Envoy's `ring_hash` load balancer: a ketama-style ring of 64-bit hashes, sized by weight.

Read from `RingHashLoadBalancer::Ring` (the ring's construction) and `chooseHost`
(source/extensions/load_balancing_policies/ring_hash/ring_hash_lb.cc), the weight
normalisation of `ThreadAwareLoadBalancerBase` (load_balancing_policies/common/
thread_aware_lb_impl.cc) and `MurmurHash::murmurHash2` (source/common/common/hash.h);
checked against every expected ring and route of Envoy's own tests that a flat host
list covers (test/extensions/load_balancing_policies/ring_hash/ring_hash_lb_test.cc,
kept in tests/fixtures/envoy_ring_hash_vectors.json) by tests/unit/test_envoy_ring_hash.py.

Weights. Envoy normalises each host's weight to `w / sum(w)` (a double) and takes the
smallest, `m`. The ring's `scale` is `min(ceil(m * minimum_ring_size) / m,
maximum_ring_size)`, so the lightest host gets a whole number of hashes when the ring
may grow that far; the ring holds `ceil(scale)` entries. Hosts are walked in their
configuration order with two running sums: `target += scale * weight`, and a host
takes hashes while `current < target` (one each, `current += 1`). A fractional share
is thus carried into the next host, and a host with a tiny share may get none.
`minimum_ring_size` defaults to 1,024 and `maximum_ring_size` to 8,388,608 (8M);
Envoy refuses a minimum above the maximum.

Points. Host hash key k (its address "ip:port", which here is the server name; or
its hostname or endpoint metadata `hash_key` when configured, which the name then
stands for) gives the points `hash("<k>_<i>")` for i = 0, 1, ... in decimal, with
`hash_function` xxHash64 (seed 0, the default, `xx_hash`) or `murmur_hash_2`:
libstdc++'s 64-bit MurmurHash2 (`std::hash<std::string>`'s), seed 0xc70f6907.
Points are sorted by hash (std::sort: of two equal 64-bit hashes either may come
first; we keep the lower server index, and none was seen in any test).

Keys. A request's hash comes from the route's hash policy: for a header, a cookie
or a query parameter it is xxHash64 (seed 0) of the value, which is what
`key_hashes` computes. Its host is the first point >= hash, wrapping to the first
(Envoy's `chooseHost` is libketama's binary search, with the same result). A
retry that refuses the host (`retry_host_predicate`) tries attempt n at the
point n places further on, modulo the ring size (`choose_index`).

Not modelled (they need a live Envoy or its control plane): priority levels and
the overflow of load between them, the panic threshold (below 50% healthy hosts
by default the ring is built from all hosts, healthy or not), locality-weighted
balancing (whose normalised weights `normalized_locality_weights` computes, for
Envoy's own vectors), subsets (`subset_lb_config`), bounded loads
(`hash_balance_factor`), which route by the live count of active requests per
host, and a request without a hash, which is routed by a random number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError, ScenarioError
from harness.core.hashing import xxh64, xxh64_many
from harness.core.params import Param, parse_keywords
from harness.core.ring import Ring
from harness.core.servers import Server, require_servers
from harness.recipes.constructions.base import ConstructionBase

DEFAULT_MINIMUM_RING_SIZE = 1024
DEFAULT_MAXIMUM_RING_SIZE = 8 * 1024 * 1024
#: Envoy's own limit on both sizes (the protobuf fields' `lte: 8388608`); Envoy takes a
#: minimum of 0, which gives an empty ring, and we ask for at least 1
RING_SIZE_LIMIT = 8 * 1024 * 1024
HASH_FUNCTIONS = ("xx_hash", "murmur_hash_2")
#: Envoy's `MurmurHash::STD_HASH_SEED`, the seed of libstdc++'s std::hash<std::string>
STD_HASH_SEED = 0xC70F6907
#: Envoy sums host weights in 64 bits and refuses a sum above uint32's maximum
MAX_WEIGHT_SUM = 2**32 - 1
_MURMUR_MULTIPLIER = 0xC6A4A7935BD1E995
_MASK64 = 2**64 - 1


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def murmur_hash2_64(data: bytes, seed: int = STD_HASH_SEED) -> int:
    """libstdc++'s 64-bit MurmurHash2 (`_Hash_bytes`), as Envoy's `murmurHash2`: the plain
    reference. Whole 8-byte words are read little-endian, the tail as one little-endian
    integer of its bytes."""
    length = len(data)
    h = (seed ^ (length * _MURMUR_MULTIPLIER)) & _MASK64
    aligned = length & ~7
    for offset in range(0, aligned, 8):
        word = int.from_bytes(data[offset:offset + 8], "little")
        h ^= (_shift_mix((word * _MURMUR_MULTIPLIER) & _MASK64) * _MURMUR_MULTIPLIER) & _MASK64
        h = (h * _MURMUR_MULTIPLIER) & _MASK64
    if length & 7:
        h ^= int.from_bytes(data[aligned:], "little")
        h = (h * _MURMUR_MULTIPLIER) & _MASK64
    h = (_shift_mix(h) * _MURMUR_MULTIPLIER) & _MASK64
    return _shift_mix(h)


def murmur_hash2_64_many(names: Sequence[bytes],
                         seed: int = STD_HASH_SEED) -> npt.NDArray[np.uint64]:
    """`murmur_hash2_64` of every name, vectorised: names of one length form a matrix
    hashed a word at a time (uint64 arithmetic wraps as C's)."""
    mul = np.uint64(_MURMUR_MULTIPLIER)
    shift = np.uint64(47)
    lengths = np.fromiter(map(len, names), dtype=np.int64, count=len(names))
    hashes = np.zeros(len(names), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for length in np.unique(lengths).tolist():
            rows = np.flatnonzero(lengths == length)
            h = np.full(len(rows), (seed ^ (length * _MURMUR_MULTIPLIER)) & _MASK64,
                        dtype=np.uint64)
            if length:
                matrix = np.frombuffer(b"".join([names[i] for i in rows.tolist()]),
                                       dtype=np.uint8).reshape(len(rows), length)
                aligned = length & ~7
                if aligned:
                    words = np.ascontiguousarray(matrix[:, :aligned]).view("<u8")
                    for column in range(aligned // 8):
                        word = words[:, column].astype(np.uint64) * mul
                        word = (word ^ (word >> shift)) * mul
                        h = (h ^ word) * mul
                if length & 7:
                    tail = np.zeros((len(rows), 8), dtype=np.uint8)
                    tail[:, :length & 7] = matrix[:, aligned:]
                    h = (h ^ tail.view("<u8")[:, 0].astype(np.uint64)) * mul
            h = (h ^ (h >> shift)) * mul
            hashes[rows] = h ^ (h >> shift)
    return hashes


def normalized_weights(weights: Sequence[int], locality_weight: float = 1.0) -> list[float]:
    """Envoy's `normalizeHostWeights`: `w * locality_weight / sum(w)` in doubles."""
    total = sum(weights)
    return [weight * locality_weight / total for weight in weights]


def normalized_locality_weights(groups: Sequence[Sequence[int]],
                                locality_weights: Sequence[int]) -> list[list[float]]:
    """Envoy's `normalizeLocalityWeights` (locality-weighted balancing): each locality's
    hosts normalised within it, times its share of the locality weights; a locality of
    weight 0 contributes no host (an empty list)."""
    total = sum(locality_weights)
    return [normalized_weights(group, locality / total) if locality else []
            for group, locality in zip(groups, locality_weights, strict=True)]


def hash_counts(weights: Sequence[float], minimum_ring_size: int,
                maximum_ring_size: int) -> tuple[int, list[int]]:
    """The ring's size and each host's number of hashes, from normalised weights, by
    Envoy's running sums (see the module's docstring)."""
    smallest = min(weights)
    scale = min(math.ceil(smallest * minimum_ring_size) / smallest, float(maximum_ring_size))
    current = 0.0
    target = 0.0
    counts = []
    for weight in weights:
        target += scale * weight
        # Envoy's `while (current < target) { ++current; }`, one step at a time: `current`
        # stays a whole number (exact in a double below 2**53, and the ring is at most
        # 2**23), so the steps are as many as the whole numbers from it up to `target`.
        taken = max(0, math.ceil(target) - int(current))
        current += taken
        counts.append(taken)
    return math.ceil(scale), counts


def point_names(keys: Sequence[str], counts: Sequence[int]) -> list[bytes]:
    """`"<key>_<i>"` for each host's hashes, hosts in order."""
    return [f"{key}_{i}".encode() for key, count in zip(keys, counts, strict=True)
            for i in range(count)]


def point_hashes(names: Sequence[bytes], hash_function: str) -> npt.NDArray[np.uint64]:
    """The ring's hash of each point name: xxHash64 in C, MurmurHash2 in numpy."""
    if hash_function == "xx_hash":
        return xxh64_many(names)
    return murmur_hash2_64_many(names)


#: point names hashed per batch: the names of one batch are Python bytes (about 60 bytes
#: each), so a ring of millions of points is named and hashed a batch at a time
NAME_BATCH = 1 << 16


def ring_points(keys: Sequence[str], weights: Sequence[float], minimum_ring_size: int,
                maximum_ring_size: int, hash_function: str
                ) -> tuple[int, list[int], npt.NDArray[np.uint64], npt.NDArray[np.uint16]]:
    """Envoy's ring from host hash keys and normalised weights, hosts in order: its size,
    each host's hashes, and every point (position, host index) in generation order. The
    names are made and hashed `NAME_BATCH` at a time into one uint64 array."""
    size, counts = hash_counts(weights, minimum_ring_size, maximum_ring_size)
    positions = np.empty(sum(counts), dtype=np.uint64)
    batch: list[bytes] = []
    filled = 0
    for key, count in zip(keys, counts, strict=True):
        for i in range(count):
            batch.append(f"{key}_{i}".encode())
            if len(batch) == NAME_BATCH:
                positions[filled:filled + len(batch)] = point_hashes(batch, hash_function)
                filled += len(batch)
                batch = []
    if batch:
        positions[filled:filled + len(batch)] = point_hashes(batch, hash_function)
    owners = np.repeat(np.arange(len(keys), dtype=np.uint16), counts)
    return size, counts, positions, owners


def choose_index(positions: Sequence[int], key_hash: int, attempt: int = 0) -> int:
    """Envoy's `chooseHost` on the sorted positions: the first >= hash (wrapping to 0),
    then `attempt` places further on, modulo the ring's size. The plain reference."""
    low, high = 0, len(positions)
    while low < high:
        middle = (low + high) // 2
        if positions[middle] < key_hash:
            low = middle + 1
        else:
            high = middle
    index = 0 if low == len(positions) else low
    return (index + attempt) % len(positions) if attempt else index


class EnvoyRingHashConstruction(ConstructionBase):
    """Envoy's ring hash: xxHash64 (or MurmurHash2) of "<address>_<i>", sized by weight."""

    name: ClassVar[str] = "envoy_ring_hash"
    params: ClassVar[tuple[Param, ...]] = (
        Param("hash_function", "choice", HASH_FUNCTIONS[0],
              "hash of the points \"<address>_<i>\": xxHash64 (Envoy's default) or "
              "libstdc++'s 64-bit MurmurHash2 (`MURMUR_HASH_2`)", choices=HASH_FUNCTIONS),
        Param("minimum_ring_size", "int", DEFAULT_MINIMUM_RING_SIZE,
              "Envoy's minimum_ring_size: the lightest host gets a whole number of hashes "
              "at least this ring's share", minimum=1, maximum=RING_SIZE_LIMIT),
        Param("maximum_ring_size", "int", DEFAULT_MAXIMUM_RING_SIZE,
              "Envoy's maximum_ring_size: the ring's size is capped here, shares "
              "becoming fractional", minimum=1, maximum=RING_SIZE_LIMIT),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        self.hash_function: str = values["hash_function"]
        self.minimum_ring_size: int = values["minimum_ring_size"]
        self.maximum_ring_size: int = values["maximum_ring_size"]
        found = self.params_problem(values)
        if found is not None:
            key, expected = found
            raise ScenarioError(f"construction {self.name!r}: {key} must be {expected} "
                                f"(got {values[key]})")

    @staticmethod
    def params_problem(values: dict[str, Any]) -> tuple[str, str] | None:
        """Envoy's rule across the sizes (it refuses "minimum_ring_size (20) >
        maximum_ring_size (10)"): the field at fault and what it must be, or None."""
        if values["maximum_ring_size"] < values["minimum_ring_size"]:
            return ("maximum_ring_size",
                    f"at least minimum_ring_size ({values['minimum_ring_size']}), as Envoy "
                    "refuses a minimum above the maximum")
        return None

    @property
    def bits(self) -> int:
        return 64

    @property
    def label(self) -> str:
        parts = [self.name]
        if self.hash_function != HASH_FUNCTIONS[0]:
            parts.append(self.hash_function)
        if self.minimum_ring_size != DEFAULT_MINIMUM_RING_SIZE:
            parts.append(f"min={self.minimum_ring_size:,}")
        if self.maximum_ring_size != DEFAULT_MAXIMUM_RING_SIZE:
            parts.append(f"max={self.maximum_ring_size:,}")
        return " ".join(parts)

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        for server in servers:
            if server.weight != int(server.weight) or server.weight < 1:
                return (f"positive integer weights, as Envoy's load_balancing_weight "
                        f"(server {server.name!r} has {server.weight})")
        if sum(int(server.weight) for server in servers) > MAX_WEIGHT_SUM:
            return f"weights summing to at most {MAX_WEIGHT_SUM:,}, as Envoy requires"
        return None

    def ring_size(self, servers: Sequence[Server]) -> int:
        """Entries of Envoy's ring for these servers (before any collision)."""
        return self._counts(servers)[0]

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return self._counts(servers)[1]

    def _counts(self, servers: Sequence[Server]) -> tuple[int, list[int]]:
        require_servers(self.name, servers)
        problem = self.check_servers(servers)
        if problem:
            raise HarnessError(f"{self.name}: servers must have {problem}")
        weights = normalized_weights([int(server.weight) for server in servers])
        return hash_counts(weights, self.minimum_ring_size, self.maximum_ring_size)

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        require_servers(self.name, servers)
        problem = self.check_servers(servers)
        if problem:
            raise HarnessError(f"{self.name}: servers must have {problem}")
        _, _, positions, owners = ring_points(
            [server.name for server in servers],
            normalized_weights([int(server.weight) for server in servers]),
            self.minimum_ring_size, self.maximum_ring_size, self.hash_function)
        return Ring.from_owned_points(positions, owners, bits=64,
                                      servers=tuple(s.name for s in servers))

    def build_ring_reference(self, servers: Sequence[Server]) -> Ring:
        """`build_ring` point by point in Python (the xxhash library, `murmur_hash2_64`)."""
        counts = self.point_counts(servers)
        one = xxh64 if self.hash_function == "xx_hash" else murmur_hash2_64
        positions = [one(name) for name in point_names([s.name for s in servers], counts)]
        owners = [index for index, count in enumerate(counts) for _ in range(count)]
        return Ring.from_points(np.array(positions, dtype=np.uint64), owners, bits=64,
                                servers=tuple(s.name for s in servers))

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint64]:
        """xxHash64 (seed 0) of each key, as Envoy's header, cookie and query hash policies."""
        return xxh64_many(keys)
