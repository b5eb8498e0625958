"""Bindings of cext/replicas.c: the preference list of every point of a ring (replicas.h),
for harness.core.replicas."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import c_input, ffi, lib, u16_out

__all__ = ["MAX_COPIES", "replica_start_table"]

#: REPLICAS_MAX_COPIES in replicas.h
MAX_COPIES = 64


def replica_start_table(labels: npt.NDArray[np.integer], owners: npt.NDArray[np.uint16],
                        copies: int) -> npt.NDArray[np.uint16]:
    """cext/replicas.c's table (points x copies). The caller has checked that the ring holds
    `copies` distinct labels: the C code trusts it."""
    if not 1 <= copies <= MAX_COPIES or len(labels) != len(owners) or not len(owners):
        raise HarnessError(f"replica table: 1 to {MAX_COPIES} copies over labels and owners "
                           f"of one non-zero length (got {copies} copies, {len(labels)} labels, "
                           f"{len(owners)} owners)")
    labels16 = c_input(labels, np.uint16)
    owners16 = c_input(owners, np.uint16)
    table = np.empty((len(owners16), copies), dtype=np.uint16)
    lib.replica_start_table(ffi.from_buffer("uint16_t[]", labels16),
                            ffi.from_buffer("uint16_t[]", owners16), len(owners16), copies,
                            u16_out(table.reshape(-1)))
    return table
