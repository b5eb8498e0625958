"""Weighted rendezvous hashing, the logarithmic method of Schindelhauer & Schomaker,
"Weighted Distributed Hash Tables" (2005), exactly as facebook/mcrouter's
`WeightedRendezvousHashFunc` computes it (mcrouter/lib/WeightedRendezvousHashFunc.cpp,
with mcrouter/lib/RendezvousHashHelper.h and mcrouter/lib/fbi/hash.c).

`ALGORITHMS["rendezvous-weighted"].build(servers)` takes no parameters; it uses the
servers' weights as they are (doubles, not normalised: only their ratios matter). What
mcrouter does, step by step:
- each server's name is hashed once, `murmur_hash_64A(name, kRendezvousHashSeed)`,
  kRendezvousHashSeed = 4193360111 (the constant furc_hash uses too);
- a key is hashed once, `murmur_hash_64A(key, kRendezvousExtraHashSeed)`,
  kRendezvousExtraHashSeed = 2718281828; that 64-bit hash is what `lookup` takes;
- server i scores the key `weight_i * (1.0 / (-log(u)))` (natural log, not log1p), with
  `u = (hash128to64(server_hash, key_hash) & (2**53 - 1)) / 2**53` in [0, 1): CityHash's
  Hash128to64 with the server hash as the upper half. u == 0 gives -log(u) = +inf and a
  score of 0, which never wins;
- servers are scored in configuration order from a best score of 0 at position 0, and
  only a strictly greater score takes over: the first server wins a tie.

mcrouter gives an endpoint missing from its weights map the weight 0.5, and takes 0 or
negative weights (such a server never wins). Here every server has a weight, and it must
be a positive finite number: refused before any work otherwise.

The fast paths are in C (cext/algorithms.c, libm's log as mcrouter's std::log); the
plain reference is Python's math.log, which is the same libm function. The vectorised
reference uses numpy's log, which may differ from libm's in the last bit: keys whose two
best scores are that close are settled by the plain reference (`CLOSE_GAP`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.native import algorithms as c_algorithms
from harness.core.native import hashes as c_hashes
from harness.core.servers import Server, server_list_problem
from harness.recipes.algorithms.base import OneForm

#: mcrouter's kRendezvousHashSeed, for server names (RendezvousHashHelper.h)
SERVER_HASH_SEED = 4193360111
#: mcrouter's kRendezvousExtraHashSeed, for keys (RendezvousHashHelper.h)
KEY_HASH_SEED = 2718281828

MASK64 = 2**64 - 1
_M, _R = 0xC6A4A7935BD1E995, 47
_KMUL = 0x9DDFEA08EB382D69
_FIFTY_THREE_ONES = 2**53 - 1
#: relative gap between a key's two best vectorised scores (or any two of its best R, for
#: replica sets) below which the plain
#: reference decides: numpy's log and libm's agree to a few units in the last place
#: (about 1e-16 relative), so a wider gap cannot be reordered by their difference.
CLOSE_GAP = 1e-12


def murmur64a(data: bytes, seed: int) -> int:
    """MurmurHash64A (MurmurHash2, 64-bit, for 64-bit platforms) in plain Python, as
    mcrouter's murmur_hash_64A: 8-byte blocks read little-endian, tail bytes unsigned."""
    h = (seed ^ (len(data) * _M)) & MASK64
    whole = len(data) // 8 * 8
    for i in range(0, whole, 8):
        k = (int.from_bytes(data[i:i + 8], "little") * _M) & MASK64
        k = ((k ^ (k >> _R)) * _M) & MASK64
        h = ((h ^ k) * _M) & MASK64
    if len(data) > whole:
        h = ((h ^ int.from_bytes(data[whole:], "little")) * _M) & MASK64
    h = ((h ^ (h >> _R)) * _M) & MASK64
    return h ^ (h >> _R)


def hash128to64(upper: int, lower: int) -> int:
    """CityHash's Hash128to64, as RendezvousHashHelper.h copies it."""
    a = ((lower ^ upper) * _KMUL) & MASK64
    a ^= a >> 47
    b = ((upper ^ a) * _KMUL) & MASK64
    b ^= b >> 47
    return (b * _KMUL) & MASK64


def score(weight: float, server_hash: int, key_hash: int) -> float:
    """A server's score for a key, in mcrouter's order of operations."""
    u = (hash128to64(server_hash, key_hash) & _FIFTY_THREE_ONES) / 2.0**53
    if u == 0.0:
        return weight * 0.0  # IEEE: -log(0) = +inf, 1/inf = 0 (math.log(0) would raise)
    return weight * (1.0 / (-math.log(u)))


def pick(server_hashes: Sequence[int], weights: Sequence[float], key_hash: int) -> int:
    """The owner of one key: mcrouter's loop, strict `>` from a best score of 0."""
    best, winner = 0.0, 0
    for i, (server_hash, weight) in enumerate(zip(server_hashes, weights, strict=True)):
        s = score(weight, server_hash, key_hash)
        if s > best:
            best, winner = s, i
    return winner


def _hash128to64_many(upper: int, lower: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    kmul, shift = np.uint64(_KMUL), np.uint64(47)
    a = (lower ^ np.uint64(upper)) * kmul
    a ^= a >> shift
    b = (np.uint64(upper) ^ a) * kmul
    b ^= b >> shift
    return b * kmul


def positive_weights_problem(servers: Sequence[Server]) -> str | None:
    """What the servers must be, if any weight is not a positive finite number."""
    problem = server_list_problem(servers)
    if problem:
        return problem
    bad = next((s for s in servers if not (math.isfinite(s.weight) and s.weight > 0)), None)
    if bad is not None:
        return (f"of positive finite weight, since rendezvous-weighted scores each in "
                f"proportion to it (got weight {bad.weight!r} for {bad.name!r})")
    return None


class WeightedRendezvousAlgorithm(OneForm):
    """mcrouter's weighted rendezvous hashing over the servers, in configuration order."""

    name: ClassVar[str] = "rendezvous-weighted"
    #: a build: each server's scores' table (20 to 30 us a server on 1,000); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 45e-6

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        # Only the C nodes are kept (the references read them back): the memory figures
        # count what routing needs.
        self._nodes = c_algorithms.CWeightedRendezvous(
            [murmur64a(s.name.encode(), SERVER_HASH_SEED) for s in self._servers],
            [float(s.weight) for s in self._servers])
        self.lookup = self._nodes.lookup

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """Every key scores every server: 1.35 us a score in the plain reference, 17 ns in
        numpy and 14 ns in C (1,000 servers, 20,000 keys), with a margin of 1.5."""
        n = len(servers)
        seconds = 1.5 * n * (plain_keys * 1.35e-6 + reference_keys * 17e-9
                             + fast_keys * 14e-9)
        return seconds, (f"rendezvous-weighted scores all {n:,} servers for each key, "
                         f"{plain_keys:,} of them in plain Python")

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return positive_weights_problem(servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return len(servers)

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return "murmur64A"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def server_hashes(self) -> list[int]:
        """Each server's name hash, in configuration order."""
        return self._nodes.nodes()[0]

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        return len(self._servers)

    @property
    def entry_size(self) -> int:
        return self._nodes.entry_size

    @property
    def nbytes(self) -> int:
        return self._nodes.nbytes

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return c_hashes.murmur64a_many(keys, KEY_HASH_SEED)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self._nodes.lookup_many(key_hashes)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        keys = np.asarray(key_hashes).astype(np.uint64)
        best = np.zeros(len(keys), dtype=np.float64)
        second = np.zeros(len(keys), dtype=np.float64)
        owners = np.zeros(len(keys), dtype=np.uint16)
        low_bits = np.uint64(_FIFTY_THREE_ONES)
        server_hashes, weights = self._nodes.nodes()
        with np.errstate(divide="ignore"):  # log(0) = -inf, as in C
            for i, (server_hash, weight) in enumerate(zip(server_hashes, weights, strict=True)):
                u = (_hash128to64_many(server_hash, keys) & low_bits).astype(np.float64) / 2.0**53
                scores = weight * (1.0 / (-np.log(u)))
                wins = scores > best
                second = np.where(wins, best, np.maximum(second, scores))
                best = np.where(wins, scores, best)
                owners[wins] = i
        for k in np.flatnonzero(best - second <= best * CLOSE_GAP):
            owners[k] = pick(server_hashes, weights, int(keys[k]))
        return owners

    def scores(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.float64]:
        """keys x servers: each server's score for each key, vectorised (numpy's log: a
        caller ordering by them settles near ties with `ranked_reference`, see `CLOSE_GAP`)."""
        keys = np.asarray(key_hashes).astype(np.uint64)
        out = np.zeros((len(keys), len(self._servers)), dtype=np.float64)
        low_bits = np.uint64(_FIFTY_THREE_ONES)
        server_hashes, weights = self._nodes.nodes()
        with np.errstate(divide="ignore"):  # log(0) = -inf, as in C
            for i, (server_hash, weight) in enumerate(zip(server_hashes, weights, strict=True)):
                u = (_hash128to64_many(server_hash, keys) & low_bits).astype(np.float64) / 2.0**53
                out[:, i] = weight * (1.0 / (-np.log(u)))
        return out

    def ranked_reference(self, key_hash: int, copies: int) -> list[int]:
        """The `copies` best servers for one key, best first, in plain Python: highest score,
        a tie to the server listed first (the first is `pick`'s owner, as mcrouter's strict
        `>` keeps the first of equal scores)."""
        server_hashes, weights = self._nodes.nodes()
        scores = [score(w, h, key_hash) for h, w in zip(server_hashes, weights, strict=True)]
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:copies]

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        server_hashes, weights = self._nodes.nodes()
        return [pick(server_hashes, weights, int(h)) for h in key_hashes]

    def exact_shares(self) -> None:
        # Each key's owner is decided by its scores, not by a position in a hash space.
        return None
