"""Maglev: Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load
Balancer" (NSDI 2016), built exactly as Envoy's `OriginalMaglevTable` builds it.

`ALGORITHMS["maglev"].build(servers, table_size=65537)` fills a lookup table
of `table_size` slots (a prime; Envoy's default) with server indexes:
- hosts are taken in name order (Envoy sorts them by their hash key, the
  address, which here is the server name);
- host permutation: `offset = xxHash64(name, 0) % M`,
  `skip = xxHash64(name, 1) % (M - 1) + 1`, slot j of it `(offset + j * skip) % M`;
- weights normalised to `w / sum(w)` (doubles); in round i (from 1) a host
  takes its next free slot when `i * weight >= target`, and its target (from
  0) then grows by the largest normalised weight, until the table is full.

The owner of a 64-bit key hash h is `table[h % M]`; `route` hashes keys with
xxHash64, seed 0, as Envoy's hash policies do. With equal weights every
server holds floor(M/N) or ceil(M/N) slots.

The table is filled in C (cext/algorithms.c); the plain-Python reference fills
its own table the same way (once, on first use) and parity compares them.

Checked against every expected table and route of Envoy's own tests
(test/extensions/load_balancing_policies/maglev/maglev_lb_test.cc, kept in
tests/fixtures/envoy_maglev_vectors.json) by tests/unit/test_envoy_maglev.py:
weighted and locality-weighted tables, the retry rule (`retry_hash`: retry n reads
`hash ^ (2**64 - n)`), and tables Envoy holds in its compact (bit-packed) form, which
its own cost rule (`envoy_table_form`) picks for every one of those tests. A single
host gets a one-entry table in recent Envoy (every hash goes to it, as here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.hashing import xxh64, xxh64_many
from harness.core.native import algorithms as c_algorithms
from harness.core.params import Param
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm

#: Envoy's default table size (`MaglevTable::DefaultTableSize`)
DEFAULT_TABLE_SIZE = 65_537
#: largest table: a permutation step `skip * next` must stay inside 64 bits
MAX_TABLE_SIZE = 2**31 - 1


def is_prime(n: int) -> bool:
    """Trial division by 2, 3 and 6k +/- 1: enough for table sizes below 2**31."""
    if n < 4:
        return n >= 2
    if n % 2 == 0 or n % 3 == 0:
        return False
    f = 5
    while f * f <= n:
        if n % f == 0 or n % (f + 2) == 0:
            return False
        f += 6
    return True


def _prime_check(value: int) -> str | None:
    return None if is_prime(value) else (
        "a prime number, so that each maglev permutation visits every slot")


TABLE_SIZE = Param("table_size", "int", DEFAULT_TABLE_SIZE,
                   "slots of the lookup table (a prime)", minimum=2, maximum=MAX_TABLE_SIZE,
                   check=_prime_check)


class Hosts:
    """The servers as Envoy's table build takes them: name order, permutation, weight.

    `normalized` gives the weights as Envoy hands them over (for locality-weighted
    balancing, each host's share within its locality times the locality's share); by
    default they are the servers' weights over their sum."""

    def __init__(self, servers: Sequence[Server], table_size: int,
                 normalized: Sequence[float] | None = None) -> None:
        order = sorted(range(len(servers)), key=lambda i: servers[i].name.encode())
        names = [servers[i].name.encode() for i in order]
        total = math.fsum(servers[i].weight for i in order)
        self.owners = order
        self.offsets = [xxh64(name, 0) % table_size for name in names]
        self.skips = [xxh64(name, 1) % (table_size - 1) + 1 for name in names]
        self.weights = ([servers[i].weight * 1.0 / total for i in order] if normalized is None
                        else [normalized[i] for i in order])
        self.max_weight = max(self.weights)


def retry_hash(key_hash: int, attempt: int) -> int:
    """The hash Envoy's Maglev reads for retry `attempt` (a host refused by a retry
    predicate): `hash ^ (~0 - attempt + 1)`, i.e. xor 2**64 - attempt; attempt 0 reads
    the hash itself."""
    return key_hash ^ ((2**64 - attempt) % 2**64) if attempt else key_hash


#: Envoy's `MaxNumberOfHostsForCompactMaglev`
MAX_HOSTS_FOR_COMPACT = 2**32 - 1
#: bytes of a `HostConstSharedPtr` (a std::shared_ptr) on a 64-bit build
_SHARED_POINTER_BYTES = 16


def envoy_table_form(hosts: int, table_size: int) -> str:
    """Which table Envoy builds ("compact" or "original"), by its own cost rule on a
    64-bit build with `allow_compact_maglev` on (its default): the compact table, host
    indexes of bit_width(hosts) bits beside one pointer per host, when that is smaller
    than a pointer per slot. Both are filled by the same loop and route alike."""
    if hosts > MAX_HOSTS_FOR_COMPACT:
        return "original"
    compact = _SHARED_POINTER_BYTES * hosts + hosts.bit_length() * table_size // 8
    return "compact" if compact < _SHARED_POINTER_BYTES * table_size else "original"


def fill_reference(hosts: Hosts, table_size: int) -> list[int]:
    """Envoy's turns, in plain Python: the owner of every slot."""
    table = [-1] * table_size
    following = [0] * len(hosts.owners)
    target = [0.0] * len(hosts.owners)
    filled, iteration = 0, 1
    while filled < table_size:
        for i, owner in enumerate(hosts.owners):
            if filled == table_size:
                break
            if iteration * hosts.weights[i] < target[i]:
                continue
            target[i] += hosts.max_weight
            offset, skip = hosts.offsets[i], hosts.skips[i]
            slot = (offset + skip * following[i]) % table_size
            while table[slot] >= 0:
                following[i] += 1
                slot = (offset + skip * following[i]) % table_size
            table[slot] = owner
            following[i] += 1
            filled += 1
        iteration += 1
    return table


class MaglevAlgorithm(OneForm):
    """A Maglev lookup table of uint16 server indexes."""

    name: ClassVar[str] = "maglev"
    #: a build: its C table filled slot by slot (32 ns a slot at 1,000,003 slots); the
    #: plain-Python reference's fill is priced by `estimated_seconds`; measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 50e-9
    declared: ClassVar[tuple[Param, ...]] = (TABLE_SIZE,)

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        self.table_size: int = params["table_size"]
        # Only the table is kept: what the memory figures count is what routing needs.
        hosts = Hosts(self._servers, self.table_size)
        self._table = c_algorithms.CMaglevTable(
            hosts.offsets, hosts.skips, hosts.weights, hosts.owners, hosts.max_weight,
            self.table_size)
        self.lookup = self._table.lookup

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return int(params.get("table_size", DEFAULT_TABLE_SIZE))

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server], params: dict[str, Any]) -> float:
        """A slot: 2 bytes in C, a list item in the reference (its pointer; owners are
        small ints the interpreter shares), its numpy copy, and the C build's byte of
        "taken" plus the reference build's list of the same; 24 bytes with margin."""
        return 24.0 * cls.estimated_entries(servers, params) + 64.0 * len(servers)

    @classmethod
    def estimated_client_bytes(cls, servers: Sequence[Server], params: dict[str, Any]
                               ) -> float:
        """A client builds the C table alone (no reference): 2 bytes a slot held, and a
        byte of "taken" a slot while it fills; measured by memray, a build routing 2,000
        keys peaked at 3.00 bytes a slot at 1,000,003 and 10,000,019 slots, 3 and 40
        servers alike. Four bytes a slot, and 64 a server."""
        return 4.0 * cls.estimated_entries(servers, params) + 64.0 * len(servers)

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """The plain-Python reference fills the whole table slot by slot: 3 us a slot
        (measured at M = 1,000,003), with a margin of 1.5; lookups are one read each. A
        client's build (no key looked up by a reference: a `[clients]` recipe, a peer's
        claimed `routes_like`) never fills it: its C table is priced by
        `estimated_build_seconds`, and its batch lookups at 5 ns a key (2.3 ns measured by
        benchmarks/run_rates.py --only algorithms, best of 3, load average 6.3)."""
        size = int(params.get("table_size", DEFAULT_TABLE_SIZE))
        if not (reference_keys or plain_keys):
            return fast_keys * 5e-9, f"maglev's C table looks up {fast_keys:,} keys"
        return 1.5 * size * 3e-6, f"maglev's reference fills all {size:,} slots in Python"

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return f"M={params.get('table_size', DEFAULT_TABLE_SIZE):,}"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        return self.table_size

    @property
    def entry_size(self) -> int:
        return 2

    @property
    def nbytes(self) -> int:
        return self._table.nbytes

    def lookup_attempt(self, key_hash: int, attempt: int) -> int:
        """The owner Envoy picks for retry `attempt` of this hash (`retry_hash`)."""
        return int(self.lookup(retry_hash(key_hash, attempt)))

    def slots(self) -> npt.NDArray[np.uint16]:
        """The owner of every slot (a copy of the table)."""
        return self._table.slots()

    def slot_counts(self) -> npt.NDArray[np.int64]:
        """Slots each server holds, in configuration order."""
        return np.bincount(self.slots(), minlength=len(self._servers))

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return xxh64_many(keys)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self._table.lookup_many(key_hashes)

    @cached_property
    def _reference_table(self) -> list[int]:
        return fill_reference(Hosts(self._servers, self.table_size), self.table_size)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        table = np.array(self._reference_table, dtype=np.uint16)
        slots = np.asarray(key_hashes, dtype=np.uint64) % np.uint64(self.table_size)
        return np.take(table, slots)

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        table, size = self._reference_table, self.table_size
        return [table[int(h) % size] for h in key_hashes]

    def exact_shares(self) -> npt.NDArray[np.float64]:
        # Of the 2**64 key hashes, slot s receives q + 1 if s < r, else q (2**64 = q*M + r).
        q, r = divmod(2**64, self.table_size)
        slots = self.slots()
        counts = np.bincount(slots, minlength=len(self._servers))
        low = np.bincount(slots[:r], minlength=len(self._servers))
        return np.array([(q * int(c) + int(extra)) / 2**64 for c, extra in zip(counts, low,
                                                                               strict=True)])
