"""Range partitioning: the key space cut into ordered ranges, each held by one server, as
Bigtable, HBase, Spanner and CockroachDB place data when range scans matter.

`ALGORITHMS["range"].build(servers, range_keys=250, sample_name="key-{i}",
sample_count=200_000)`. What it models:

- **Order.** A key's place is its bytes in lexicographic order. Routing reads the 8 bytes
  after the sample's common prefix ("key-" for "key-{i}") as a big-endian unsigned
  integer (`order_codes`, zero-padded), so split points have 8 bytes of resolution past
  the prefix: keys that agree that far always share a range (a real system may split
  between them), and a key without the prefix sorts before or after all of them.
- **Splits follow the data.** A range store splits a range when it grows past a size, so
  its ranges end up holding equal shares of the data. The build draws that end state from
  a sample of the keys (`sample_name` formatted for i in 0..`sample_count`-1, by default
  the scenario's default workload): ceil(`sample_count` / `range_keys`) ranges cut at the
  sample's quantiles, however many servers hold them (800 by default). A workload unlike
  the sample gets ranges as uneven as it is unlike; a fleet of more servers than ranges
  leaves some servers empty, as a small table on a large cluster does.
- **Placement.** A balancer keeps each server's count of ranges to its share of the
  weight: range j, in key order, goes to the server of highest weighted rendezvous score
  (`score = -weight / ln(u)`, u from splitmix64 of the server's name hash and j) among
  those still under `ceil(share x ranges)`. The choice depends on the fleet only, so a
  fleet rebuilt from a list with one more server keeps most ranges where they were, and
  `without` hands only the lost server's ranges to the others, as a rebalancer does.
- **Splits and merges** as operations on a built table (`split`, `merged`, `moved_to`):
  a split cuts a range at its sample median and leaves both halves on their server (it
  moves no data, as in CockroachDB and HBase); capacity is added by moving a half, so one
  step moves half a range rather than a share of every server. A merge joins two adjacent
  ranges on the larger one's server, moving the smaller one when their owners differ.

Forms: `lookup_many` is numpy's `searchsorted` over the split codes; the plain reference
is `bisect` over Python lists of the same. There are no points and no weights' arcs, so
the ring-only metrics (collisions, counts, processes) leave it out. `range_scans`
(`harness.metrics.range_scans`) measures what it is for: servers touched per scan.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.params import Param
from harness.core.servers import Server
from harness.core.splitmix import splitmix64_at_many
from harness.core.workload import KeysSpec, key_names, longest_name
from harness.recipes.algorithms.base import OneForm
from harness.recipes.algorithms.rendezvous_weighted import positive_weights_problem

RANGE_KEYS = Param("range_keys", "int", 250,
                   "sample keys a range holds at most: the sample is cut into "
                   "ceil(sample_count / range_keys) ranges at its quantiles, whatever the "
                   "fleet (a range store splits by size)", minimum=1, maximum=10_000_000)
SAMPLE_NAME = Param("sample_name", "template", "key-{i}",
                    "the names of the key sample the ranges are cut from (the data a "
                    "range store would have split on)", placeholders=("i",))
SAMPLE_COUNT = Param("sample_count", "int", 200_000,
                     "keys in the sample the ranges are cut from", minimum=1,
                     maximum=10_000_000)

#: the code of a key past every key with the sample's prefix
LARGEST_CODE = 2**64 - 1
#: scores computed at once while ranges are placed (a block of ranges x the servers)
SCORE_BLOCK = 2**18
#: bytes of a routed range: its split code (8) and owner (2)
ENTRY_SIZE = 10
#: bytes per sample key while the ranges are cut: the name as str and bytes (about 110
#: beyond its characters, held twice: priced by the longest name, as a sample named
#: "{i:>30000}" peaked at 639 MB against an estimate of 117 MiB that left them out), its
#: 8-byte code and the sort's copy; and per range while placed: the plain reference's
#: two list items and int objects (about 90), the score array's share
BYTES_PER_SAMPLE_KEY = 160
BYTES_PER_RANGE = 128
#: seconds per sample key (format, encode, code, sort: 0.35 us measured at 200,000 on a
#: quiet machine; 1.2 to 1.65 us at 200,000 to 10,000,000 on a shared one, where a sample
#: of 10,000,000 priced at 1 us took 17 s against an estimate of 10) and per character of
#: its name (formatting and encoding: 3 to 5.4 ns measured at widths of 1,000 and 30,000)
#: and per range placed (an argmax over the servers' scores, computed in blocks, and again
#: over the servers under their cap once the best is full: 6 us a range at 1,000 servers,
#: 56 us at 10,000), each with a margin of about 2
SECONDS_PER_SAMPLE_KEY = 3e-6
SECONDS_PER_SAMPLE_CHARACTER = 1e-8
SECONDS_PER_RANGE = 1e-5
SECONDS_PER_RANGE_SERVER = 1.2e-8


def order_codes(keys: Sequence[bytes], prefix: bytes = b"") -> npt.NDArray[np.uint64]:
    """Each key's place in byte order at 8-byte resolution past a common `prefix`: the 8
    bytes after it, zero-padded, read big-endian (a shorter key sorts first, as a prefix
    does). A key without the prefix sorts before or after every key with it: code 0 or
    the largest code."""
    width = len(prefix)
    tails: list[bytes] = []
    outside: dict[int, int] = {}
    for index, key in enumerate(keys):
        if key.startswith(prefix):
            tails.append(key[width:width + 8])
        else:
            tails.append(b"")
            outside[index] = 0 if key < prefix else LARGEST_CODE
    fixed = np.array(tails, dtype="S8") if tails else np.zeros(0, dtype="S8")
    codes = fixed.view(">u8").astype(np.uint64)
    for index, code in outside.items():
        codes[index] = code
    return codes


def name_hash(name: str) -> int:
    """A server's 64-bit name hash for its rendezvous scores (BLAKE2b, first 8 bytes)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")


def scores(name_hashes: npt.NDArray[np.uint64], weights: npt.NDArray[np.float64],
           range_index: int | npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Every server's weighted rendezvous score for a range (or, broadcast, a block of
    them): -weight / ln(u), u in (0, 1) from splitmix64 of the server's name hash at the
    range's index."""
    mixed = splitmix64_at_many(name_hashes, np.asarray(range_index, dtype=np.uint64))
    u = ((mixed >> np.uint64(11)).astype(np.float64) + 0.5) / float(2**53)
    return np.asarray(-weights / np.log(u), dtype=np.float64)


def capacities(weights: Sequence[float], ranges: int) -> list[int]:
    """The ranges each server may hold: its share of the weight, rounded up."""
    total = math.fsum(weights)
    return [math.ceil(ranges * w / total - 1e-9) for w in weights]


def place(servers: Sequence[Server], ranges: int,
          owners: list[int] | None = None) -> list[int]:
    """Owners of ranges 0..ranges-1 by capped rendezvous, in key order; where `owners` gives
    an owner (not -1) it is kept and counts against its server's cap."""
    hashes = np.array([name_hash(s.name) for s in servers], dtype=np.uint64)
    weights = np.array([float(s.weight) for s in servers], dtype=np.float64)
    caps = capacities(weights.tolist(), ranges)
    placed = list(owners) if owners is not None else [-1] * ranges
    held = [0] * len(servers)
    for owner in placed:
        if owner >= 0:
            held[owner] += 1
    full = np.array([h >= c for h, c in zip(held, caps, strict=True)])
    step = max(1, SCORE_BLOCK // len(servers))
    for start in range(0, ranges, step):
        # Scores of a block of ranges at once; the caps are then applied range by range, in
        # key order, as they fill.
        block = scores(hashes[np.newaxis, :], weights[np.newaxis, :],
                       np.arange(start, min(start + step, ranges))[:, np.newaxis])
        for row, j in enumerate(range(start, min(start + step, ranges))):
            if placed[j] >= 0:
                continue
            # The best score among servers under their cap (argmax: the first of a tie).
            owner = int(np.argmax(block[row]))
            if full[owner]:
                owner = int(np.argmax(np.where(full, -np.inf, block[row])))
            placed[j] = owner
            held[owner] += 1
            full[owner] = held[owner] >= caps[owner]
    return placed


#: the parameters' defaults, for the estimates (which may see a partial table)
DEFAULTS = {"range_keys": 250, "sample_name": "key-{i}", "sample_count": 200_000}


def range_count(params: dict[str, Any]) -> int:
    """Ranges the sample is cut into: ceil(sample_count / range_keys)."""
    return -(-int(params["sample_count"]) // int(params["range_keys"]))


def _sample_spec(params: dict[str, Any]) -> KeysSpec:
    return KeysSpec(count=int(params["sample_count"]), name=str(params["sample_name"]))


def longest_sample_name(params: dict[str, Any]) -> int:
    """Characters of the sample's longest name (its template may pad to any width)."""
    return longest_name(_sample_spec({**DEFAULTS, **params}))


def sample_names(params: dict[str, Any]) -> list[bytes]:
    """The key sample the ranges are cut from, encoded."""
    return [name.encode() for name in key_names(_sample_spec(params))]


def common_prefix(names: Sequence[bytes]) -> bytes:
    """The longest prefix every name shares (the fixed text of the sample's template)."""
    if not names:
        return b""
    low, high = min(names), max(names)
    width = 0
    while width < min(len(low), len(high)) and low[width] == high[width]:
        width += 1
    return low[:width]


def cut(sorted_codes: npt.NDArray[np.uint64], ranges: int) -> npt.NDArray[np.uint64]:
    """The first codes of ranges 1..ranges-1 at the sample's quantiles, distinct and
    above the smallest code (range 0 starts at 0): fewer when the sample has fewer
    distinct codes."""
    n = len(sorted_codes)
    starts = sorted_codes[[(j * n) // ranges for j in range(1, ranges)]]
    return np.unique(starts[starts > sorted_codes[0]])


#: a built table: split codes, owners, the sample's sorted codes and its common prefix
Table = tuple[npt.NDArray[np.uint64], list[int], npt.NDArray[np.uint64], bytes]


class RangePartition(OneForm):
    """Ordered key ranges cut at a sample's quantiles, placed by capped rendezvous."""

    name: ClassVar[str] = "range"
    #: a build: nothing beyond sorting its sample, which `estimated_seconds` prices (84 ms
    #: measured for 200,000 sample keys, priced 0.64 s there); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 0.0
    declared: ClassVar[tuple[Param, ...]] = (RANGE_KEYS, SAMPLE_NAME, SAMPLE_COUNT)

    def __init__(self, servers: Sequence[Server], params: dict[str, Any],
                 table: Table | None = None) -> None:
        super().__init__(servers, params)
        if table is None:
            names = sample_names(self._params)
            prefix = common_prefix(names)
            codes = np.sort(order_codes(names, prefix))
            splits = cut(codes, range_count(self._params))
            table = (splits, place(self._servers, len(splits) + 1), codes, prefix)
        splits, owners, self._sample, self.prefix = table
        #: first code of each range but the first (range 0 starts at 0)
        self.splits = np.ascontiguousarray(splits, dtype=np.uint64)
        self.owners = np.array(owners, dtype=np.uint16)
        self._splits_list = self.splits.tolist()
        self._owners_list = [int(o) for o in owners]

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return positive_weights_problem(servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return range_count({**DEFAULTS, **params})

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server], params: dict[str, Any]) -> float:
        """The sample while ranges are cut, and each range's entry, references and scores."""
        sample = int({**DEFAULTS, **params}["sample_count"])
        return float((BYTES_PER_SAMPLE_KEY + 2 * longest_sample_name(params)) * sample
                     + BYTES_PER_RANGE * cls.estimated_entries(servers, params)
                     # a block of scores and its uint64 and float64 temporaries
                     + 6 * 8 * max(SCORE_BLOCK, len(servers)))

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """Cutting the sample and placing each range by one score over the servers."""
        ranges = cls.estimated_entries(servers, params)
        sample = int({**DEFAULTS, **params}["sample_count"])
        seconds = ((SECONDS_PER_SAMPLE_KEY
                    + SECONDS_PER_SAMPLE_CHARACTER * longest_sample_name(params)) * sample
                   + ranges * (SECONDS_PER_RANGE + SECONDS_PER_RANGE_SERVER * len(servers)))
        return seconds, f"range cuts a sample of {sample:,} keys and places {ranges:,} ranges"

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return f"{range_count({**DEFAULTS, **params}):,} ranges"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        return len(self._owners_list)

    @property
    def entry_size(self) -> int:
        return ENTRY_SIZE

    @property
    def nbytes(self) -> int:
        return int(self.splits.nbytes + self.owners.nbytes)

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return order_codes(keys, self.prefix)

    def range_of(self, codes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.intp]:
        """The range each order code falls in."""
        return np.searchsorted(self.splits, np.asarray(codes, dtype=np.uint64), side="right")

    def lookup(self, key_hash: int) -> int:
        return self._owners_list[bisect.bisect_right(self._splits_list, key_hash)]

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self.owners[self.range_of(key_hashes)]

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        return np.array(self.reference_lookup_many(key_hashes), dtype=np.uint16)

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        splits, owners = self._splits_list, self._owners_list
        return [owners[bisect.bisect_right(splits, int(h))] for h in key_hashes.tolist()]

    def exact_shares(self) -> npt.NDArray[np.float64] | None:
        """Each server's share of the sample (the data the ranges were cut from)."""
        held = np.bincount(self.lookup_many(self._sample), minlength=len(self._servers))
        return np.asarray(held / max(len(self._sample), 1), dtype=np.float64)

    def _with(self, splits: npt.NDArray[np.uint64], owners: list[int],
              servers: Sequence[Server] | None = None) -> RangePartition:
        return RangePartition(self._servers if servers is None else servers, self._params,
                              (splits, owners, self._sample, self.prefix))

    def range_sizes(self, codes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.int64]:
        """Keys of these codes in each range."""
        return np.bincount(self.range_of(codes), minlength=self.entries).astype(np.int64)

    def split(self, index: int) -> RangePartition:
        """Range `index` cut at the sample median of its codes, both halves on its server
        (a split moves no data); the table unchanged if it holds one distinct code."""
        inside = self._sample[self.range_of(self._sample) == index]
        distinct = np.unique(inside)
        if len(distinct) < 2:
            return self
        cut_at = distinct[len(distinct) // 2]
        splits = np.insert(self.splits, index, cut_at)
        owners = [*self._owners_list[:index + 1], *self._owners_list[index:]]
        return self._with(splits, owners)

    def moved_to(self, index: int, server: int) -> RangePartition:
        """Range `index` handed to `server`."""
        owners = list(self._owners_list)
        owners[index] = server
        return self._with(self.splits, owners)

    def merged(self, index: int, codes: npt.NDArray[np.unsignedinteger]) -> RangePartition:
        """Ranges `index` and `index + 1` joined, on the server of the one holding more of
        these keys."""
        sizes = self.range_sizes(codes)
        keep = index if sizes[index] >= sizes[index + 1] else index + 1
        owners = list(self._owners_list)
        owners[index:index + 2] = [owners[keep]]
        return self._with(np.delete(self.splits, index), owners)

    def without(self, index: int) -> RangePartition:
        """The fleet without server `index`: its ranges placed on the others by the same
        capped rendezvous, every other range left where it is."""
        servers = [s for i, s in enumerate(self._servers) if i != index]
        kept = [-1 if o == index else (o - 1 if o > index else o) for o in self._owners_list]
        return RangePartition(servers, self._params,
                              (self.splits, place(servers, len(kept), kept), self._sample,
                               self.prefix))
