"""One data centre's computation, a task any worker can run: a pure function of its
inputs, seeded from them, so its answer is the same bits on any machine and in any order.

A task's inputs are its data centre's servers (drawn from the fleet's seed and the shape's
index), the old and new recipe, the eligibility rule, the traffic and its share of the new
ring per window. Data centres of one shape and one wave have the same inputs: one task
serves them all.

It returns, as plain JSON values:
- each ring of a router process (one per eligibility set), with the entries the old and
  the new recipe give it (from the recipe's point counts, before building);
- the keys and requests that change owner on the ring of all servers, routed by the
  algorithm's plain reference, and the formula (1 - k'/k)(1 - 1/N) where the rings nest;
- origin fetches per window of a zipf stream replayed through one LRU cache per server
  (`harness.core.cache_model`), three ways: no migration, the data centre switching at
  once, and through its stages (the rollback included).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.cache_model import lru_misses
from harness.core.hashing import hash_many
from harness.core.servers import Server, eligibility_sets, servers_with
from harness.metrics.migration.metric import zipf_stream
from harness.metrics.migration.sides import SortedKeys
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.base import rebuilt


@dataclass(frozen=True)
class DcTask:
    algorithm: str
    old: dict[str, Any]
    #: the new recipe's algorithm and parameters
    new_algorithm: str
    new: dict[str, Any]
    #: (name, weight, capabilities) of each server
    servers: tuple[tuple[str, float, tuple[str, ...]], ...]
    eligibility: tuple[tuple[str, ...], ...]
    universe: int
    zipf_exponent: float
    cache_objects: int
    requests_per_window: int
    warmup_requests: int
    #: the share of requests on the new ring, per window: staged and all at once
    staged: tuple[float, ...]
    at_once: tuple[float, ...]
    seed: int

    def key(self, build: str) -> str:
        """What identifies the task's answer: its inputs and the C build that computes it."""
        text = json.dumps([asdict(self), build], sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def requests(self) -> int:
        return self.warmup_requests + len(self.staged) * self.requests_per_window


def nested_formula(old: dict[str, Any], new: dict[str, Any], servers: int) -> float | None:
    """(1 - k'/k)(1 - 1/N): the keys that move when the new ring's points are a subset of
    the old's (same construction, hash and point names, fewer points per unit weight)."""
    same = all(old.get(k) == new.get(k) for k in ("construction", "hash", "point_name"))
    k, k2 = old.get("points_per_weight"), new.get("points_per_weight")
    if not same or old.get("construction") != "points" or not isinstance(k, int) \
            or not isinstance(k2, int) or k2 > k:
        return None
    return float((1 - k2 / k) * (1 - 1 / servers))


def _per_window(misses: npt.NDArray[np.bool_], warm: int, window: int) -> list[int]:
    after = misses[warm:]
    return [int(v) for v in after.reshape(-1, window).sum(axis=1)]


def run_task(task: DcTask) -> dict[str, Any]:
    """The data centre's rings, moved keys and origin fetches per window (JSON values)."""
    servers = [Server(name, weight) for name, weight, _caps in task.servers]
    capabilities = [caps for _n, _w, caps in task.servers]
    old_class, new_class = get_algorithm(task.algorithm), get_algorithm(task.new_algorithm)
    rings = []
    for requires in eligibility_sets(capabilities, task.eligibility):
        fleet = servers_with(servers, capabilities, requires)
        if fleet:
            rings.append({"requires": list(requires), "servers": len(fleet),
                          "entries_old": int(old_class.estimated_entries(fleet, task.old)),
                          "entries_new": int(new_class.estimated_entries(fleet, task.new))})
    old = rebuilt(old_class, task.old, servers)
    new = rebuilt(new_class, task.new, servers)
    names = [f"object-{i}".encode() for i in range(task.universe)]
    owner_old = SortedKeys.of(old, names).owners(old)
    owner_new = SortedKeys.of(new, names).owners(new)
    selector = hash_many("fnv1a-fmix32", [b"rollout:" + n for n in names]) / 2.0**32
    del names, old, new
    moved = owner_old != owner_new
    stream = zipf_stream(task.universe, task.zipf_exponent, task.requests, task.seed)
    warm, window = task.warmup_requests, task.requests_per_window
    series = {}
    for label, shares in (("steady", None), ("at_once", task.at_once),
                          ("staged", task.staged)):
        route = owner_old[stream]
        if shares is not None:
            per_request = np.repeat(np.asarray(shares, dtype=np.float64), window)
            keys = stream[warm:]
            route[warm:] = np.where(selector[keys] < per_request, owner_new[keys],
                                    owner_old[keys])
        misses = lru_misses(route, stream, len(servers), task.cache_objects)
        series[label] = _per_window(misses, warm, window)
        del route, misses
    return {
        "rings": rings,
        "moved_fraction": float(moved.mean()),
        "moved_requests_fraction": float(moved[stream].mean()),
        "formula_moved_fraction": nested_formula(task.old, task.new, len(servers)),
        "misses": series,
    }
