"""Cassandra's token allocator for several copies of each key: `ReplicationAwareTokenAllocator`.

It is the allocator `TokenAllocatorFactory` picks when the local replication factor is above
1; Cassandra 4.0's cassandra.yaml ships `num_tokens: 16` with
`allocate_tokens_for_local_replication_factor: 3`, so it is what a default modern cluster
runs. Followed from apache/cassandra (src/java/org/apache/cassandra/dht/tokenallocator/
ReplicationAwareTokenAllocator.java and TokenAllocatorBase.java at
1c26710420b2ed3750cd8d6cb55dc0a5227285ef, Murmur3Partitioner's `midpoint` and `split`) and
checked against those classes compiled and run (tests/fixtures/cassandra-allocator/
replicated_vectors.json: every token of every vector equal).

What it does, in our words. Nodes join one at a time; each belongs to a group (its rack when
there are enough racks, else itself), and a token's replicated range runs back from it to
the token of the `rf`-th distinct group before it (or to the nearest earlier token of its own
group, whichever is nearer). The target for every token is `rf / (tokens after the join)`.
- While fewer than `rf` nodes have joined (or a node asks for more tokens than the ring has,
  or there are fewer groups than `rf`), the new node's tokens split the largest range, again
  and again, at a ratio drawn from `java.util.Random(tokens in the ring)` in [0.553, 0.628)
  (`generateSplits`; the very first token is the partitioner's random one).
- Otherwise every midpoint between neighbouring tokens is a candidate; each is scored by how
  much it would lower the squared distance from the target of the replicated ranges it
  changes and of their nodes' ownership per token (the new node's own term weighted by the
  share of its tokens placed so far); candidates wait in a priority queue, and the best is
  taken once re-scoring it still beats the next one in the queue, until the node has its
  tokens.
Java's `PriorityQueue` decides among equal scores, so `ScoreQueue` follows its sift rules and
`Double.compare`. Floating-point sums are kept in Java's order.
"""

from __future__ import annotations

import bisect
import math
import struct
from collections.abc import Callable, Hashable, Sequence

from harness.recipes.constructions.cassandra_allocator import (
    LONG_MAX,
    LONG_MIN,
    JavaPriorityQueue,
    JavaRandom,
    join_in_order,
    random_token,
    size,
    split,
    to_long,
)

#: `generateSplits`' ratios: a split takes between these shares of the largest range
MIN_INITIAL_SPLITS_RATIO = 1.0 - 1.0 / math.sqrt(5.0)
MAX_INITIAL_SPLITS_RATIO = MIN_INITIAL_SPLITS_RATIO + 0.075


def midpoint(left: int, right: int) -> int:
    """`Murmur3Partitioner.midpoint`: halfway along (left, right], rounded down, wrapping
    past the maximum token (a range from a token to itself is the whole ring)."""
    if left < right:
        return (left + right) >> 1
    middle = (LONG_MAX - LONG_MIN + left + right) >> 1
    return to_long(LONG_MIN + (middle - LONG_MAX)) if middle > LONG_MAX else middle


def _double_bits(value: float) -> int:
    bits: int = struct.unpack("<q", struct.pack("<d", value))[0]
    return bits


def double_compare(a: float, b: float) -> int:
    """`Double.compare`: numeric order, with -0.0 before 0.0 and NaN after everything."""
    if a < b:
        return -1
    if a > b:
        return 1
    first, second = _double_bits(a), _double_bits(b)
    if math.isnan(a):
        first = 0x7FF8000000000000
    if math.isnan(b):
        second = 0x7FF8000000000000
    return (first > second) - (first < second)


class ScoreQueue(JavaPriorityQueue["Candidate"]):
    """The candidates' queue, highest score first, ties as `Weighted.compareTo` breaks them
    (`Double.compare(other, this)`)."""

    @staticmethod
    def _before(a: float, b: float) -> int:
        return double_compare(b, a)


class Node:
    """A unit: its group, the replicated ownership of its tokens, and how many it has."""

    __slots__ = ("group", "ownership", "token_count", "unit")

    def __init__(self, unit: int, group: Hashable, ownership: float) -> None:
        self.unit, self.group, self.ownership, self.token_count = unit, group, ownership, 0


class Placed:
    """A token in the ring (a circular list, in token order) and its replicated range."""

    __slots__ = ("next", "node", "prev", "replicated", "start", "threshold", "token")

    def __init__(self, token: int, node: Node) -> None:
        self.token, self.node = token, node
        self.prev: Placed = self
        self.next: Placed = self
        self.start = self.threshold = token
        self.replicated = 0.0

    def before_in_ring(self) -> Placed:
        return self.prev


class Candidate:
    """A midpoint the new node could take: it would sit just before `split`."""

    __slots__ = ("next", "node", "prev", "replicated", "split", "start", "threshold", "token")

    def __init__(self, token: int, split: Placed, node: Node) -> None:
        self.token, self.split, self.node = token, split, node
        self.prev: Candidate = self
        self.next: Candidate = self
        self.start = self.threshold = token
        self.replicated = 0.0

    def before_in_ring(self) -> Placed:
        return self.split.prev


def _link_after(item: Placed, after: Placed) -> None:
    item.prev, item.next = after, after.next
    after.next.prev = item
    after.next = item


def _sq(value: float) -> float:
    """A square as Java's `sq` takes it: one rounded product (not `pow`)."""
    return value * value


def _further_start(first: int, second: int, towards: int) -> int:
    """Of two starts, the one giving the longer range up to `towards` (equal means none)."""
    if first == towards:
        return second
    if second == towards:
        return first
    return first if size(first, towards) > size(second, towards) else second


class ReplicationAwareAllocator:
    """The ring's tokens and owners as the allocator keeps them between joins."""

    def __init__(self, replicas: int, seed: int,
                 group_of: Callable[[int], Hashable] = lambda unit: unit) -> None:
        self.replicas = replicas
        self.group_of = group_of
        self.random = JavaRandom(seed)
        self.tokens: list[int] = []           # sorted
        self.owner: dict[int, int] = {}      # token -> unit
        self.units: set[int] = set()

    def _put(self, token: int, unit: int) -> None:
        if token not in self.owner:
            bisect.insort(self.tokens, token)
        self.owner[token] = unit
        self.units.add(unit)

    def _splits(self, unit: int, count: int) -> list[int]:
        """`generateSplits`: split the largest range (the first of equal ones) again and
        again at a ratio drawn from `Random(tokens in the ring)`."""
        draws = JavaRandom(len(self.tokens))
        growth = MAX_INITIAL_SPLITS_RATIO - MIN_INITIAL_SPLITS_RATIO
        chosen: list[int] = []
        if not self.tokens:
            chosen.append(random_token(self.random))
            self._put(chosen[-1], unit)
        while len(chosen) < count:
            previous, largest, left, right = self.tokens[-1], 0.0, 0, 0
            for token in self.tokens:
                share = size(previous, token)
                if share > largest:
                    largest, left, right = share, previous, token
                previous = token
            ratio = MIN_INITIAL_SPLITS_RATIO + growth * draws.next_double()
            chosen.append(split(left, right, ratio))
            self._put(chosen[-1], unit)
        return chosen

    def add_unit(self, unit: int, count: int) -> list[int]:
        """`addUnit(unit, count)`: the new unit's tokens (in no particular order)."""
        if len(self.units) < self.replicas or count > len(self.tokens):
            return self._splits(unit, count)
        optimal = 1.0 * self.replicas / (len(self.tokens) + count)
        nodes: dict[int, Node] = {}
        for token in self.tokens:
            owner = self.owner[token]
            if owner not in nodes:
                nodes[owner] = Node(owner, self.group_of(owner), 0.0)
            nodes[owner].token_count += 1
        if len({node.group for node in nodes.values()}) < self.replicas:
            return self._splits(unit, count)
        new = Node(unit, self.group_of(unit), count * optimal)
        ring = self._ring(nodes, new.group)
        new.token_count = count
        candidates = self._candidates(ring, new, optimal)
        queue = ScoreQueue()
        candidate = candidates
        while True:
            queue.add(self._score(candidate, optimal, 1.0 / count), candidate)
            candidate = candidate.next
            if candidate is candidates:
                break
        chosen: list[int] = []
        best = queue.poll()[1]
        placed = 1
        while True:
            best.prev.next, best.next.prev = best.next, best.prev  # out of the candidates
            self._confirm(best)
            chosen.append(best.token)
            if placed == count:
                break
            while True:
                best = queue.poll()[1]
                score = self._score(best, optimal, (placed + 1.0) / count)
                following = queue.peek()
                if following is None or score >= following[0]:
                    break
                queue.add(score, best)
            placed += 1
        return chosen

    def _ring(self, nodes: dict[int, Node], new_group: Hashable) -> Placed:
        """The ring as a circular list from its smallest token, every range worked out and
        added to its node's ownership in that order."""
        first: Placed | None = None
        previous: Placed | None = None
        for token in self.tokens:
            item = Placed(token, nodes[self.owner[token]])
            if first is None or previous is None:
                first = item
            else:
                _link_after(item, previous)
            previous = item
        assert first is not None
        item = first
        while True:
            self._measure(item, new_group)
            item = item.next
            if item is first:
                return first

    def _candidates(self, ring: Placed, new: Node, optimal: float) -> Candidate:
        first: Candidate | None = None
        previous: Candidate | None = None
        item = ring
        while True:
            candidate = Candidate(midpoint(item.prev.token, item.token), item, new)
            if first is None or previous is None:
                first = candidate
            else:
                candidate.prev, candidate.next = previous, previous.next
                previous.next.prev = candidate
                previous.next = candidate
            candidate.replicated = optimal
            self._locate(candidate, new.group)
            previous = candidate
            item = item.next
            if item is ring:
                assert first is not None
                return first

    def _confirm(self, candidate: Candidate) -> None:
        """Put the chosen candidate in the ring and work out again the ranges it changes:
        its own, and the following tokens' up to the `rf`-th distinct group."""
        new = candidate.node
        self._put(candidate.token, new.unit)
        placed = Placed(candidate.token, new)
        placed.replicated = candidate.replicated
        _link_after(placed, candidate.before_in_ring())
        self._measure(placed, new.group)
        seen: set[Hashable] = set()
        item = placed.next
        while len(seen) < self.replicas:
            candidate = candidate.next
            self._locate(candidate, candidate.node.group)
            if item.node.group not in seen:
                seen.add(item.node.group)
                self._measure(item, new.group)
            item = item.next

    def _locate(self, token: Placed | Candidate, new_group: Hashable) -> int:
        """`populateTokenInfo`: where the token's replicated range starts, and the threshold
        before which a new token of `new_group` cannot change it."""
        own_group = token.node.group
        seen: set[Hashable] = set()
        threshold = token.token
        item = token.before_in_ring()
        while True:
            start, group = item.token, item.node.group
            if group not in seen:
                seen.add(group)
                if len(seen) >= self.replicas:
                    break
                threshold = start
                if group == own_group:
                    break
            item = item.prev
        if new_group == own_group:
            threshold = token.token
        elif new_group != group and new_group in seen:
            threshold = start
        token.threshold, token.start = threshold, start
        return start

    def _measure(self, item: Placed, new_group: Hashable) -> None:
        """`populateTokenInfoAndAdjustUnit`: the range again, its change added to its node."""
        start = self._locate(item, new_group)
        now = size(start, item.token)
        before = item.replicated
        item.replicated = now
        item.node.ownership += now - before

    def _score(self, candidate: Candidate, optimal: float, new_weight: float) -> float:
        """`evaluateImprovement`: how much taking the candidate lowers the squared distances
        from the target of the ranges it changes and of their nodes' ownership per token."""
        adjusted: dict[Node, float] = {}

        def adjust(token: Placed | Candidate, node: Node, start: int, end: int) -> float:
            before = token.replicated
            now = size(start, end)
            tokens = float(node.token_count)
            if node in adjusted:
                adjusted[node] += now - before
            else:
                adjusted[node] = node.ownership + (now - before)
            return (_sq(now - optimal) - _sq(before - optimal)) / (tokens * tokens)

        change = 0.0
        change += adjust(candidate, candidate.node, candidate.start, candidate.token)
        seen: set[Hashable] = set()
        item = candidate.split
        while len(seen) < self.replicas:
            if item.node.group not in seen:
                seen.add(item.node.group)
                start = _further_start(item.threshold, candidate.token, item.token)
                change += adjust(item, item.node, start, item.token)
            item = item.next
        node_change = 0.0
        for node in reversed(adjusted):
            tokens = float(node.token_count)
            diff = (_sq(adjusted[node] / tokens - optimal)
                    - _sq(node.ownership / tokens - optimal))
            node_change += diff * new_weight if node is candidate.node else diff
        return -(change + node_change)


def allocate_replicated_tokens(num_tokens: Sequence[int], replicas: int, seed: int,
                               racks: int = 1,
                               progress: Callable[[int], None] | None = None
                               ) -> list[list[int]]:
    """Each unit's tokens, sorted, when units 0, 1, ... join in order asking for
    `num_tokens[i]` tokens each, for `replicas` copies; with one rack each unit is its own
    group, with more unit i is in rack `i % racks`. The first token is drawn from
    `java.util.Random(seed)`."""
    group_of: Callable[[int], Hashable] = ((lambda unit: unit) if racks == 1
                                           else (lambda unit: ("rack", unit % racks)))
    return join_in_order(ReplicationAwareAllocator(replicas, seed, group_of), num_tokens,
                         progress)
