"""Servers leaving one after another: the order they leave in, and the algorithm after each.

Plain values only (servers, parameters, indexes), so that the run and the fresh process
measuring memory (`harness.metrics.removals.memory`) walk the same states.

An order is a permutation of the fleet's indexes: `fifo` removes the oldest server first
(configuration order), `lifo` the newest first (the only order jump can follow), `random`
a seeded shuffle. A server leaves as the algorithm says a deployment loses it
(`Algorithm.without`) where it says so, else the algorithm is rebuilt from the servers
left (a ring of hashed points, rendezvous, jump's shorter range, a new Maglev table).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.base import Algorithm

ORDERS = ("fifo", "lifo", "random")


def removal_order(count: int, order: str, seed: int) -> list[int]:
    """The fleet's indexes in the order its servers leave."""
    if order == "fifo":
        return list(range(count))
    if order == "lifo":
        return list(range(count - 1, -1, -1))
    if order == "random":
        return [int(i) for i in np.random.default_rng(seed).permutation(count)]
    raise ValueError(f"unknown removal order {order!r}; expected one of {', '.join(ORDERS)}")


def removed_counts(count: int, max_share: float, step: float) -> list[int]:
    """Servers removed at each step: round(share x count) for shares 0, step, 2 step, ... up
    to max_share, distinct, and always leaving one server."""
    shares = int(max_share / step + 1e-9)
    counts = [min(count - 1, round(i * step * count)) for i in range(shares + 1)]
    return sorted(set(counts))


@dataclass
class State:
    """The algorithm after `removed` servers left, and the fleet indexes of those left."""

    removed: int
    algorithm: Algorithm
    #: fleet index of each live server, in the algorithm's server order
    live: list[int]
    #: "as it falls" (the algorithm's own `without`) or "rebuilt" (from the servers left;
    #: the first state, of the whole fleet, is built so)
    how: str


def removal_problem(algorithm: str, servers: Sequence[Server], params: dict[str, Any],
                    sequence: Sequence[int], last: int) -> str | None:
    """Why the algorithm cannot follow the first `last` removals of `sequence`, or None."""
    cls = get_algorithm(algorithm)
    live = list(range(len(servers)))
    for index in sequence[:last]:
        fleet = [servers[i] for i in live]
        if reason := cls.removal_problem(fleet, servers[index].name):
            return reason
        live.remove(index)
        if problem := cls.check_servers([servers[i] for i in live], params):
            return f"servers left must be {problem}"
    return None


def walk(algorithm: str, servers: Sequence[Server], params: dict[str, Any],
         sequence: Sequence[int], counts: Sequence[int]) -> Iterator[State]:
    """The algorithm at each count of removed servers, removing them in `sequence` order
    (checked first with `removal_problem`)."""
    cls = get_algorithm(algorithm)
    current: Algorithm = cls.from_params(servers, params)
    live = list(range(len(servers)))
    how = "rebuilt"
    done = 0
    for target in counts:
        rebuild = False
        for index in sequence[done:target]:
            position = live.index(index)
            fallen = None if rebuild else current.without(position)
            live.pop(position)
            if fallen is None:
                rebuild = True  # later removals of this step are made by the same rebuild
            else:
                current = fallen
        if rebuild:
            current = cls.from_params([servers[i] for i in live], params)
        if target:
            how = "rebuilt" if rebuild else "as it falls"
        done = target
        yield State(target, current, list(live), how)
