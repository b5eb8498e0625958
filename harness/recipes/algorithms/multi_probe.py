"""Multi-probe consistent hashing: Appleton & O'Reilly, "Multi-probe consistent
hashing" (2015), with the rules of dgryski/go-mpchash's `Multi.Hash`.

`ALGORITHMS["multi-probe"].build(servers, probes=21)` puts one point per
server on a 64-bit circle and hashes each key once per probe:
- a server's point is `hashf(name, 0)`; a key's probe i (i = 1..probes) is
  `hashf(key, i)`;
- each probe's successor is the first point strictly greater than it,
  wrapping to the smallest point;
- the probe whose successor is nearest (distance `point - probe`, modulo
  2**64) wins; an earlier probe wins a tie;
- servers whose points coincide: the later one in configuration order owns
  the point (go-mpchash maps point to server in a map, the last one written).

go-mpchash leaves `hashf(bytes, seed)` to the caller. Here it is xxHash64 of
the bytes' xxHash64 (seed 0), taken as 8 little-endian bytes, with the seed:
so a key's one 64-bit hash h = xxHash64(key, 0) decides all its probes
(`lookup(h)`), and batches of key hashes are looked up without the keys.
The paper: 21 probes give a peak-to-mean load of about 1.05.

No weights (go-mpchash has none): servers must all weigh 1. The fast paths
are in C (cext/algorithms.c); the references use the xxhash library and
bisect (plain) or numpy (vectorised).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.hashing import xxh64, xxh64_many
from harness.core.native import algorithms as c_algorithms
from harness.core.params import Param
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm, unweighted_problem

DEFAULT_PROBES = 21
MAX_PROBES = 4096

# The bounds worded so that the message names multi-probe.
PROBES = Param("probes", "int", DEFAULT_PROBES, "hashes of each key (probe seeds 1..probes)",
               minimum=1, maximum=MAX_PROBES,
               expected=f"an integer from 1 to {MAX_PROBES:,}: the number of times "
                        "multi-probe hashes each key")

_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def hashf(data: bytes, seed: int) -> int:
    """The hash function given to go-mpchash's rules (see the module docstring)."""
    return xxh64(xxh64(data, 0).to_bytes(8, "little"), seed)


def probe_hash(key_hash: int, seed: int) -> int:
    """Probe `seed` of a key whose xxHash64 is `key_hash`."""
    return xxh64(key_hash.to_bytes(8, "little"), seed)


def _rotl(x: npt.NDArray[np.uint64], r: int) -> npt.NDArray[np.uint64]:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def probe_hashes(key_hashes: npt.NDArray[np.uint64], seed: int) -> npt.NDArray[np.uint64]:
    """xxHash64 of each 8-byte little-endian key hash with `seed`, vectorised (XXH64's path
    for inputs shorter than 32 bytes: one 8-byte lane, then the avalanche)."""
    p1, p2 = np.uint64(_P1), np.uint64(_P2)
    h = np.full(len(key_hashes), (seed + _P5 + 8) % 2**64, dtype=np.uint64)
    lane = _rotl(key_hashes * p2, 31) * p1
    h = _rotl(h ^ lane, 27) * p1 + np.uint64(_P4)
    h ^= h >> np.uint64(33)
    h *= p2
    h ^= h >> np.uint64(29)
    h *= np.uint64(_P3)
    h ^= h >> np.uint64(32)
    return h


class MultiProbeAlgorithm(OneForm):
    """One point per server, `probes` hashes per key."""

    name: ClassVar[str] = "multi-probe"
    #: a build: each server's hash, sorted (0.7 us a server on 1,000); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 1.5e-6
    declared: ClassVar[tuple[Param, ...]] = (PROBES,)

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        self.seeds = list(range(1, params["probes"] + 1))
        hashes = xxh64_many([s.name.encode() for s in self._servers], 0)
        points = xxh64_many([int(h).to_bytes(8, "little") for h in hashes], 0)
        # Sorted by point, and among equal points the later server last: it is kept.
        order = np.lexsort((np.arange(len(points)), points))
        last_of_equal = np.append(points[order][1:] != points[order][:-1], True)
        # The C arrays are the only copy kept: the memory figures count what routing needs.
        self._probe = c_algorithms.CMultiProbe(points[order][last_of_equal],
                                             order[last_of_equal].astype(np.uint16), self.seeds)
        self.lookup = self._probe.lookup

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return unweighted_problem("multi-probe", servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return len(servers)

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return f"{params.get('probes', DEFAULT_PROBES)} probes"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def points(self) -> npt.NDArray[np.uint64]:
        """The servers' points, sorted."""
        return self._probe.points()

    @property
    def owners(self) -> npt.NDArray[np.uint16]:
        """The server (index) of each point."""
        return self._probe.owners()

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        return self._probe.entries

    @property
    def entry_size(self) -> int:
        return 10  # a uint64 point and a uint16 owner, in two arrays

    @property
    def nbytes(self) -> int:
        return self._probe.nbytes

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return xxh64_many(keys, 0)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self._probe.lookup_many(key_hashes)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        keys = np.asarray(key_hashes, dtype=np.uint64)
        points = self.points
        best = np.full(len(keys), np.iinfo(np.uint64).max, dtype=np.uint64)
        at = np.zeros(len(keys), dtype=np.int64)
        for seed in self.seeds:
            probe = probe_hashes(keys, seed)
            successor = np.searchsorted(points, probe, side="right") % len(points)
            distance = points[successor] - probe
            nearer = distance < best
            best[nearer], at[nearer] = distance[nearer], successor[nearer]
        return np.take(self.owners, at)

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        points, owners = self.points.tolist(), self.owners.tolist()
        answers = []
        for key_hash in key_hashes:
            best, at = 2**64, 0
            for seed in self.seeds:
                probe = probe_hash(int(key_hash), seed)
                successor = bisect.bisect_right(points, probe) % len(points)
                distance = (points[successor] - probe) % 2**64
                if distance < best:
                    best, at = distance, successor
            answers.append(owners[at])
        return answers

    def exact_shares(self) -> npt.NDArray[np.float64]:
        """Each server's share of keys whose probes fall independently and uniformly on the
        circle (what the probe hashes stand for), in closed form.

        A probe at distance x before a point (inside that point's arc, of length g) loses
        to another probe only if that one lands nearer to its own successor: with F(x) =
        sum over arcs of min(x, g_j), the chance that one probe is farther than x is 1 - F.
        A point of arc g therefore wins probes * integral_0^g (1 - F(x))^(probes-1) dx of
        the keys. F is linear between consecutive arc lengths, so the integral is a sum of
        closed-form pieces over the sorted arcs. Keys cannot give this: at N = 100 the
        noise of 200,000 keys alone is a peak-to-mean of 1.056.
        """
        points = [int(p) for p in self.points]
        circle = 2**64
        # The arc ending at each point (from the point before it, wrapping); one point owns
        # the whole circle. Python ints: the differences are exact before the division.
        arcs = np.array([(p - points[i - 1]) % circle for i, p in enumerate(points)],
                        dtype=np.float64) / circle
        if len(points) == 1:
            arcs[:] = 1.0
        order = np.argsort(arcs, kind="stable")
        ascending = arcs[order]
        count, probes = len(ascending), len(self.seeds)
        below = np.concatenate([[0.0], np.cumsum(ascending)[:-1]])  # sum of shorter arcs
        farther = count - np.arange(count)  # arcs at least this long: F's slope here
        start = np.concatenate([[0.0], ascending[:-1]])
        piece = ((1 - below - farther * start) ** probes
                 - (1 - below - farther * ascending) ** probes) / (farther * probes)
        per_point = np.empty(count)
        per_point[order] = probes * np.cumsum(piece)
        return np.bincount(self.owners, weights=per_point,
                           minlength=len(self.servers)).astype(np.float64)
