"""riak_core's claim: which node owns each of a fixed ring's partitions, in plain Python.

Read from basho/riak_core (src/riak_core_membership_claim.erl, the default
`wants_claim_v2` / `choose_claim_v2` and their fallback `sequential_claim`;
src/riak_core_membership_leave.erl for a leave; src/riak_core_claimant.erl for when
each runs). A ring is a list of owners, one per partition in index order; nodes are
named, and riak_core orders its members by name (an orddict), as here.

- A cluster starts as `fresh`: every partition owned by its first node.
- A node joins (`add_member`, then `claim`): every claiming member in name order is
  given partitions while `wants_claim_v2` says it owns fewer than `Q div N`, each round
  by `choose_claim_v2`: compute each member's delta to its fair share
  (`get_deltas`); with enough nodes to space copies `target_n_val` apart, prefer the
  partitions in violation, then all in order, else the node's places in a diagonal of
  `target_n_val` nodes; drop those within `target_n_val` of the node's own partitions
  (`prefilter_violations`), take them from members over their share, each
  `target_n_val` after the last (`select_indices`), at most the node's want; fall back
  to `sequential_claim` (a diagonal stripe of the members, its tail repaired by
  `solve_tail_violations`) when nothing was claimed or the spacing fails.
- A node leaves (`remove_from_cluster`): each of its partitions in turn goes to a
  member of the lowest count not within `target_n_val - 1` partitions either side
  (`simple_transfer`, a random one among equals); if none qualifies, everything it owned
  goes to the first member and `sequential_claim` re-stripes the ring; then `claim`
  runs again.

Changed, since it cannot be replayed: the random pick of a leave draws from SplitMix64
seeded by `seed`, not from Erlang's `rand`; where riak_core walks a `dict` (member
counts in `get_deltas`' rebalancing and in a leave's candidates), whose order is
Erlang's hash order, this walks members by name. Location awareness
(`target_location_n_val`), claim v3 and v4 are not modelled.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from harness.core.errors import HarnessError
from harness.recipes.constructions.allocated import SplitMix64

#: a ring: the owner (a node name) of each partition, in index order
Owners = list[str]


def ceiling(value: float) -> int:
    """riak_core's `ceiling`: trunc, plus one when there is a fraction."""
    whole = math.trunc(value)
    return whole if value - whole == 0 else whole + 1


def spaced_by_n(a: int, b: int, target_n: int, size: int) -> bool:
    """Partitions a and b at least `target_n` apart both ways round the ring."""
    forward, back = (a - b, b - a + size) if a > b else (a - b + size, b - a)
    return forward >= target_n and back >= target_n


def counts(members: Sequence[str], owners: Owners) -> list[tuple[str, int]]:
    """Partitions each member owns (members in name order)."""
    held = Counter(owners)
    return [(m, held.get(m, 0)) for m in members]


def _increase(deltas: list[tuple[str, int, int]], short: int, most: int,
              givers: bool) -> tuple[list[tuple[str, int, int]], int]:
    """`increase_keeps` (givers) or `increase_takes`: one more partition for each node
    that can hold it under `most`, in order, until the shortfall is made up."""
    out = []
    for node, own, delta in deltas:
        if short < 0 and ((delta < 0) if givers else (delta > 0)):
            add = 1 if own + delta + 1 <= most else 0
            short += add
            delta += add
        out.append((node, own, delta))
    return out, short


def get_deltas(size: int, members: Sequence[str], owners: Owners) -> dict[str, int]:
    """Each node's change of partitions towards its fair share (members and any other
    owner, the latter 0), as `get_deltas` and `rebalance_deltas` compute it."""
    average = size / len(members)
    most = ceiling(average)
    active = []
    for node, own in counts(members, owners):
        delta = average - own
        active.append((node, own, -ceiling(abs(delta)) if delta < 0 else math.trunc(delta)))
    short = sum(own + delta for _, own, delta in active) - size
    if short > 0:
        raise HarnessError("riak claim: deltas past the ring size (riak_core has no case)")
    if short < 0:
        active, short = _increase(active, short, most, givers=True)
        if short < 0:
            active, short = _increase(active, short, most, givers=False)
    deltas = {node: delta for node, _, delta in sorted(active)}
    for node in owners:
        deltas.setdefault(node, 0)
    return deltas


def find_violations(owners: Owners, target_n: int) -> list[int]:
    """Partitions of pairs of one node closer than `target_n` (the ring wrapped), the
    earlier of each pair first, flattened as `find_violations` gives them."""
    steps = target_n - 1
    indexed = list(enumerate(owners))
    window: list[tuple[int, str]] = []
    bad: list[int] = []
    for index, node in indexed + indexed[:steps]:
        previous = next((i for i, n in window if n == node), None)
        window = [(index, node), *window][:steps]
        if previous is not None:
            bad += [previous, index]
    return bad


def meets_target_n(owners: Owners, target_n: int) -> bool:
    """No node twice within `target_n` partitions, the wrap past the last partition
    aside (`meets_target_n` reports those and does not fail on them)."""
    last: dict[str, int] = {}
    for index, node in enumerate(owners):
        if node in last and index - last[node] < target_n:
            return False
        last[node] = index
    return True


def diagonal_stripe(size: int, nodes: Sequence[str | None]) -> list[str | None]:
    """Partition i to node i mod len(nodes)."""
    return [nodes[i % len(nodes)] for i in range(size)]


def _tail_nodelist(size: int, nodes: Sequence[str], shortfall: int,
                   fetches: int) -> list[str]:
    """`solve_tail_violations`: sequences of the nodes, some with a few left out, so that
    the ring's last partial sequence does not repeat a node too soon."""
    count = len(nodes)
    sequences = [list(nodes[:size % count + shortfall])]
    counter = size % count + 1
    while shortfall:
        remove = min(fetches, shortfall, count - counter)
        if remove <= 0:
            raise HarnessError(f"riak claim: the tail of a ring of {size} partitions cannot "
                               f"be solved for {count} nodes (riak_core would not return)")
        removed = nodes[counter - 1:counter - 1 + remove]
        sequences.insert(0, [n for n in nodes if n not in removed])
        counter += remove
        shortfall -= remove
    filled = sum(len(s) for s in sequences)
    sequences[:0] = [list(nodes)] * ((size - filled) // count)
    flat = [n for s in sequences for n in s]
    if len(flat) != size:
        raise HarnessError(f"riak claim: the tail's sequences fill {len(flat)} of {size} "
                           f"partitions (riak_core's zip would fail)")
    return flat


def sequential_claim(owners: Owners, node: str, members: Sequence[str],
                     target_n: int) -> Owners:
    """`sequential_claim`: the members (and `node`) striped in name order, the tail
    repaired when it would break `target_n` and can be."""
    nodes = sorted({node, *members})
    size, count = len(owners), len(nodes)
    overhang = size % count
    shortfall = target_n - overhang
    complete = size // count
    if complete == 0:
        raise HarnessError(f"riak claim: {count} nodes for {size} partitions")
    if 0 < overhang < target_n and complete * (count - target_n) >= shortfall:
        return _tail_nodelist(size, nodes, shortfall, ceiling(shortfall / complete))
    return [n for n in diagonal_stripe(size, nodes) if n is not None]


def choose_claim_v2(owners: Owners, node: str, members: Sequence[str],
                    target_n: int) -> Owners:
    """One round of `choose_claim_v2` for `node` (a member), on `members` in name order."""
    size, count = len(owners), len(members)
    deltas = get_deltas(size, members, owners)
    want = deltas[node]
    enough = count > target_n or (count == target_n and size % target_n == 0)
    if enough:
        violated = find_violations(owners, target_n)
        rest = list(range(size))
        for index in violated:
            if index in rest:
                rest.remove(index)
        indices = violated + rest
    else:
        expanded: list[str | None] = [*members, *[None] * target_n][:target_n]
        preferred = [i for i, n in enumerate(diagonal_stripe(size, expanded)) if n == node]
        offsets = range(size // len(preferred) + 1)
        indices = [(x + y) % size for y in offsets for x in preferred][:size]
    mine = [i for i, n in enumerate(owners) if n == node]
    candidates = [i for i in indices if all(spaced_by_n(c, i, target_n, size) for c in mine)]
    claim: list[int] = []
    if candidates:
        left = dict(deltas)
        last, first = candidates[0], True
        for index in candidates:
            owner = owners[index]
            if left[owner] < 0 and (first or spaced_by_n(last, index, target_n, size)):
                claim.append(index)
                left[owner] += 1
                last, first = index, False
        claim = claim[:max(want, 0)]
    claimed = list(owners)
    for index in claim:
        claimed[index] = node
    if not claim or (enough and not meets_target_n(claimed, target_n)):
        return sequential_claim(owners, node, members, target_n)
    return claimed


def wants_claim(owners: Owners, node: str, members: Sequence[str]) -> bool:
    """`wants_claim_v2`: the node owns fewer than `Q div N` partitions."""
    return owners.count(node) < len(owners) // len(members)


def claim(owners: Owners, members: Sequence[str], target_n: int) -> Owners:
    """`claim`: each member in name order claims until it wants no more."""
    ordered = sorted(members)
    if not any(wants_claim(owners, m, ordered) for m in ordered):
        return owners
    for node in ordered:
        rounds = 0
        while wants_claim(owners, node, ordered):
            owners = choose_claim_v2(owners, node, ordered, target_n)
            rounds += 1
            if rounds > len(owners):
                raise HarnessError(f"riak claim: {node} still wants partitions after "
                                   f"{rounds} rounds (riak_core would not return)")
    return owners


def joined(size: int, nodes: Sequence[str], target_n: int) -> Owners:
    """The ring after the nodes joined one at a time, in order, from a fresh ring of the
    first: `fresh`, then `add_member` and `claim` per node."""
    owners = [nodes[0]] * size
    for count in range(2, len(nodes) + 1):
        owners = claim(owners, nodes[:count], target_n)
    return owners


def simple_transfer(owners: Owners, leaving: str, held: Sequence[tuple[str, int]],
                    target_n: int, draw: SplitMix64) -> Owners | None:
    """`simple_transfer`: each partition of `leaving` in turn to a node of the lowest
    count (`held`: (node, partitions) in name order) with none of its `target_n - 1`
    neighbours either side, a random one among equals; None when a partition has no
    such node (riak_core's `target_n_fail`)."""
    tally = dict(held)
    steps = target_n - 1
    result = list(owners)
    placed: list[tuple[int, str]] = []  # (partition, owner) walked, latest first
    for index, node in enumerate(owners):
        if node == leaving:
            ahead = list(enumerate(owners))[index + 1:]
            before, after = _unsafe(placed, ahead, steps), _unsafe(ahead, placed, steps)
            qualify = [(m, c) for m, c in tally.items() if m not in before and m not in after]
            if not qualify:
                return None
            best = min(c for _, c in qualify)
            preferred = [m for m, c in qualify if c == best]
            node = preferred[draw.next() % len(preferred)]
            result[index] = node
            tally[node] += 1
        placed.insert(0, (index, node))
    return result


def left(owners: Owners, leaving: str, members: Sequence[str], target_n: int,
         seed: int) -> Owners:
    """The ring after `leaving` leaves (`remove_from_cluster`, then `claim` of the
    rest); `members` are the others."""
    ordered = sorted(m for m in members if m != leaving)
    result = simple_transfer(owners, leaving, counts(ordered, owners), target_n,
                             SplitMix64(seed))
    if result is None:
        head = ordered[0]
        result = sequential_claim([head if n == leaving else n for n in owners], head,
                                  ordered, target_n)
    return claim(result, ordered, target_n)


def _unsafe(forward: Sequence[tuple[int, str]], back: Sequence[tuple[int, str]],
            steps: int) -> set[str]:
    """The nodes of the `steps` partitions on one side, wrapping to the other end."""
    if len(forward) < steps:
        near = [*forward, *list(reversed(back))[:steps - len(forward)]]
    else:
        near = list(forward[:steps])
    return {n for _, n in near}
