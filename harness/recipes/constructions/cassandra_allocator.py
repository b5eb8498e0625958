"""Cassandra's token allocator for one copy of each key: `NoReplicationTokenAllocator`.

Followed step for step from apache/cassandra (src/java/org/apache/cassandra/dht/
tokenallocator/NoReplicationTokenAllocator.java and TokenAllocatorBase.java, and
Murmur3Partitioner's token arithmetic in LongTokenProducingPartitioner.java), and checked
against those classes compiled and run (tests/fixtures/cassandra-allocator/: every token of
every vector equal). It is the allocator `TokenAllocatorFactory` picks when the keyspace's
replication factor is 1 (`allocate_tokens_for_local_replication_factor: 1`).

Units join one at a time. The first unit, or a unit asking for more tokens than the ring
holds, draws random tokens (`getRandomToken`, a token already taken drawn again). Otherwise:
- each unit's ownership is the sum of its tokens' ranges (`Token.size` of (previous token,
  token], a double), added in ring order from the smallest token;
- the most-owning units are taken from a priority queue while each owns more than the
  average of the ones taken plus the new unit (at most one unit per new token); that average
  is the target;
- donor i (in the order taken) gives `T / donors` tokens, one more for the first `T % donors`;
  they are its largest ranges, taken from its own priority queue;
- each of those ranges is split at `slice = (owned - target) / (sum of the taken ranges)`,
  clamped to [0.1, 0.9] (0.9 when the taken ranges cannot cover it), by
  `Murmur3Partitioner.split(previous, token, slice)`, whose BigDecimal arithmetic is exact
  here (`split`).
Java's `PriorityQueue` is a binary heap whose order among equal weights depends on its sift
rules, so `JavaPriorityQueue` follows them; units enter it in ascending index, the order a
`HashMap` of small Integer keys (the units of the vectors) iterates.

The random draws. Cassandra draws from `ThreadLocalRandom`, which cannot be replayed. Here,
as in the vectors' stand-in partitioner, they come from one `java.util.Random(seed)`
(`JavaRandom`: its 48-bit generator, `nextLong`), `normalize`d as `getRandomToken` does. Only
the first unit (and a unit wanting more tokens than exist) draws; every later token is
chosen by the allocator.

`ReplicationAwareTokenAllocator` (replication factor above 1) is ported apart, in
`cassandra_replicated`. Not followed: the offline tool's racks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

#: Long.MIN_VALUE and Long.MAX_VALUE
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
#: `NoReplicationTokenAllocator`'s bounds on the share of a range a new token takes
MAX_TAKEOVER_RATIO = 0.90
MIN_TAKEOVER_RATIO = 1.0 - MAX_TAKEOVER_RATIO

_MULTIPLIER, _ADDEND, _MASK48 = 0x5DEECE66D, 0xB, (1 << 48) - 1


def to_long(value: int) -> int:
    """`value` wrapped to a signed 64-bit long, as Java's long arithmetic wraps."""
    return (value + 2**63) % 2**64 - 2**63


class JavaRandom:
    """`java.util.Random`: the 48-bit linear congruential generator, seeded as Java seeds it."""

    def __init__(self, seed: int) -> None:
        self.state = (seed ^ _MULTIPLIER) & _MASK48

    def next_bits(self, bits: int) -> int:
        """`next(bits)`: the top `bits` of the new state, as a signed 32-bit int."""
        self.state = (self.state * _MULTIPLIER + _ADDEND) & _MASK48
        value = self.state >> (48 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value

    def next_int(self, bound: int) -> int:
        """`nextInt(bound)`: uniform in [0, bound), redrawing the top of the range."""
        if bound & (bound - 1) == 0:
            return (bound * self.next_bits(31)) >> 31
        while True:
            bits = self.next_bits(31)
            value = bits % bound
            if bits - value + (bound - 1) < 2**31:  # Java's int overflow test
                return value

    def next_long(self) -> int:
        """`nextLong()`: two 32-bit draws, the first shifted up, added as signed ints."""
        return to_long((self.next_bits(32) << 32) + self.next_bits(32))

    def next_double(self) -> float:
        """`nextDouble()`: 26 then 27 bits, as a multiple of 2**-53."""
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * 2.0**-53


def random_token(random: JavaRandom) -> int:
    """`getRandomToken`: `normalize(nextLong())`, Long.MIN_VALUE read as Long.MAX_VALUE."""
    value = random.next_long()
    return LONG_MAX if value == LONG_MIN else value


def size(token: int, following: int) -> float:
    """`LongToken.size`: the share of the ring in (token, following], in (0, 1]; a token's
    size to itself is 1. The difference wraps as a long, then scales exactly by 2**-64."""
    scaled = float(to_long(following - token)) * 2.0**-64
    return scaled if scaled > 0.0 else scaled + 1.0


def split(left: int, right: int, ratio: float) -> int:
    """`LongTokenProducingPartitioner.split`: the token `ratio` of the way from `left` to
    `right` (wrapping past the maximum), truncated toward zero. BigDecimal.valueOf(double)
    reads the double's shortest decimal form, which is Python's repr."""
    exact_ratio = Fraction(Decimal(repr(ratio)))
    if left < right:
        return int((right - left) * exact_ratio + left)
    token = int((LONG_MAX - LONG_MIN + right - left) * exact_ratio + left)
    return token if token <= LONG_MAX else to_long(LONG_MIN + (token - LONG_MAX))


T = TypeVar("T")


class AllocatorFailure(ValueError):
    """Where Cassandra's allocator throws: a donor asked for more ranges than it holds
    (`unitTokens.remove()` on an empty queue, `NoSuchElementException`), which mixed
    num_tokens can cause."""


class JavaPriorityQueue(Generic[T]):
    """`java.util.PriorityQueue` ordered by weight, largest first (the allocator's `Weighted`
    compares `Double.compare(other, this)`): its heap and sift rules, so that among equal
    weights the same entry comes out first."""

    def __init__(self) -> None:
        self.heap: list[tuple[float, T]] = []

    @staticmethod
    def _before(a: float, b: float) -> int:
        """`a.compareTo(b)` for Weighted entries: negative when `a` weighs more."""
        return -1 if a > b else (1 if a < b else 0)

    def add(self, weight: float, value: T) -> None:
        """`offer`: append, then sift up while the entry comes before its parent."""
        heap, k = self.heap, len(self.heap)
        heap.append((weight, value))
        while k > 0:
            parent = (k - 1) >> 1
            if self._before(weight, heap[parent][0]) >= 0:
                break
            heap[k] = heap[parent]
            k = parent
        heap[k] = (weight, value)

    def peek(self) -> tuple[float, T] | None:
        return self.heap[0] if self.heap else None

    def poll(self) -> tuple[float, T]:
        """`poll`: the first entry; the last one sifts down from the root."""
        heap = self.heap
        first, last = heap[0], heap.pop()
        n = len(heap)
        if n:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                if child + 1 < n and self._before(heap[child][0], heap[child + 1][0]) > 0:
                    child += 1
                if self._before(last[0], heap[child][0]) <= 0:
                    break
                heap[k] = heap[child]
                k = child
            heap[k] = last
        return first


def ranges_of(tokens: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """`size` of every token's range, from its predecessor (the last token's, for the first),
    for sorted tokens, in numpy: the difference wraps in int64 and converts to the nearest
    double as Java's `(double) long` does, so each equals `size`."""
    with np.errstate(over="ignore"):
        differences = tokens - np.roll(tokens, 1)
    scaled = np.ldexp(differences.astype(np.float64), -64)
    ranges: npt.NDArray[np.float64] = np.where(scaled > 0.0, scaled, scaled + 1.0)
    return ranges


class NoReplicationAllocator:
    """The allocator's state: the ring's tokens, sorted, and each token's unit (an index)."""

    def __init__(self, seed: int) -> None:
        self.tokens = np.empty(0, dtype=np.int64)
        self.owners = np.empty(0, dtype=np.int64)
        self.random = JavaRandom(seed)

    def _random_tokens(self, unit: int, count: int) -> list[int]:
        taken = set(self.tokens.tolist())
        chosen: list[int] = []
        while len(chosen) < count:
            token = random_token(self.random)
            if token not in taken:
                chosen.append(token)
                taken.add(token)
        self._put(chosen, unit)
        return chosen

    def _put(self, chosen: list[int], unit: int) -> None:
        """`sortedTokens.put(token, unit)` for each: a token already in the ring (a split of
        a range one token wide lands on its start) changes owner, as a TreeMap's put does."""
        new = np.unique(np.array(chosen, dtype=np.int64))
        at = np.searchsorted(self.tokens, new)
        present = (at < len(self.tokens)) & (self.tokens[np.minimum(at, len(self.tokens) - 1)]
                                             == new) if len(self.tokens) else np.zeros(
                                                 len(new), dtype=bool)
        self.owners[at[present]] = unit
        self.tokens = np.insert(self.tokens, at[~present], new[~present])
        self.owners = np.insert(self.owners, at[~present], unit)

    def add_unit(self, unit: int, num_tokens: int) -> list[int]:
        """`addUnit(unit, num_tokens)`: the tokens chosen for the new unit, in the order chosen
        (random ones in the order drawn)."""
        tokens = self.tokens
        if not len(tokens) or num_tokens > len(tokens):
            return self._random_tokens(unit, num_tokens)
        # createTokenInfos: each token's range from its predecessor, added to its unit's
        # ownership in ring order (bincount adds its weights in input order)
        ranges = ranges_of(tokens)
        owned_by = np.bincount(self.owners, weights=ranges)
        units: JavaPriorityQueue[int] = JavaPriorityQueue()
        for each in np.unique(self.owners).tolist():
            units.add(float(owned_by[each]), each)
        target, total, donors = 0.0, 0.0, list[tuple[float, int]]()
        for _ in range(num_tokens):
            top = units.peek()
            if top is None:
                break
            total += top[0]
            average = total / (len(donors) + 2)  # the donors, this unit and the new one
            if top[0] <= average:
                break
            donors.append(units.poll())
            target = average
        taken = self._donor_ranges(donors, num_tokens, ranges)
        chosen: list[int] = []
        for (owned, _), picked in zip(donors, taken, strict=True):
            work = sum_in_order([weight for weight, _ in picked])
            to_take = owned - target
            for _, index in picked:
                if to_take < work:
                    ratio = min(max(to_take / work, MIN_TAKEOVER_RATIO), MAX_TAKEOVER_RATIO)
                else:
                    ratio = MAX_TAKEOVER_RATIO
                chosen.append(split(int(tokens[index - 1]), int(tokens[index]), ratio))
        self._put(chosen, unit)
        return chosen

    def _donor_ranges(self, donors: list[tuple[float, int]], num_tokens: int,
                      ranges: npt.NDArray[np.float64]) -> list[list[tuple[float, int]]]:
        """Each donor's largest ranges (weight, index in the ring before this unit's tokens),
        as many as it gives, in the order its priority queue (filled in ring order) yields
        them. A new token goes just before its range's token, so no range taken here
        changes predecessor. When the `gives` largest weights are distinct and larger than
        the rest, any heap yields them largest first, which a sort gives at once; otherwise
        equal weights among them are ordered by `JavaPriorityQueue`'s sift rules."""
        ids = [donor for _, donor in donors]
        held = np.flatnonzero(np.isin(self.owners, ids))
        held = held[np.lexsort((-ranges[held], self.owners[held]))]  # by donor, largest first
        owners, starts = np.unique(self.owners[held], return_index=True)
        by_owner = {int(owner): part for owner, part
                    in zip(owners.tolist(), np.split(held, starts[1:]), strict=True)}
        picked = []
        for nr, donor in enumerate(ids):
            gives = num_tokens // len(donors) + (1 if nr < num_tokens % len(donors) else 0)
            mine = by_owner[donor]
            if gives > len(mine):
                raise AllocatorFailure(
                    f"node {donor} would give "
                    f"{gives} token ranges of the {len(mine)} it holds to a node asking for "
                    f"{num_tokens} (NoSuchElementException in NoReplicationTokenAllocator)")
            if strictly_decreasing(ranges[mine[:gives + 1]]):
                picked.append([(float(ranges[i]), int(i)) for i in mine[:gives].tolist()])
                continue
            queue: JavaPriorityQueue[int] = JavaPriorityQueue()
            for index in np.sort(mine).tolist():
                queue.add(float(ranges[index]), index)
            picked.append([queue.poll() for _ in range(gives)])
        return picked


def strictly_decreasing(weights: npt.NDArray[np.float64]) -> bool:
    """Whether no two of these weights (sorted, largest first) are equal."""
    return bool(np.all(weights[1:] < weights[:-1]))


def sum_in_order(values: Sequence[float]) -> float:
    """Doubles added left to right, as Java's loop adds them (not `math.fsum`)."""
    total = 0.0
    for value in values:
        total += value
    return total


class Allocator(Protocol):
    """What a token allocator does as a unit joins: its new tokens."""

    def add_unit(self, unit: int, count: int, /) -> list[int]: ...


def join_in_order(allocator: Allocator, num_tokens: Sequence[int],
                  progress: Callable[[int], None] | None = None) -> list[list[int]]:
    """Each unit's tokens, sorted, when units 0, 1, ... join `allocator` in order asking
    for `num_tokens[i]` tokens each; `progress` told how many have joined."""
    placed = []
    for unit, count in enumerate(num_tokens):
        placed.append(sorted(allocator.add_unit(unit, count)))
        if progress is not None:
            progress(unit + 1)
    return placed


def allocate_tokens(num_tokens: Sequence[int], seed: int,
                    progress: Callable[[int], None] | None = None) -> list[list[int]]:
    """Each unit's tokens, sorted, when units 0, 1, ... join in order asking for
    `num_tokens[i]` tokens each, from one allocator whose random draws come from
    `java.util.Random(seed)`."""
    return join_in_order(NoReplicationAllocator(seed), num_tokens, progress)
