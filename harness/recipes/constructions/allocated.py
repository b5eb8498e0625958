"""Allocated tokens: positions chosen so that arc shares track weights.

Servers join one at a time, in configuration order. Server s of weight w gets
`max(1, round(points_per_weight * w))` tokens; the tokens already placed never
move, so adding a server takes ownership only from the servers before it and
no key moves between two of them. Keys are hashed with blake2b-32 (the first
4 bytes of BLAKE2b, big-endian) and routed by the ring's usual rule: the
first token at or after the key's hash, wrapping.

Taken from Cassandra's token allocator (`NoReplicationTokenAllocator`, the
one `TokenAllocatorFactory` picks for a replication factor of 1):
- the new unit takes ownership from the most loaded units only, down to a
  common level: the units are taken in order of load while each is above the
  level the ones taken so far would reach, at most one unit per token;
- a donor's share is taken from its largest arcs, in proportion to their
  lengths, each cut by one new token placed inside it;
- the first unit's tokens come from `generateSplits`: a start position, then
  the largest arc split again and again at a ratio drawn from
  [1 - 1/sqrt(5), 1 - 1/sqrt(5) + 0.075].
Changed:
- load is ownership per unit of weight, so weighted servers are supported,
  and the level is solved so that the new server gets exactly its weight
  share (Cassandra's level is the average of the units taken);
- a donor gets as many tokens as its cut needs (its largest arcs first, each
  left at least one position); when the new server's tokens cannot reach
  every cut, fewer donors cut deeper are tried too, and the option kept is
  the one whose largest distance from the mean load, over the donors and the
  new server, is smallest (the new server may then get a little less than
  its share); spare tokens go to the largest cut per token (Cassandra deals
  them out evenly), and any still left over split the new server's own
  largest arcs, so every server has its full token count;
- no 10%/90% clamp on a cut: a cut leaves at least one position to the donor;
- everything is integer arithmetic on positions in [0, 2**32) and on exact
  rational weights, and the one random draw (the first server's placement)
  comes from SplitMix64 defined here, seeded by `seed`: the same ordered
  server list and seed give the same tokens on any machine. Names are not
  hashed: positions depend on the weights in order and the seed, and the
  list says which server holds each place.
The replication-aware allocator (`ReplicationAwareTokenAllocator`) is not
followed: with one owner per key its replica walk reduces to the above.

A floor on balance. Every token of a new server splits one arc, so it takes
from one donor; a server of T tokens takes from at most T servers. Between
cuts every other server's load relative to the mean grows by w/W per added
weight w, and the cuts must remove all of that growth, so with equal weights
each cut removes 1/T of a mean share on average. A server's relative load is
then a sawtooth of height about 1/T, and with the servers spread evenly over
their cycles the CV of arc shares cannot stay below about 1/(T * sqrt(12)):
1.8% at 16 tokens (a bound for N well above T: while N <= T every server can
give at every step and the shares stay exact). Only moving old tokens (keys
between old servers) goes lower; `rebalance` does that, counting what it
moves. The same count bounds the largest deviation: the new server's tokens
must remove about one average arc (1/T of a unit of weight's share) each,
so a server of weight 1 loses about 1/T of its load at a cut, and its load
spans a band of that height: about +-3% around the mean at T = 16, for equal
and for mixed weights alike once N is in the thousands.

Removal. Removing a server and keeping the others' tokens passes each of its
arcs to the next token's owner (`remove_server`). Rebuilding from the list
without it gives exactly that ring when the server was the last to join;
removing an earlier one and rebuilding re-places every later server.
`rebalance` re-places the fewest tokens it can find to bring the CV of arc
shares under a target, and reports the share of the hash space they move.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.hashing import hash_many
from harness.core.params import Param, parse_keywords
from harness.core.ring import Ring, reference_owners
from harness.core.servers import Server, require_servers
from harness.core.stats import arc_shares, cv
from harness.recipes.constructions.base import ConstructionBase, Rebalanced
from harness.recipes.constructions.generator import points_for

SPACE = 2**32
MASK64 = 2**64 - 1
#: Cassandra's split ratios for the first server, as fractions of 2**32:
#: 1 - 1/sqrt(5) and a span of 0.075
FIRST_SPLIT_MIN = 2_374_199_529
FIRST_SPLIT_SPAN = 322_122_547
#: the load key's fixed-point shift: loads of different servers differ far above 2**-64
LOAD_SHIFT = 64
MAX_POINTS_PER_WEIGHT = 65_536


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64: a tiny generator, the same on every machine."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def integer_weights(weights: Sequence[float]) -> list[int]:
    """The weights scaled exactly to integers of the same ratios."""
    fractions = [Fraction(w) for w in weights]
    scale = math.lcm(*(f.denominator for f in fractions))
    return [int(f * scale) for f in fractions]


class _Allocator:
    """The ring being built: a circular list of tokens, per-server largest-arc heaps."""

    def __init__(self, weights: Sequence[int], seed: int) -> None:
        self.weights = list(weights)
        self.rng = SplitMix64(seed)
        self.next: dict[int, int] = {}
        self.prev: dict[int, int] = {}
        self.owner: dict[int, int] = {}
        self.owned = [0] * len(weights)
        self.tokens = [0] * len(weights)
        self.arcs: list[list[tuple[int, int]]] = [[] for _ in weights]
        self.by_load: list[tuple[int, int]] = []
        self.total_weight = 0

    def arc(self, token: int) -> int:
        """Length of the arc ending at `token`: (previous token, token]."""
        return (token - self.prev[token] - 1) % SPACE + 1

    def load_key(self, server: int) -> int:
        return -((self.owned[server] << LOAD_SHIFT) // self.weights[server])

    def insert(self, position: int, after: int, server: int) -> None:
        following = self.next[after]
        self.next[after], self.prev[position] = position, after
        self.next[position], self.prev[following] = following, position
        self.owner[position] = server

    def largest_arcs(self, server: int, count: int) -> list[tuple[int, int]]:
        """Pop up to `count` of the server's largest splittable arcs, as (length, token)."""
        heap = self.arcs[server]
        found: list[tuple[int, int]] = []
        while heap and len(found) < count:
            length, token = heapq.heappop(heap)
            if -length == self.arc(token) and -length > 1:  # skip stale entries
                found.append((-length, token))
        return found

    def cut(self, new: int, token: int, piece: int) -> None:
        """Place a token of `new` inside the arc ending at `token`, taking its first `piece`."""
        start = self.prev[token]
        position = (start + piece) % SPACE
        donor = self.owner[token]
        self.insert(position, start, new)
        self.owned[donor] -= piece
        self.owned[new] += piece
        self.tokens[new] += 1
        heapq.heappush(self.arcs[donor], (-self.arc(token), token))
        heapq.heappush(self.arcs[new], (-piece, position))

    def split_own(self, server: int, ratio: int) -> None:
        """Split the server's largest arc at `ratio` / 2**32: more tokens, same ownership."""
        ((length, token),) = self.largest_arcs(server, 1)
        self.cut(server, token, max(1, length * ratio >> 32))

    def add_first(self, server: int, count: int) -> None:
        start = self.rng.next() >> 32
        self.next[start] = self.prev[start] = start
        self.owner[start] = server
        self.owned[server], self.tokens[server] = SPACE, 1
        self.arcs[server].append((-SPACE, start))
        while self.tokens[server] < count:
            self.split_own(server, FIRST_SPLIT_MIN + self.rng.next() % FIRST_SPLIT_SPAN)

    def add(self, server: int, count: int) -> None:
        """Place `count` tokens for `server`, taking its weight share from the most loaded."""
        self.total_weight += self.weights[server]
        if not self.owner:
            self.add_first(server, count)
        else:
            budget = SPACE * self.weights[server] // self.total_weight
            self.take(server, count, budget)
            while self.tokens[server] < count:
                self.split_own(server, 1 << 31)
        heapq.heappush(self.by_load, (self.load_key(server), server))

    def take(self, new: int, count: int, budget: int) -> None:
        """Cut arcs of the most loaded servers so that the new one gets about `budget`."""
        candidates = self.candidates(count, budget)
        arcs = {donor: self.largest_arcs(donor, count) for donor in candidates}
        # Fewer donors cut deeper, but the tokens may reach every cut; keep the option
        # that leaves the new server and the donors nearest the mean load.
        options = []
        for donors_count in range(len(candidates), 0, -1):
            donors = candidates[:donors_count]
            cuts = self.cuts(donors, budget)
            needs = [tokens_needed(arcs[d], cut) for d, cut in zip(donors, cuts, strict=True)]
            shares = deal(needs, cuts, [len(arcs[d]) for d in donors], count)
            taken = [min(cut, reach(arcs[d][:tokens]))
                     for d, cut, tokens in zip(donors, cuts, shares, strict=True)]
            options.append((self.spread(new, donors, taken), donors_count, donors, taken, shares))
            if sum(needs) <= count:
                break
        _, _, donors, taken, shares = min(options)
        for donor, cut, tokens in zip(donors, taken, shares, strict=True):
            total = sum(length for length, _ in arcs[donor][:tokens])
            for length, token in arcs[donor][:tokens]:
                self.cut(new, token, max(1, min(length - 1, cut * length // total)))
        used = dict(zip(donors, shares, strict=True))
        for donor in candidates:  # the arcs looked at but not cut go back on their heaps
            for length, token in arcs[donor][used.get(donor, 0):]:
                heapq.heappush(self.arcs[donor], (-length, token))
            heapq.heappush(self.by_load, (self.load_key(donor), donor))

    def candidates(self, count: int, budget: int) -> list[int]:
        """The most loaded servers, in order, while each is above the level the ones before
        it would reach by giving the budget (Cassandra's rule), at most one per token."""
        found: list[int] = []
        owned = weight = 0
        while self.by_load and len(found) < count:
            candidate = self.by_load[0][1]
            if found and (self.owned[candidate] * weight
                          <= (owned - budget) * self.weights[candidate]):
                break
            heapq.heappop(self.by_load)
            found.append(candidate)
            owned += self.owned[candidate]
            weight += self.weights[candidate]
        return found

    def cuts(self, donors: list[int], budget: int) -> list[int]:
        """What each donor gives so that all end at one load and the new server gets `budget`."""
        owned = sum(self.owned[d] for d in donors)
        level = Fraction(max(0, owned - budget), sum(self.weights[d] for d in donors))
        return [self.owned[d] - math.floor(level * self.weights[d]) for d in donors]

    def spread(self, new: int, donors: list[int], taken: list[int]) -> Fraction:
        """The largest distance of the new server's or a donor's load from the mean load."""
        mean = Fraction(SPACE, self.total_weight)
        loads = [Fraction(self.owned[d] - cut, self.weights[d])
                 for d, cut in zip(donors, taken, strict=True)]
        loads.append(Fraction(sum(taken), self.weights[new]))
        return max(abs(load - mean) for load in loads)

    def ring(self, names: tuple[str, ...]) -> Ring:
        positions = np.fromiter(self.owner, dtype=np.uint32, count=len(self.owner))
        owners = np.fromiter(self.owner.values(), dtype=np.uint16, count=len(self.owner))
        return Ring.from_points(positions, owners, bits=32, servers=names)


def tokens_needed(arcs: list[tuple[int, int]], cut: int) -> int:
    """How many of these arcs (largest first) a cut of this size needs, each kept non-empty."""
    total = 0
    for needed, (length, _) in enumerate(arcs, start=1):
        total += length - 1
        if total >= cut:
            return needed
    return max(1, len(arcs))


def reach(arcs: list[tuple[int, int]]) -> int:
    """The most these arcs can give, each kept non-empty."""
    return sum(length - 1 for length, _ in arcs)


def deal(needs: list[int], cuts: list[int], arcs: list[int], count: int) -> list[int]:
    """Tokens per donor: what each needs, then the rest to the largest cut per token."""
    shares = list(needs)
    while sum(shares) > count:  # more needed than there are: the neediest go without
        shares[shares.index(max(shares))] -= 1
    heap = [(-(cut // share), i) for i, (cut, share) in enumerate(zip(cuts, shares, strict=True))
            if share < arcs[i]]
    heapq.heapify(heap)
    for _ in range(count - sum(shares)):
        if not heap:
            break
        _, i = heapq.heappop(heap)
        shares[i] += 1
        if shares[i] < arcs[i]:
            heapq.heappush(heap, (-(cuts[i] // shares[i]), i))
    return shares


def allocate(servers: Sequence[Server], points_per_weight: int = 16, seed: int = 0) -> Ring:
    """The allocated ring of `servers`, joined one at a time in the order listed."""
    require_servers(AllocatedConstruction.name, servers)
    allocator = _Allocator(integer_weights([s.weight for s in servers]), seed)
    for index, server in enumerate(servers):
        allocator.add(index, points_for(server.weight, points_per_weight))
    return allocator.ring(tuple(s.name for s in servers))


class AllocatedConstruction(ConstructionBase):
    """Tokens placed by an allocator, `points_per_weight` per unit weight, keys by blake2b-32."""

    name: ClassVar[str] = "allocated"
    params: ClassVar[tuple[Param, ...]] = (
        Param("points_per_weight", "int", 16, "tokens per unit of server weight",
              minimum=1, maximum=MAX_POINTS_PER_WEIGHT),
        Param("seed", "int", 0, "seed of the first server's token placement", minimum=0,
              maximum=MASK64),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        self.points_per_weight: int = values["points_per_weight"]
        self.seed: int = values["seed"]

    @property
    def bits(self) -> int:
        return 32

    @property
    def label(self) -> str:
        return f"allocated k={self.points_per_weight}"

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        return None  # any positive weights; each server gets at least one token

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [points_for(s.weight, self.points_per_weight) for s in servers]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        return allocate(servers, self.points_per_weight, self.seed)

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return hash_many("blake2b-32", keys)

    def remove_server(self, ring: Ring, index: int) -> Ring:
        """How a deployment loses a server: its arcs fall to their successors. Rebuilding
        from the shorter list would re-place every server that joined after it."""
        return remove_server(ring, index)

    def rebalance(self, ring: Ring, weights: Sequence[float], cv_target: float) -> Rebalanced:
        """The fewest tokens re-placed to bring the arc CV to `cv_target` (see `rebalance`)."""
        return rebalance(ring, weights, cv_target)


def remove_server(ring: Ring, index: int) -> Ring:
    """The ring without server `index`, every other token kept: its arcs pass to their successors.

    Servers after `index` move down one index, as in the server list without it.
    """
    keep = ring.owners != index
    owners = ring.owners[keep].astype(np.int64)
    owners[owners > index] -= 1
    return Ring(positions=ring.positions[keep], owners=owners.astype(np.uint16), bits=ring.bits,
                servers=ring.servers[:index] + ring.servers[index + 1:])


def moved_share(before: Ring, after: Ring) -> float:
    """Exact share of the hash space whose owner differs between two rings of the same servers."""
    ends = np.union1d(before.positions, after.positions)
    lengths = np.empty(len(ends), dtype=np.int64)
    lengths[1:] = np.diff(ends.astype(np.int64))
    lengths[0] = int(ends[0]) + SPACE - int(ends[-1])
    differs = reference_owners(before, ends) != reference_owners(after, ends)
    return int(lengths[differs].sum()) / SPACE


def rebalance(ring: Ring, weights: Sequence[float], cv_target: float,
              max_tokens: int | None = None) -> Rebalanced:
    """Re-place tokens, one at a time, until the CV of arc shares per weight is <= `cv_target`.

    Each step moves one token within its two arcs, shifting a piece of the hash space
    between the two servers those arcs belong to (so keys move only between neighbours),
    and takes the move that lowers the sum of squared load deviations most. It stops at
    the target, when no move helps, or after `max_tokens` distinct tokens (default: all).
    """
    weight = np.asarray(weights, dtype=np.float64)
    servers = len(weight)
    positions = ring.positions.astype(np.int64)
    owners = ring.owners.astype(np.int64)
    moved: set[int] = set()
    limit = ring.entries if max_tokens is None else max_tokens
    cv_before = current = cv(arc_shares(ring, servers) / weight)
    while current > cv_target and ring.entries > 1:
        lengths = _lengths(positions)
        load = np.bincount(owners, weights=lengths, minlength=servers) / weight
        mean = math.fsum(load.tolist()) / servers
        following = np.roll(owners, -1)
        # Gain in sum((load - mean)**2) when the next arc's owner gives delta to this token's.
        gradient = ((load[following] - mean) / weight[following]
                    - (load[owners] - mean) / weight[owners])
        curvature = 1 / weight[following] ** 2 + 1 / weight[owners] ** 2
        room = np.where(gradient > 0, np.roll(lengths, -1) - 1, lengths - 1)
        step = np.floor(np.minimum(np.abs(gradient) / curvature, room))
        gain = np.where(owners != following,
                        2 * step * np.abs(gradient) - step**2 * curvature, 0.0)
        best = int(np.argmax(gain))
        token = int(positions[best])
        if gain[best] <= 0 or (token not in moved and len(moved) >= limit):
            break
        shift = int(step[best]) if gradient[best] > 0 else -int(step[best])
        moved.discard(token)
        moved.add((token + shift) % SPACE)
        positions[best] = (token + shift) % SPACE
        if not 0 <= token + shift < SPACE:  # wrapped past the ends: restore the order
            order = np.argsort(positions, kind="stable")
            positions, owners = positions[order], owners[order]
        current = cv(np.bincount(owners, weights=_lengths(positions), minlength=servers)
                     / SPACE / weight)
    result = Ring(positions=positions.astype(np.uint32), owners=owners.astype(np.uint16),
                  bits=ring.bits, servers=ring.servers)
    return Rebalanced(result, len(moved), moved_share(ring, result), cv_before, current)


def _lengths(positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    lengths = np.empty_like(positions)
    lengths[1:] = np.diff(positions)
    lengths[0] = positions[0] + SPACE - positions[-1]
    return lengths
