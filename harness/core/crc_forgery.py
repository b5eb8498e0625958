"""Names with a chosen CRC-32: four appended bytes set any checksum.

CRC-32 is affine over GF(2): for messages of equal length, crc(a ^ b ^ c) =
crc(a) ^ crc(b) ^ crc(c). So the checksum of `prefix + s`, for a 4-byte suffix
s, is crc(prefix + 0000) ^ M s, where M is a 32 x 32 bit matrix that does not
depend on the prefix (the last four bytes act on the register the same way
whatever came before) and is invertible: every 32-bit value is reached by
exactly one suffix. An attacker who wants a name on a given server of a CRC-32
ring picks a hash value inside that server's arcs and solves for the suffix,
instead of searching: one candidate per hit. `forge_suffixes` does it for a
whole array of targets at once.
"""

from __future__ import annotations

import zlib
from functools import cache

import numpy as np
import numpy.typing as npt

#: bytes appended to the prefix: one 32-bit word, as many bits as the checksum
SUFFIX_BYTES = 4


@cache
def _inverse_columns() -> tuple[int, ...]:
    """Column j of M's inverse: the suffix (as a little-endian uint32) whose linear part
    is bit j alone. Gauss-Jordan elimination over GF(2) on (M's column, suffix) pairs."""
    zero = zlib.crc32(bytes(SUFFIX_BYTES))
    pairs = [[zlib.crc32((1 << i).to_bytes(SUFFIX_BYTES, "little")) ^ zero, 1 << i]
             for i in range(32)]
    for bit in range(32):
        pivot = next(k for k in range(bit, 32) if pairs[k][0] >> bit & 1)
        pairs[bit], pairs[pivot] = pairs[pivot], pairs[bit]
        for k in range(32):
            if k != bit and pairs[k][0] >> bit & 1:
                pairs[k][0] ^= pairs[bit][0]
                pairs[k][1] ^= pairs[bit][1]
    assert all(pairs[bit][0] == 1 << bit for bit in range(32))  # M is invertible
    return tuple(pair[1] for pair in pairs)


def forge_suffixes(prefix: bytes, targets: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """For each target checksum t, the suffix s (a little-endian uint32) such that
    zlib.crc32(prefix + s.to_bytes(4, "little")) == t; in numpy, 32 steps for any count."""
    wanted = targets.astype(np.uint32) ^ np.uint32(zlib.crc32(prefix + bytes(SUFFIX_BYTES)))
    suffixes = np.zeros(len(targets), dtype=np.uint32)
    for bit, column in enumerate(_inverse_columns()):
        chosen = (wanted >> np.uint32(bit)) & np.uint32(1)
        suffixes ^= chosen * np.uint32(column)
    return suffixes


def forged_names(prefix: bytes, targets: npt.NDArray[np.uint32]) -> list[bytes]:
    """The names `prefix + suffix` whose CRC-32 are the targets."""
    width = len(prefix) + SUFFIX_BYTES
    names = np.empty((len(targets), width), dtype=np.uint8)
    names[:, : len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
    names[:, len(prefix):] = forge_suffixes(prefix, targets).astype("<u4").view(
        np.uint8).reshape(-1, SUFFIX_BYTES)
    raw = names.tobytes()
    return [raw[i:i + width] for i in range(0, len(raw), width)]
