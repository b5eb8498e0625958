"""Bindings of cext/md5_many.c: MD5 (RFC 1321) of a batch of names in one C call, our own
implementation because OpenSSL's per-call cost is several times the hash of a key name
(md5_many.h says more). `md5_digest` exposes the whole digest so that tests check it
against hashlib and the RFC's test suite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from harness.core.native._c import ffi, joined_names, lib

__all__ = ["MD5_DIGEST_BYTES", "md5_digest", "md5_prefix32_many"]

#: md5_many.h
MD5_DIGEST_BYTES = 16


def md5_digest(data: bytes) -> bytes:
    """The 16-byte MD5 digest of `data`."""
    digest = ffi.new("uint8_t[]", MD5_DIGEST_BYTES)
    lib.md5_digest(data, len(data), digest)
    return bytes(ffi.buffer(digest))


def md5_prefix32_many(names: Sequence[bytes],
                      byte_order: Literal["little", "big"]) -> npt.NDArray[np.uint32]:
    """The first four MD5 digest bytes of each name, read in `byte_order`."""
    joined, offsets = joined_names(names)
    out = np.empty(len(names), dtype=np.uint32)
    lib.md5_prefix32_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(names),
                          int(byte_order == "big"),
                          ffi.from_buffer("uint32_t[]", out, require_writable=True))
    return out
