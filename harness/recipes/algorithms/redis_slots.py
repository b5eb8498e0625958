"""Redis Cluster's key slots: a fixed table of 16,384 slots, each held by one server.

`ALGORITHMS["redis-slots"].build(servers)` takes no parameters. A key's slot is
`keyHashSlot` (redis 7.0, src/cluster.c): CRC-16/XMODEM of the key, or of its hash tag
(the bytes between the first `{` and the first `}` after it, when there are any), & 0x3FFF.
The slots are shared out as `redis-cli --cluster create` (redis 7.0, src/redis-cli.c,
`clusterManagerCommandCreate`, no replicas) shares them:

- the masters are the servers interleaved by host, one of each host in turn, in the
  order their hosts first appear (servers on distinct hosts, or all on one, keep their
  order);
- master i takes the contiguous slots from the end of the previous master's range to
  `lround(cursor + 16384 / N - 1)`, where `16384 / N` and the cursor that steps by it are
  single-precision floats, the last master taking every slot up to 16,383.

At 10 masters that gives 1,638, 1,639, 1,638, ... slots (the tests check the ranges
against a live `redis-cli --cluster create` of 10 redis-server 7.0 nodes, and every slot
against `CLUSTER KEYSLOT`). redis-cli refuses fewer than three masters; the rule itself is
defined from one master, which this takes, up to 4,096 (`MAX_MASTERS`): its float32 cursor
drifts, and at 13,901 masters it runs past slot 16,383, so larger counts are refused
(every count up to 4,096 was checked to tile the slots; Redis advises at most 1,000).
Redis has no weights: servers must all weigh 1. Removing a server is measured as a
cluster created anew from the others (what `--cluster create` of the shorter list gives;
resharding by hand would move less).

Forms: `route` computes each key's slot and its owner in one C call
(cext/client_hashes.c); `lookup` / `lookup_many` take a key's slot (any integer, reduced
mod 16,384) and read the table; the plain reference walks the masters' ranges.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.client_hashes import REDIS_SLOTS
from harness.core.native import client_hashes as c_client_hashes
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm, unweighted_problem

#: the most masters whose slot ranges redis-cli's single-precision split tiles exactly
#: (checked for every count up to it; 13,901 masters overrun the last slot)
MAX_MASTERS = 4096


def host_of(name: str) -> str:
    """The host part of "host:port" (the whole name when it has no port)."""
    return name.rpartition(":")[0] if ":" in name else name


def interleaved_by_host(names: Sequence[str]) -> list[int]:
    """Server indexes in redis-cli's master order: one server of each host in turn."""
    by_host: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        by_host.setdefault(host_of(name), []).append(index)
    queues = list(by_host.values())
    order: list[int] = []
    while len(order) < len(names):
        for queue in queues:
            if queue:
                order.append(queue.pop(0))
    return order


def slot_ranges(masters: int) -> list[tuple[int, int]]:
    """(first, last) slots of each master in turn, as redis-cli 7.0 computes them."""
    f32 = np.float32
    per_master = f32(f32(REDIS_SLOTS) / f32(masters))
    cursor, first, ranges = f32(0.0), 0, []
    for i in range(masters):
        # lround of a non-negative float: half away from zero.
        last = math.floor(float(f32(f32(cursor + per_master) - f32(1))) + 0.5)
        if last > REDIS_SLOTS or i == masters - 1:
            last = REDIS_SLOTS - 1
        last = max(last, first)
        ranges.append((first, last))
        first = last + 1
        cursor = f32(cursor + per_master)
    return ranges


class RedisSlotsAlgorithm(OneForm):
    """Redis Cluster's 16,384 key slots, shared among the servers as redis-cli does."""

    name: ClassVar[str] = "redis-slots"
    #: a build: its 16,384 slots shared out (75 ns a slot); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 150e-9

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        order = interleaved_by_host([s.name for s in self._servers])
        ranges = slot_ranges(len(order))
        #: the last slot of each range and its server, for the plain reference's bisection
        self._range_ends = [last for _, last in ranges]
        self._range_owners = order
        self._slot_owners = np.empty(REDIS_SLOTS, dtype=np.uint16)
        for server, (first, last) in zip(order, ranges, strict=True):
            self._slot_owners[first:last + 1] = server

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        if len(servers) > MAX_MASTERS:
            return (f"at most {MAX_MASTERS:,}, past which redis-cli's single-precision "
                    f"split of the slots overruns (got {len(servers):,} servers)")
        return unweighted_problem("Redis Cluster", servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return REDIS_SLOTS

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server], params: dict[str, Any]) -> float:
        """The table (two bytes a slot) and the reference's lists of range ends and owners
        (two list slots and two int objects per server: 80 bytes)."""
        return float(2 * REDIS_SLOTS + 80 * len(servers))

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """A bisection over the ranges per slot in plain Python (0.4 us), a table read in
        numpy (5 ns), measured on 100,000 slots at 100 servers, with a margin of 2; the
        build is 16,384 slots written once."""
        seconds = 2 * (plain_keys * 0.4e-6 + (reference_keys + fast_keys) * 5e-9) + 1e-3
        return seconds, f"{plain_keys:,} slots looked up in plain Python"

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return "redis slots"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def key_bits(self) -> int:
        return 32

    @property
    def entries(self) -> int:
        return REDIS_SLOTS

    @property
    def entry_size(self) -> int:
        return 2

    @property
    def nbytes(self) -> int:
        return int(self._slot_owners.nbytes)

    def slot_ranges(self) -> list[tuple[int, int, int]]:
        """(first slot, last slot, server index) of each master, in redis-cli's order."""
        firsts = [0, *(end + 1 for end in self._range_ends[:-1])]
        return list(zip(firsts, self._range_ends, self._range_owners, strict=True))

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return c_client_hashes.redis_keyslot_many(keys)

    def route(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return c_client_hashes.redis_route_many(keys, self._slot_owners)

    def lookup(self, key_hash: int) -> int:
        return int(self._slot_owners[key_hash % REDIS_SLOTS])

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        slots = np.asarray(key_hashes, dtype=np.uint64) % np.uint64(REDIS_SLOTS)
        owners: npt.NDArray[np.uint16] = self._slot_owners[slots]
        return owners

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        slots = np.asarray(key_hashes, dtype=np.uint64) % np.uint64(REDIS_SLOTS)
        at = np.searchsorted(np.asarray(self._range_ends, dtype=np.uint64), slots, side="left")
        return np.asarray(self._range_owners, dtype=np.uint16)[at]

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        ends, owners = self._range_ends, self._range_owners
        return [owners[bisect.bisect_left(ends, int(h) % REDIS_SLOTS)] for h in key_hashes]

    def exact_shares(self) -> npt.NDArray[np.float64]:
        # Over uniform key hashes reduced mod 16,384 (2**32 is a multiple of it), each slot
        # is 1/16,384 of the space.
        counts = np.bincount(self._slot_owners, minlength=len(self._servers))
        return counts.astype(np.float64) / REDIS_SLOTS
