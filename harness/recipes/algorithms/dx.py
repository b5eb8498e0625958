"""DxHash: Dong and Wang, "DxHash: A Scalable Consistent Hash Based on the
Pseudo-Random Sequence", arXiv:2107.07930, 2021.

`ALGORITHMS["dx"].build(servers, capacity=c)` holds `c` slots (default: the power of
two at least twice the servers), one bit each, of which the first len(servers) work. A
key follows its own pseudo-random sequence of slots and takes the first working one, so
removing a server clears its bit and only its keys move, each to the next working slot
of its sequence.
The steps, written after the authors' description and SUPSI's Java DxEngine
(java-consistent-hashing-algorithms), which draws the sequence from java.util.Random
seeded with the key:

- lookup: probe i (from 0) is splitmix64_at(k, i) mod c (harness.core.splitmix), k the
  key's xxHash64 (seed 0); the first probe on a working slot is the key's bucket;
- remove(b): clear b's bit.

The sequence is unbounded in the paper; ours stops after 4c probes (for a key to get
that far, even with one slot of c working, is a chance below e**-4) and then takes the
first working slot at or after the last probe, wrapping, so every lookup ends. Memory
is c / 8 bytes, plus 2 bytes a server for the bucket-to-server map from the first
removal on; a lookup makes c / working probes on average, so sparse slots make slow lookups
(the reason to keep the capacity near the servers). Servers have no weights; an added server is a
rebuild from the longer list, which is DxHash's own addition (the lowest free slot)
only while nothing was removed.

The plain-Python definition is `DxReference`; the C form is cext/dx.c.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.native import dx as c_dx
from harness.core.params import Param
from harness.core.servers import Server
from harness.core.splitmix import splitmix64_at, splitmix64_at_many
from harness.recipes.algorithms.removable import (
    DEFAULT_SLOTS_PER_SERVER,
    MAX_CAPACITY,
    FixedCapacity,
    capacity_for,
)

CAPACITY = Param("capacity", "int", 0,
                 "slots, working or not, at least the servers "
                 f"(0: the power of two at least {DEFAULT_SLOTS_PER_SERVER} per server)",
                 minimum=0, maximum=MAX_CAPACITY)


class DxReference:
    """DxHash in plain Python: a list of working flags and the probe sequence."""

    def __init__(self, capacity: int, working: int) -> None:
        self.capacity = capacity
        self.working = [b < working for b in range(capacity)]

    def remove(self, slot: int) -> None:
        self.working[slot] = False

    def bucket(self, key: int) -> int:
        slot = 0
        for i in range(c_dx.MAX_PROBES_PER_SLOT * self.capacity):
            slot = splitmix64_at(key, i) % self.capacity
            if self.working[slot]:
                return slot
        while not self.working[slot]:
            slot = (slot + 1) % self.capacity
        return slot


def dx_vectorised(key_hashes: npt.NDArray[np.unsignedinteger],
                  working: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """The probes over a whole array: round i probes every key not yet on a working slot."""
    keys = np.asarray(key_hashes, dtype=np.uint64)
    capacity = len(working)
    slot = np.zeros(len(keys), dtype=np.int64)
    live = np.arange(len(keys))
    for i in range(c_dx.MAX_PROBES_PER_SLOT * capacity):
        if not live.size:
            return slot
        slot[live] = (splitmix64_at_many(keys[live], i) % np.uint64(capacity)).astype(np.int64)
        live = live[~working[slot[live]]]
    # The keys still on removed slots scan on to the first working one, wrapping.
    doubled = np.flatnonzero(np.concatenate([working, working]))
    slot[live] = doubled[np.searchsorted(doubled, slot[live])] % capacity
    return slot


class DxAlgorithm(FixedCapacity[c_dx.CDx, DxReference]):
    """DxHash over the servers, in configuration order."""

    name: ClassVar[str] = "dx"
    #: a build: its C flags, an entry of 128 slots (5 ns an entry at 1,000,000 slots); the
    #: plain-Python reference's flags are priced by `estimated_seconds`; measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 1e-6
    declared: ClassVar[tuple[Param, ...]] = (CAPACITY,)
    capacity_words = ("dx's", "slots")

    def new_binding(self) -> c_dx.CDx:
        return c_dx.CDx(self.capacity, self.initial)

    def new_reference(self) -> DxReference:
        return DxReference(self.capacity, self.initial)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        # The estimate counts 16 bytes an entry; a slot is one bit.
        return math.ceil(capacity_for(len(servers), params) / 128)

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server], params: dict[str, Any]) -> float:
        """A slot: one bit in C, but a list item (an 8-byte pointer to a shared bool) in the
        plain reference and a byte in the vectorised one's flags; 16 bytes with margin (the
        default, 64 bytes an entry of 128 slots, counted half a byte)."""
        return 16.0 * capacity_for(len(servers), params) + 64.0 * len(servers)

    @classmethod
    def estimated_client_bytes(cls, servers: Sequence[Server], params: dict[str, Any]
                               ) -> float:
        """A client builds the C form alone (no reference): one bit a slot held, and a
        byte a slot while it is built; measured by memray, a build routing 2,000 keys
        peaked at 1.40 and 1.38 bytes a slot at 200,000 and 2,000,000 slots (held 0.15 and
        0.13). Two bytes a slot, and 64 a server."""
        return 2.0 * capacity_for(len(servers), params) + 64.0 * len(servers)

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """A key probes capacity / servers slots on average: the C lookups 3 ns a probe,
        the plain reference 1 us, the vectorised one 0.05 us a key-probe plus 20 us a round
        (about that ratio times ln(keys) rounds), and filling the flags 0.2 us a slot;
        a margin of 1.5. Removals raise the ratio further. A client's build (no key looked
        up by a reference: a `[clients]` recipe, a peer's claimed `routes_like`) builds
        neither reference: its C flags are priced by `estimated_build_seconds`, and only its
        C lookups here."""
        slots = capacity_for(len(servers), params)
        ratio = slots / max(1, len(servers))
        if not (reference_keys or plain_keys):
            return (1.5 * fast_keys * ratio * 3e-9,
                    f"dx's C lookups probe {ratio:,.3g} slots a key")
        rounds = ratio * math.log(max(2, reference_keys))
        seconds = (fast_keys * ratio * 3e-9 + plain_keys * ratio * 1e-6
                   + reference_keys * ratio * 5e-8 + rounds * 2e-5 + slots * 2e-7)
        return 1.5 * seconds, f"dx's lookups probe {ratio:,.3g} slots a key"

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        capacity = int(params.get("capacity", 0))
        return f"c={capacity:,}" if capacity else "c=auto"

    def bits(self) -> npt.NDArray[np.bool_]:
        """Whether each slot works (a copy of the C form's bits)."""
        return self._c.bits()

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        working = np.array(self._reference.working, dtype=bool)
        return self.server_of_bucket()[dx_vectorised(key_hashes, working)]
