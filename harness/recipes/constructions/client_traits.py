"""A client's ring, described by the traits real clients differ in.

The generic `points` construction takes these traits as parameters; at their defaults it
is the ring it always was (and is built in C, `generator.py`). Any trait set otherwise
builds here, in numpy, from the hashes of `harness.core.trait_hashes` (C where the hash is
already in C: MD5, CRC-32, BLAKE2b, FNV-1a + fmix32). `route_plain` is the definition in
plain Python (lists, `bisect`) that the tests hold every combination to.

The traits, in the order a client applies them:

- **key encoding** (`key_encoding`): a key's text as UTF-8 bytes, or each character's low 8
  bits (pymemcache and other clients that write `chr & 0xff`); and `key_max_bytes`, a key
  cut to its first N bytes (0: whole). Point names are encoded the same way.
- **server form** (`server_form`): `{server}` as written; as nginx hashes it (host, a zero
  byte, the port digits); or with ":11211" left out (libmemcached, npm hashring).
- **names per server** (`weight_rounding`, `points_per_weight`): P x weight rounded half to
  even (Python's `round`), half up (`Math.round`, `(int)(x + 0.5)`, `lround`), down or up,
  at least one; or a share of P x N names for N servers, floored (libketama): exactly
  (integer arithmetic), in double precision (`floor(w / total * P * N)`, npm hashring;
  `floor(P * N * w / total)`, PyPI hashring/hash_ring), or in single precision as
  libmemcached computes it.
- **point names** (`point_name`, `first_point`): name j of a server for j = first_point,
  ...; or (`chain = "previous"`) one name (`chain_name`) whose hash is continued with the
  previous point's hash, little-endian (nginx's CRC-32 chain).
- **points per digest** (`points_per_digest`): words 0..D-1 of each name's digest, in the
  hash's byte order (libketama: four of an MD5).
- **ring size** (`ring_size`): positions and key hashes taken modulo it (0: the hash's width).
- **collision winner** (`collision_winner`): of equal points, the server listed first or last.
- **tie and direction** (`tie`): the first point >= the key's hash (wrapping), the first
  point > it, or the last point <= it (wrapping to the last point).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.params import Param
from harness.core.ring import Ring
from harness.core.servers import Server
from harness.core.trait_hashes import (
    DIGEST_HASHES,
    TRAIT_HASH_NAMES,
    TRAIT_HASHES,
    digest_words,
)

WEIGHT_ROUNDINGS = ("half-even", "half-up", "floor", "ceil", "share-exact", "share-double",
                    "share-double-scaled", "share-single")
TIES = ("at-or-after", "after", "at-or-before")
WINNERS = ("first", "last")
KEY_ENCODINGS = ("utf-8", "low-8-bits")
CHAINS = ("none", "previous")
SERVER_FORMS = ("as-written", "host-nul-port", "without-port-11211")
DEFAULT_PORT = ":11211"
MAX_POINTS_PER_DIGEST = 16  # a 64-byte BLAKE2b digest
MAX_RING_SIZE = 2**64
#: point names hashed in one batch: enough to amortise numpy's per-column passes
BATCH_NAMES = 1 << 13
#: a traits ring's generation, traced (tests/unit/test_client_traits.py): 20-39 B a point
#: at 200,000 points (positions, owners, the packed sort), and up to 2.2 MiB for one batch
#: of names and its numpy passes; priced with a margin
GENERATION_BYTES_PER_POINT = 48
GENERATION_FIXED_BYTES = 4 << 20


def trait_params() -> tuple[Param, ...]:
    """The traits as the `points` construction declares them (after its own four)."""
    return (
        Param("key_hash", "choice", "same", "hash of keys ('same': the points' hash)",
              choices=("same", *TRAIT_HASH_NAMES)),
        Param("points_per_digest", "int", 1,
              "points cut from each name's digest (word i in the hash's byte order; >1 "
              f"needs one of {', '.join(DIGEST_HASHES)})", minimum=1,
              maximum=MAX_POINTS_PER_DIGEST),
        Param("first_point", "int", 0, "number j of a server's first point name",
              minimum=0, maximum=1),
        Param("chain", "choice", "none", "'previous': each point hashes chain_name followed "
              "by the previous point's hash, little-endian (0 before the first)",
              choices=CHAINS),
        Param("chain_name", "template", "{server}", "the name a chain of points continues",
              placeholders=("server",)),
        Param("server_form", "choice", "as-written",
              "what {server} is: the name as written, nginx's host + zero byte + port, or "
              "the name with ':11211' left out", choices=SERVER_FORMS),
        Param("weight_rounding", "choice", "half-even",
              "names per server: points_per_weight x weight rounded (at least 1), or "
              "floor(weight / total x points_per_weight x servers) exactly, in double "
              "precision (share-double-scaled: points_per_weight x servers x weight / total) "
              "or in single precision", choices=WEIGHT_ROUNDINGS),
        Param("tie", "choice", "at-or-after", "which point a key's hash goes to",
              choices=TIES),
        Param("collision_winner", "choice", "first",
              "of equal points, the server listed first or last keeps it", choices=WINNERS),
        Param("key_encoding", "choice", "utf-8",
              "bytes of a key's and a point name's text: UTF-8, or each character's low 8 "
              "bits", choices=KEY_ENCODINGS),
        Param("key_max_bytes", "int", 0, "a key cut to its first N bytes (0: whole)",
              minimum=0, maximum=2**20),
        Param("ring_size", "int", 0, "positions and key hashes modulo this (0: the hash's "
              "width)", minimum=0, maximum=MAX_RING_SIZE),
    )


@dataclass(frozen=True)
class ClientTraits:
    """Every trait of a client's ring (see the module doc); defaults are the `points` ring."""

    hash: str = "blake2b-32"
    point_name: str = "{server}:{j}"
    points_per_weight: int = 160
    key_hash: str = "same"
    points_per_digest: int = 1
    first_point: int = 0
    chain: str = "none"
    chain_name: str = "{server}"
    server_form: str = "as-written"
    weight_rounding: str = "half-even"
    tie: str = "at-or-after"
    collision_winner: str = "first"
    key_encoding: str = "utf-8"
    key_max_bytes: int = 0
    ring_size: int = 0

    @classmethod
    def trait_names(cls) -> tuple[str, ...]:
        """The traits beyond the `points` construction's own four parameters."""
        return tuple(f.name for f in fields(cls)[3:])

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> ClientTraits:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})

    def problem(self) -> tuple[str, str, object] | None:
        """What is wrong with this combination, as (field, what it must be, its value)."""
        if self.hash not in TRAIT_HASHES:
            return ("hash", "an unkeyed hash when client traits are set", self.hash)
        key_bits = TRAIT_HASHES[self.key_hash_name].bits
        if key_bits != self.bits:
            return ("key_hash", f"a hash as wide as the ring's {self.hash!r} ({self.bits} "
                    f"bits; {self.key_hash!r} has {key_bits})", self.key_hash)
        if self.points_per_digest > 1:
            if self.hash not in DIGEST_HASHES:
                return ("points_per_digest", f"1 for hash {self.hash!r}, which has no digest "
                        "to cut", self.points_per_digest)
            words = DIGEST_HASHES[self.hash].words
            if self.points_per_digest > words:
                return ("points_per_digest", f"at most {words}, the words of a {self.hash!r} "
                        "digest", self.points_per_digest)
            if self.chain != "none":
                return ("points_per_digest", f"1 with chain = {self.chain!r}",
                        self.points_per_digest)
        if self.ring_size and not 2 <= self.ring_size <= 2**self.bits:
            return ("ring_size", f"0 or from 2 to 2**{self.bits} for hash {self.hash!r}",
                    self.ring_size)
        return None

    @property
    def key_hash_name(self) -> str:
        return self.hash if self.key_hash == "same" else self.key_hash

    @property
    def bits(self) -> int:
        return TRAIT_HASHES[self.hash].bits

    @property
    def modulus(self) -> int:
        return self.ring_size or 2**self.bits

    @property
    def reduces(self) -> bool:
        """Whether positions and key hashes are reduced below the hash's own width."""
        return bool(0 < self.ring_size < 1 << self.bits)

    @property
    def share_rounding(self) -> bool:
        return self.weight_rounding.startswith("share-")

    # -- what each trait computes ---------------------------------------------------------

    def encode(self, text: str) -> bytes:
        if self.key_encoding == "low-8-bits":
            return bytes(ord(c) & 0xFF for c in text)
        return text.encode("utf-8", "surrogateescape")

    def key_bytes(self, key: bytes) -> bytes:
        """The bytes the client hashes of a key given as UTF-8 bytes."""
        if self.key_encoding != "utf-8":
            key = self.encode(key.decode("utf-8", "surrogateescape"))
        return key[:self.key_max_bytes] if self.key_max_bytes else key

    def server_text(self, name: str) -> str:
        if self.server_form == "host-nul-port":
            host, colon, port = name.rpartition(":")
            if name[:5].lower() == "unix:":
                return name[5:] + "\0"
            if colon and all("0" <= c <= "9" for c in port):
                return host + "\0" + port
            return name + "\0"
        if self.server_form == "without-port-11211":
            return name.removesuffix(DEFAULT_PORT)
        return name

    def name_counts(self, servers: Sequence[Server]) -> list[int]:
        """Names (digests) each server gets."""
        per = self.points_per_weight
        mode = self.weight_rounding
        if not self.share_rounding:
            return [max(1, _rounded(mode, per * s.weight)) for s in servers]
        n = len(servers)
        if mode == "share-exact":
            total = sum(Fraction(s.weight) for s in servers)
            return [int(Fraction(s.weight) * per * n // total) for s in servers]
        total_f = sum(float(s.weight) for s in servers)
        if mode == "share-double":
            return [math.floor(float(s.weight) / total_f * per * n) for s in servers]
        if mode == "share-double-scaled":
            return [math.floor(per * n * float(s.weight) / total_f) for s in servers]
        return _single_precision_counts(servers, per, self.points_per_digest)

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [count * self.points_per_digest for count in self.name_counts(servers)]

    def names_of(self, server: Server, count: int) -> list[bytes]:
        text = self.server_text(server.name)
        start = self.first_point
        return [self.encode(self.point_name.format(server=text, j=j))
                for j in range(start, start + count)]

    def server_points(self, server: Server, count: int) -> npt.NDArray[np.unsignedinteger]:
        """One server's points, in the order the client adds them, before `ring_size`."""
        function = TRAIT_HASHES[self.hash]
        if self.chain == "previous":
            base = self.encode(self.chain_name.format(server=self.server_text(server.name)))
            width = self.bits // 8
            out = np.empty(count, dtype=function.dtype)
            previous = 0
            for i in range(count):
                previous = function.one(base + previous.to_bytes(width, "little"))
                out[i] = previous
            return out
        return self._hash_names(self.names_of(server, count))

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        """The client's ring, in the lookup convention of every layout (first point >=)."""
        counts = self.name_counts(servers)
        if sum(counts) == 0:
            raise HarnessError("a ring needs at least one point (every share floored to 0)")
        dtype = TRAIT_HASHES[self.hash].dtype
        positions = np.concatenate(list(self._points(servers, counts))).astype(dtype)
        if self.reduces:
            positions %= dtype.type(self.ring_size)
        owners = np.repeat(np.arange(len(servers), dtype=np.uint16),
                           [c * self.points_per_digest for c in counts])
        names = tuple(s.name for s in servers)
        ring = Ring.from_points(positions, owners, bits=self.bits, servers=names,
                                collision_winner="lowest" if self.collision_winner == "first"
                                else "highest")
        if self.tie != "at-or-before":
            return ring
        # The last point <= h owns [p_i, p_i+1 - 1]: as "first point >=" that arc ends at
        # the next point's position less one (module doc), modulo the ring's size.
        ends = np.roll(ring.positions, -1)
        at_zero = ends == 0
        with np.errstate(over="ignore"):
            ends -= dtype.type(1)
        if self.reduces:
            ends[at_zero] = dtype.type(self.ring_size - 1)
        shifted = Ring.from_points(ends, ring.owners, bits=self.bits, servers=names)
        return replace(shifted, collisions=ring.collisions)

    def _points(self, servers: Sequence[Server], counts: Sequence[int]
                ) -> Iterator[npt.NDArray[np.unsignedinteger]]:
        """Every server's points in server order, names hashed in batches of at least
        `BATCH_NAMES` (a batch of one server's few names would cost a numpy pass per byte)."""
        if self.chain == "previous":
            for server, count in zip(servers, counts, strict=True):
                yield self.server_points(server, count)
            return
        batch: list[bytes] = []
        for server, count in zip(servers, counts, strict=True):
            batch += self.names_of(server, count)
            if len(batch) >= BATCH_NAMES:
                yield self._hash_names(batch)
                batch = []
        yield self._hash_names(batch)

    def _hash_names(self, names: list[bytes]) -> npt.NDArray[np.unsignedinteger]:
        if self.points_per_digest == 1:
            return TRAIT_HASHES[self.hash].many(names)
        return digest_words(self.hash, names, self.points_per_digest).reshape(-1)

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        """Each key's hash, ready for the ring's "first point >=" lookup."""
        function = TRAIT_HASHES[self.key_hash_name]
        if self.key_encoding != "utf-8" or self.key_max_bytes:
            keys = [self.key_bytes(k) for k in keys]
        hashes = function.many(keys).astype(function.dtype)
        dtype = hashes.dtype.type
        if self.reduces:
            hashes %= dtype(self.ring_size)
        if self.tie == "after":
            with np.errstate(over="ignore"):
                hashes += dtype(1)  # past the largest position: 0, the wrap
            if self.reduces:
                hashes[hashes == dtype(self.ring_size)] = 0
        return hashes


def _rounded(mode: str, value: float) -> int:
    if mode == "half-up":
        return math.floor(value + 0.5)
    if mode == "floor":
        return math.floor(value)
    if mode == "ceil":
        return math.ceil(value)
    return round(value)


def _single_precision_counts(servers: Sequence[Server], per: int, digest: int) -> list[int]:
    """floor of the share in libmemcached's single-precision steps: share x (P x D) / D x N,
    each product rounded to a float, plus a double 1e-10 before the floor."""
    f32 = np.float32
    total = f32(sum(float(s.weight) for s in servers))
    live = f32(len(servers))
    counts = []
    for s in servers:
        share = f32(f32(float(s.weight)) / total)
        scaled = f32(f32(f32(share * f32(per * digest)) / f32(digest)) * live)
        counts.append(math.floor(f32(float(scaled) + 0.0000000001)))
    return counts


def route_plain(traits: ClientTraits, servers: Sequence[Server],
                keys: Sequence[bytes]) -> list[int]:
    """Each key's server index, in plain Python: every point hashed by the hash's `one`,
    sorted as a list of (position, order) pairs, collisions and ties decided by `bisect`."""
    function = TRAIT_HASHES[traits.hash]
    modulus = traits.modulus
    points: list[tuple[int, int]] = []  # (position, server)
    for index, (server, count) in enumerate(zip(servers, traits.name_counts(servers),
                                                strict=True)):
        if traits.chain == "previous":
            base = traits.encode(traits.chain_name.format(
                server=traits.server_text(server.name)))
            previous = 0
            for _ in range(count):
                previous = function.one(base + previous.to_bytes(traits.bits // 8, "little"))
                points.append((previous % modulus, index))
            continue
        for name in traits.names_of(server, count):
            if traits.points_per_digest == 1:
                points.append((function.one(name) % modulus, index))
                continue
            spec = DIGEST_HASHES[traits.hash]
            digest = spec.digest(name)
            for w in range(traits.points_per_digest):
                word = int.from_bytes(digest[4 * w:4 * w + 4], spec.order)  # type: ignore[arg-type]
                points.append((word % modulus, index))
    owner_of: dict[int, int] = {}
    for position, index in points:
        if position not in owner_of or traits.collision_winner == "last":
            owner_of[position] = index if position not in owner_of else max(
                owner_of[position], index)
    positions = sorted(owner_of)
    key_function = TRAIT_HASHES[traits.key_hash_name]
    out = []
    for key in keys:
        h = key_function.one(traits.key_bytes(key)) % modulus
        if traits.tie == "at-or-before":
            i = bisect.bisect_right(positions, h) - 1
        else:
            i = (bisect.bisect_left if traits.tie == "at-or-after" else bisect.bisect_right)(
                positions, h)
            i %= len(positions)
        out.append(owner_of[positions[i]])
    return out
