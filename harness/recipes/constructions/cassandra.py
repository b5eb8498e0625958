"""Cassandra's token ring: the Murmur3Partitioner and random `num_tokens` per node.

Read from apache/cassandra (src/java/org/apache/cassandra/dht/Murmur3Partitioner.java,
src/java/org/apache/cassandra/utils/MurmurHash.java, and the bootstrap's random tokens):

Keys. A partition key's token is `Murmur3Partitioner.getToken`: the first 64 bits of
MurmurHash3 x64 128 (seed 0) read as a signed long, with Cassandra's tail quirk (a tail
byte >= 0x80 is sign-extended: `harness.core.client_hashes.cassandra_token`, and in C
`cassandra_murmur3_token` in cext/client_hashes.c), `Long.MIN_VALUE` normalised to
`Long.MAX_VALUE`; the empty key has the minimum token. The key is the partition key's
serialized bytes: for one text column, its UTF-8 bytes, which is what our keys are.

Ownership. A token owns the range (previous token, token]: a key belongs to the first
token >= its token, wrapping past the largest to the smallest (Cassandra's
`TokenMetadata.firstToken`, a binary search that wraps). That is the harness's own ring
rule once tokens are placed on an unsigned ring as token + 2**63, which keeps their signed
order (`ring_of_tokens`; `key_hashes` hashes keys to the same places).

Tokens. Each node draws `num_tokens` random tokens (`points_per_weight` here, the name
every ring recipe gives its points per node, so that a scenario sweeps it), as
`BootStrapper.getRandomTokens` does: `Murmur3Partitioner.getRandomToken`, that is
`normalize(random.nextLong())`, drawn again while the token is already taken. A node of
weight w draws `max(1, round(num_tokens * w))`: Cassandra sets `num_tokens` per node, and
weight is how a fleet says one node has more. Cassandra draws from `ThreadLocalRandom`,
which cannot be replayed; here each node's tokens come from SplitMix64 seeded by `seed`
and the node's name (BLAKE2b), so a node keeps its tokens when others join or leave, as
Cassandra's nodes keep theirs, and a run is reproducible. A token drawn twice by one node
is drawn again; two nodes drawing one token (odds about n**2 / 2**65 for n tokens, which
Cassandra would also redraw) keep it for the first-listed node.

`allocation = "allocator"` places the tokens with Cassandra's token allocator instead, as
`allocate_tokens_for_local_replication_factor: 1` does: `NoReplicationTokenAllocator`,
ported in `cassandra_allocator` and checked token for token against Cassandra's classes.
Nodes join in list order; the first node's tokens (the allocator's only random ones) come
from `java.util.Random(seed)`. A node that leaves takes its tokens with it and the others
keep theirs (`remove_server`), as a decommission does. `replication_factor` above 1 (with
the allocator) is `allocate_tokens_for_local_replication_factor` above 1, Cassandra 4.0's
default being 3: `ReplicationAwareTokenAllocator`, ported in `cassandra_replicated` and checked
token for token against Cassandra's classes, every node its own group (one rack).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.client_hashes import TOKEN_MAX, TOKEN_MIN
from harness.core.errors import HarnessError, ScenarioError
from harness.core.native import client_hashes as c_client_hashes
from harness.core.params import Param, parse_keywords
from harness.core.ring import Ring
from harness.core.servers import Server, require_servers
from harness.recipes.constructions.allocated import remove_server
from harness.recipes.constructions.base import ConstructionBase
from harness.recipes.constructions.cassandra_allocator import AllocatorFailure, allocate_tokens
from harness.recipes.constructions.cassandra_replicated import allocate_replicated_tokens
from harness.recipes.constructions.generator import points_for

#: Cassandra 4.0's default num_tokens (256 before it)
DEFAULT_NUM_TOKENS = 16
#: the most tokens a node may draw here (Cassandra caps num_tokens at 1,536)
MAX_NUM_TOKENS = 1536
#: how tokens are placed: drawn at random by each node, or chosen by Cassandra's allocator
ALLOCATIONS = ("random", "allocator")
#: the most copies the allocator is asked to balance for (each token's walk and every
#: candidate's score visit that many groups; no deployment keeps more in one datacenter)
MAX_REPLICATION_FACTOR = 16


#: SplitMix64's increment and multipliers (`harness.recipes.constructions.allocated.SplitMix64`)
_GAMMA, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def node_seed(name: str, seed: int) -> int:
    """The SplitMix64 seed of one node's tokens: BLAKE2b of the run's seed and its name."""
    digest = hashlib.blake2b(f"{seed}\0{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def splitmix_draws(state: int, first: int, count: int) -> npt.NDArray[np.uint64]:
    """Draws `first + 1` to `first + count` of SplitMix64 from `state`, in numpy (uint64
    arithmetic wraps as SplitMix64's does): `SplitMix64(state).next()` called in turn."""
    with np.errstate(over="ignore"):
        steps = np.arange(first + 1, first + count + 1, dtype=np.uint64)
        z = np.uint64(state) + steps * np.uint64(_GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
        drawn: npt.NDArray[np.uint64] = z ^ (z >> np.uint64(31))
    return drawn


def random_tokens(name: str, count: int, seed: int) -> npt.NDArray[np.int64]:
    """`count` distinct signed tokens for the node `name`, as `getRandomToken` draws them
    (`normalize(nextLong())`, a token already taken drawn again), from SplitMix64 seeded by
    `node_seed`: the first `count` distinct values of its stream, in the order drawn."""
    state, tokens, drawn = node_seed(name, seed), np.empty(0, dtype=np.int64), 0
    while len(tokens) < count:
        more = splitmix_draws(state, drawn, count - len(tokens)).view(np.int64)
        drawn += len(more)
        more = np.where(more == TOKEN_MIN, np.int64(TOKEN_MAX), more)
        joined = np.concatenate([tokens, more])
        _, first_seen = np.unique(joined, return_index=True)
        tokens = joined[np.sort(first_seen)]
    return tokens


def ring_of_tokens(tokens: Sequence[Sequence[int] | npt.NDArray[np.int64]],
                   servers: tuple[str, ...] = ()) -> Ring:
    """The ring of explicit signed tokens, `tokens[i]` being node i's, each at token + 2**63.
    A token held by two nodes (Cassandra refuses that) is kept for the lower index."""
    positions = np.empty(sum(len(t) for t in tokens), dtype=np.uint64)
    at = 0
    for node in tokens:
        signed = np.asarray(node, dtype=np.int64)
        positions[at:at + len(signed)] = signed.view(np.uint64) ^ np.uint64(2**63)
        at += len(signed)
    owners = np.repeat(np.arange(len(tokens), dtype=np.uint16), [len(t) for t in tokens])
    return Ring.from_owned_points(positions, owners, bits=64, servers=servers)


@functools.lru_cache(maxsize=8)
def allocated_tokens(counts: tuple[int, ...], seed: int, replication_factor: int = 1
                     ) -> tuple[tuple[int, ...], ...] | str:
    """Each node's tokens from Cassandra's allocator for `replication_factor` copies, or why
    it fails for these counts (kept: the servers are checked before the ring is built, and
    each fleet is built more than once). Only the allocator for one copy can fail."""
    if replication_factor > 1:
        return tuple(tuple(tokens) for tokens
                     in allocate_replicated_tokens(counts, replication_factor, seed))
    try:
        return tuple(tuple(tokens) for tokens in allocate_tokens(counts, seed))
    except AllocatorFailure as failure:
        return str(failure)


class CassandraConstruction(ConstructionBase):
    """Cassandra's Murmur3Partitioner ring: random tokens per node, keys by their token."""

    name: ClassVar[str] = "cassandra"
    params: ClassVar[tuple[Param, ...]] = (
        Param("points_per_weight", "int", DEFAULT_NUM_TOKENS,
              "random tokens per node of weight 1: Cassandra's num_tokens (16 since 4.0, "
              "256 before)", minimum=1, maximum=MAX_NUM_TOKENS),
        Param("seed", "int", 1, "seed of the nodes' random tokens (with each node's name); "
              "with the allocator, the seed of java.util.Random for the first node's tokens",
              minimum=0, maximum=2**64 - 1),
        Param("allocation", "choice", "random",
              "\"random\": each node draws num_tokens random tokens; \"allocator\": "
              "Cassandra's token allocator for replication factor 1 "
              "(NoReplicationTokenAllocator) places them, nodes joining in list order",
              choices=ALLOCATIONS),
        Param("replication_factor", "int", 1,
              "with the allocator, Cassandra's allocate_tokens_for_local_replication_factor: "
              "1 is NoReplicationTokenAllocator, above 1 ReplicationAwareTokenAllocator "
              "(Cassandra 4.0's cassandra.yaml sets 3), balancing each node's share of "
              "replica ranges, every node its own group", minimum=1,
              maximum=MAX_REPLICATION_FACTOR),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        self.num_tokens: int = values["points_per_weight"]
        self.seed: int = values["seed"]
        self.allocation: str = values["allocation"]
        self.replication_factor: int = values["replication_factor"]
        problem = self.params_problem(values)
        if problem is not None:
            raise ScenarioError(f"construction {self.name!r}: {problem[0]} must be "
                                f"{problem[1]} (got {values[problem[0]]})")

    @staticmethod
    def params_problem(values: dict[str, Any]) -> tuple[str, str] | None:
        """A replication factor is the allocator's: random tokens take no notice of it."""
        if values["allocation"] != "allocator" and values["replication_factor"] != 1:
            return ("replication_factor", "1 (or left out) unless allocation = \"allocator\"")
        return None

    @classmethod
    def recorded_params(cls, values: dict[str, Any]) -> dict[str, Any]:
        """The parameters a result records: a replication factor of 1 is left out, so that
        a ring of the allocator for one copy is recorded as it always was."""
        return {k: v for k, v in values.items()
                if k != "replication_factor" or v != 1}

    @property
    def bits(self) -> int:
        return 64

    @property
    def label(self) -> str:
        allocated = " allocator" if self.allocation == "allocator" else ""
        copies = f" rf={self.replication_factor}" if self.replication_factor > 1 else ""
        return f"cassandra{allocated}{copies} num_tokens={self.num_tokens}"

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        """Random: any positive weight draws at least one token. Allocator for one copy: the
        servers' token counts must not make it fail (mixed num_tokens can)."""
        if self.allocation != "allocator" or self.replication_factor > 1:
            # the replication-aware allocator never throws, so the fleet is not allocated
            # here, before the run is priced (a large one would take its minutes at load)
            return None
        placed = allocated_tokens(tuple(self.point_counts(servers)), self.seed,
                                  self.replication_factor)
        return (f"weighted so that Cassandra's token allocator can place them; with these "
                f"token counts it throws: {placed}" if isinstance(placed, str) else None)

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [points_for(s.weight, self.num_tokens) for s in servers]

    def node_tokens(self, servers: Sequence[Server]) -> list[npt.NDArray[np.int64]]:
        """Each node's signed tokens: in the order drawn, or sorted when allocated."""
        if self.allocation == "allocator":
            placed = allocated_tokens(tuple(self.point_counts(servers)), self.seed,
                                      self.replication_factor)
            if isinstance(placed, str):
                raise HarnessError(
                    f"construction 'cassandra': Cassandra's token allocator throws: {placed}")
            return [np.array(tokens, dtype=np.int64) for tokens in placed]
        return [random_tokens(s.name, count, self.seed)
                for s, count in zip(servers, self.point_counts(servers), strict=True)]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        require_servers(self.name, servers)
        return ring_of_tokens(self.node_tokens(servers), tuple(s.name for s in servers))

    def remove_server(self, ring: Ring, index: int) -> Ring | None:
        """Allocated: the node leaves with its tokens and the others keep theirs (rebuilding
        would re-allocate every node that joined after it). Random: None, since a rebuild
        without it gives every other node its own tokens again."""
        return remove_server(ring, index) if self.allocation == "allocator" else None

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        """Each key's token + 2**63, computed in C (cext/client_hashes.c)."""
        return c_client_hashes.cassandra_position_many(keys)
