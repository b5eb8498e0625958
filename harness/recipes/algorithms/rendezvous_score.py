"""Rendezvous (highest random weight) hashing with a chosen score, seed and tie rule: the
family the `rendezvous` algorithm (pymemcache's) is one member of.

`ALGORITHMS["rendezvous-score"].build(servers, score=..., hash=..., seed=..., ...)`. Every
server scores a key; the highest score wins. Scores:

- `"hash-of-name"`: the hash (under `seed`) of `name_template` filled with the server's
  name and the key, e.g. "{server}-{key}" (pymemcache 4: MurmurHash3_x86_32, seed 0; a tie
  goes to the greater name, `tie = "greater-name"`).
- `"xorshift-mult64"`: `xorshiftMult64(H(key) ^ H(server))` with a 64-bit H
  (dgryski/go-rendezvous, which go-redis v9's `Ring` uses with xxh64; its strict `>` keeps
  the first listed server on a tie, `tie = "first"`). xorshiftMult64(x): x ^= x >> 12;
  x ^= x << 25; x ^= x >> 27; x * 2685821657736338717, all mod 2**64.

No weights: servers must all weigh 1. Keys are routed by reference, as `rendezvous` routes
them (its key table, `rendezvous.KEYS`): a score needs the key itself, not a fixed-width
hash of it. One form, in plain Python, which is also the reference; O(servers) per key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.params import Param
from harness.core.servers import Server
from harness.core.trait_hashes import SEEDED_HASHES, TRAIT_HASH_NAMES, TRAIT_HASHES, seeded
from harness.recipes.algorithms.base import OneForm, unweighted_problem
from harness.recipes.algorithms.rendezvous import KEYS
from harness.recipes.constructions.client_traits import KEY_ENCODINGS, ClientTraits

SCORES = ("hash-of-name", "xorshift-mult64")
TIES = ("greater-name", "first", "last")
MASK64 = (1 << 64) - 1


def xorshift_mult64(x: int) -> int:
    x ^= x >> 12
    x = (x ^ (x << 25)) & MASK64
    x ^= x >> 27
    return (x * 2685821657736338717) & MASK64


class RendezvousScoreAlgorithm(OneForm):
    """Rendezvous over the servers with a declared score (no weights)."""

    name: ClassVar[str] = "rendezvous-score"
    #: a build: each server's name encoded and scored (9 us a server on 1,000); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 15e-6
    #: a client's recipe, routed in plain Python: [comparison] measures it only when named
    compared_by_default: ClassVar[bool] = False
    declared: ClassVar[tuple[Param, ...]] = (
        Param("score", "choice", "hash-of-name", "how a server scores a key", choices=SCORES),
        Param("hash", "choice", "murmur3-32", "the score's hash", choices=TRAIT_HASH_NAMES),
        Param("seed", "int", 0, f"the hash's seed (only {', '.join(SEEDED_HASHES)} take one)",
              minimum=0, maximum=2**64 - 1),
        Param("name_template", "template", "{server}-{key}",
              "what hash-of-name hashes", placeholders=("server", "key")),
        Param("tie", "choice", "greater-name", "which of equal scores wins", choices=TIES),
        Param("key_encoding", "choice", "utf-8", "bytes of a key's and a name's text",
              choices=KEY_ENCODINGS),
    )

    @classmethod
    def params_problem(cls, params: dict[str, Any]) -> tuple[str, str, object] | None:
        """Combinations no client has, as (field, expected, value)."""
        if params["seed"] and params["hash"] not in SEEDED_HASHES:
            return ("seed", f"0 for hash {params['hash']!r} (a seed needs one of "
                    f"{', '.join(SEEDED_HASHES)})", params["seed"])
        if params["score"] == "xorshift-mult64" and TRAIT_HASHES[params["hash"]].bits != 64:
            return ("hash", "a 64-bit hash for score = 'xorshift-mult64'", params["hash"])
        return None

    @classmethod
    def parse_params(cls, fields: Fields) -> dict[str, Any]:
        params = super().parse_params(fields)
        problem = cls.params_problem(params)
        if problem is not None:
            raise fields.error(*problem)
        return params

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return unweighted_problem("rendezvous-score", servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return len(servers)

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """One plain-Python score per key and server: up to 10 us each (murmur3 of 16
        bytes measured at 8.5 us), 12 us with the margin."""
        keys = plain_keys + reference_keys + fast_keys
        return 12e-6 * keys * len(servers), f"{keys:,} keys scored by {len(servers)} servers"

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return f"rendezvous {params.get('score', 'hash-of-name')} {params.get('hash', '')}"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        checked = cls.checked_params(servers, params)
        problem = cls.params_problem(checked)
        if problem is not None:
            field, expected, got = problem
            raise ScenarioError(f"algorithm {cls.name!r}: {field} must be {expected} "
                                f"(got {got!r})")
        return cls(servers, checked)

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        self._encoding = ClientTraits(key_encoding=params["key_encoding"])
        self._hash: Callable[[bytes], int] = seeded(params["hash"], params["seed"])
        self._server_hashes = [self._hash(self._encoding.encode(s.name)) for s in servers]
        order = sorted(range(len(servers)), key=lambda i: servers[i].name)
        #: a tie's winner ranks highest: the greater name, the first or the last listed
        self._rank = ({i: r for r, i in enumerate(order)} if params["tie"] == "greater-name"
                      else {i: (-i if params["tie"] == "first" else i)
                            for i in range(len(servers))})

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        return len(self._servers)

    @property
    def entry_size(self) -> int:
        return 8

    @property
    def nbytes(self) -> int:
        return 8 * len(self._servers)

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return KEYS.indexes(keys)

    def owner_of_key(self, key: bytes) -> int:
        """The winning server of one key (its bytes as UTF-8)."""
        text = key.decode("utf-8", "surrogateescape")
        if self._params["score"] == "xorshift-mult64":
            key_hash = self._hash(self._encoding.encode(text))
            scores = [xorshift_mult64(key_hash ^ h) for h in self._server_hashes]
        else:
            template = self._params["name_template"]
            scores = [self._hash(self._encoding.encode(template.format(server=s.name, key=text)))
                      for s in self._servers]
        return max(range(len(scores)), key=lambda i: (scores[i], self._rank[i]))

    def lookup(self, key_hash: int) -> int:
        (key,) = KEYS.lookup_keys(np.array([key_hash], dtype=np.uint64))
        return self.owner_of_key(key)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return np.array([self.owner_of_key(k) for k in KEYS.lookup_keys(
            np.asarray(key_hashes))], dtype=np.uint16)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        return self.lookup_many(key_hashes)

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        return [int(owner) for owner in self.lookup_many(key_hashes)]

    def exact_shares(self) -> npt.NDArray[np.float64] | None:
        return None
