"""What a recipe decides about routing, named trait by trait, so that two clients' recipes
can be diffed into the causes of their disagreement.

Every recipe is described by the same traits (`TRAITS`): the algorithm, how keys are
hashed, how points are hashed and named, how many points a digest gives and which of
its bytes are used, how many points a server gets and how its weight is rounded, which
server keeps a position two points share, and which point a key goes to. Two recipes
that differ in no trait route alike; each differing trait is a cause.

Traits are given for the servers of a fleet, so that a difference that does not bite
there is not named: libmemcached leaves ':11211' out of point names, which matters only
when a server is on that port; its single-precision digest counts matter only where
they floor differently from the exact fraction; which server keeps a shared position
matters only where two points share one (given the ring built there).

The `points` construction's client traits are stated in the words of the shipped
constructions, so traits that build a shipped ring (`known_clients.SHIPPED_AS_TRAITS`)
name no cause against it, and a known client's traits (npm hashring's) only those that bite.

A construction or algorithm without an entry here is described by its name and its
parameters, each its own trait (a parameter that differs is then the named cause).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.core.hashing import hash_bits
from harness.core.ring import Ring
from harness.core.servers import Server
from harness.core.trait_hashes import DIGEST_HASHES, TRAIT_HASHES
from harness.recipes.constructions.client_traits import ClientTraits
from harness.recipes.constructions.libketama import digest_counts
from harness.recipes.constructions.libmemcached import DEFAULT_PORT, float32_digest_counts

ALGORITHM = "algorithm"
KEY_HASH = "key hash"
POINT_HASH = "point hash"
POINTS_PER_DIGEST = "points per digest"
DIGEST_BYTES = "digest bytes used"
POINTS_PER_SERVER = "points per server"
WEIGHT_ROUNDING = "weight rounding"
NAME_FORMAT = "server name format"
COLLISION_WINNER = "collision winner"
WRAP = "wrap direction"
#: named only for a ring reduced below its hash's width (client traits' `ring_size`)
RING_SIZE = "ring size"
#: the traits every known recipe states, in the order causes are named
TRAITS = (ALGORITHM, KEY_HASH, POINT_HASH, POINTS_PER_DIGEST, DIGEST_BYTES, POINTS_PER_SERVER,
          WEIGHT_ROUNDING, NAME_FORMAT, COLLISION_WINNER, WRAP)

CLOCKWISE = "first point >= hash, wrapping"
#: how the point-construction's hashes read a key or a point name
_HASH_TEXT = {
    "md5-32": ("MD5, bytes 0-3 big-endian", "4 of 16"),
    "blake2b-32": ("BLAKE2b, bytes 0-3 big-endian", "4 of 64"),
    "blake2b-64": ("BLAKE2b, bytes 0-7 big-endian", "8 of 64"),
    "crc32": ("CRC-32", "4 of 4"),
    "fnv1a-fmix32": ("FNV-1a then fmix32", "4 of 4"),
}
#: the key hash of algorithms other than the ring (their modules say why)
_ALGORITHM_KEY_HASH = {"jump": "xxHash64, seed 0", "maglev": "xxHash64, seed 0",
                       "rendezvous": "MurmurHash3 of '<server>-<key>', per server",
                       "redis-slots": "CRC-16/XMODEM of the key or its hash tag",
                       "kafka-murmur2": "murmur2, seed 0x9747b28c",
                       "riak": "SHA-1 of term_to_binary({Bucket, Key}), top 64 bits"}

Traits = dict[str, str]


#: how a client trait hash reads a key or a point name (the ring's own are in _HASH_TEXT)
_TRAIT_HASH_TEXT = {
    "md5-32le": "MD5, bytes 0-3 little-endian", "sha1-32": "SHA-1, bytes 0-3 big-endian",
    "sha1-32le": "SHA-1, bytes 0-3 little-endian", "fnv1-32": "FNV-1, 32 bits",
    "fnv1a-32": "FNV-1a, 32 bits", "fnv1-64": "FNV-1, 64 bits", "fnv1a-64": "FNV-1a, 64 bits",
    "oaat-32": "Jenkins' one-at-a-time", "murmur3-32": "MurmurHash3 x86_32, seed 0",
    "xxh32": "xxHash32, seed 0", "xxh64": "xxHash64, seed 0",
    "crc32-hi15": "CRC-32, bits 16-30",
}
_DIGEST_NAMES = {"md5": "MD5", "sha1": "SHA-1", "blake2b": "BLAKE2b"}
_COUNT_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen")
_ROUNDED = {"half-even": "rounded half to even", "half-up": "rounded half up",
            "floor": "rounded down (at least 1)", "ceil": "rounded up"}
_SHARE_ROUNDED = {"share-double": "double-precision share, floored",
                  "share-double-scaled": "double-precision P x N x weight / total, floored",
                  "share-single": "single-precision share, floored"}
_TIES = {"at-or-after": CLOCKWISE, "after": "first point > hash, wrapping",
         "at-or-before": "last point <= hash, wrapping"}


def _hash_text(name: str) -> str:
    return _HASH_TEXT[name][0] if name in _HASH_TEXT else _TRAIT_HASH_TEXT.get(name, name)


def _digest_bytes(traits: ClientTraits) -> str:
    """Which bytes of each name's hash become points."""
    digest = DIGEST_HASHES.get(traits.hash)
    if digest is None:
        if traits.hash in _HASH_TEXT:
            return _HASH_TEXT[traits.hash][1]
        width = TRAIT_HASHES[traits.hash].bits if traits.hash in TRAIT_HASHES else hash_bits(
            traits.hash)  # a keyed hash (SipHash) is no trait hash
        return f"{width // 8} of {width // 8}"
    if traits.points_per_digest == 1:
        used = _HASH_TEXT[traits.hash][1] if traits.hash in _HASH_TEXT else f"4 of {digest.size}"
        return used if digest.order == "big" else f"{used} (little-endian)"
    words = traits.points_per_digest
    return (f"{4 * words} of {digest.size} ({_COUNT_WORDS[words - 1]} {digest.order}-endian "
            "words)")


def _points(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    """The `points` construction, client traits included, in the words the shipped
    constructions use: a client's traits that build a shipped ring state its traits."""
    traits = ClientTraits.from_params(dict(params))
    per_digest = traits.points_per_digest
    key_hash = _hash_text(traits.key_hash_name)
    if traits.key_encoding != "utf-8":
        key_hash += ", of each character's low 8 bits"
    if traits.key_max_bytes:
        key_hash += f", of the first {traits.key_max_bytes} bytes"
    # A digest's hash by its name: "digest bytes used" says which of its words are points.
    point_hash = (_DIGEST_NAMES.get(traits.hash.split("-")[0], traits.hash)
                  if traits.hash in DIGEST_HASHES else _hash_text(traits.hash))
    if traits.chain != "none":
        point_hash += " chained from the name"
    per = traits.points_per_weight
    scale = f"{per_digest} x " if per_digest > 1 else ""
    if traits.share_rounding:
        points_per_server = f"{scale}floor({per} x N x weight / total)"
        exact = ClientTraits.from_params({**dict(params), "weight_rounding": "share-exact"})
        rounding = ("exact fraction, floored"
                    if traits.name_counts(servers) == exact.name_counts(servers)
                    else _SHARE_ROUNDED[traits.weight_rounding])
    else:
        points_per_server = f"{scale}{per} x weight"
        whole = all(float(per * s.weight).is_integer() for s in servers)
        rounding = "none (whole weights)" if whole else _ROUNDED[traits.weight_rounding]
    names = traits.chain_name if traits.chain != "none" else traits.point_name
    if traits.server_form == "host-nul-port":
        names = ("host, zero byte, port" if names == "{server}"
                 else f"{names}, {{server}} as host, zero byte, port")
    elif (traits.server_form == "without-port-11211"
          and any(s.name.endswith(DEFAULT_PORT) for s in servers)):
        names = f"{names}, {DEFAULT_PORT} left out"
    if traits.first_point and traits.chain == "none":
        names += f", j from {traits.first_point}"
    found = {ALGORITHM: "ring", KEY_HASH: key_hash, POINT_HASH: point_hash,
             POINTS_PER_DIGEST: str(per_digest), DIGEST_BYTES: _digest_bytes(traits),
             POINTS_PER_SERVER: points_per_server, WEIGHT_ROUNDING: rounding,
             NAME_FORMAT: names,
             COLLISION_WINNER: f"{traits.collision_winner}-listed server",
             WRAP: _TIES[traits.tie]}
    if traits.reduces:
        found[RING_SIZE] = f"positions and key hashes modulo {traits.ring_size:,}"
    return found


def _ketama(servers: Sequence[Server], counts: list[int], names: str,
            winner: str = "last-listed server") -> Traits:
    exact = counts == digest_counts(servers)
    return {ALGORITHM: "ring", KEY_HASH: "MD5, bytes 0-3 little-endian",
            POINT_HASH: "MD5", POINTS_PER_DIGEST: "4",
            DIGEST_BYTES: "16 of 16 (four little-endian words)",
            POINTS_PER_SERVER: "4 x floor(40 x N x weight / total)",
            WEIGHT_ROUNDING: "exact fraction, floored" if exact
            else "single-precision share, floored",
            NAME_FORMAT: names, COLLISION_WINNER: winner, WRAP: CLOCKWISE}


def _libketama(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    return _ketama(servers, digest_counts(servers), "{server}-{j}")


def _address_names(servers: Sequence[Server]) -> str:
    """libmemcached's and twemproxy's point names from addresses: port 11211 left out."""
    on_default = any(s.name.endswith(DEFAULT_PORT) for s in servers)
    return f"{{server}}-{{j}}, {DEFAULT_PORT} left out" if on_default else "{server}-{j}"


def _libmemcached(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    mode = params.get("mode", "weighted")
    names = "/{server}-{j}" if mode == "spy" else _address_names(servers)
    traits = _ketama(servers, float32_digest_counts(servers), names, "first-listed server")
    if mode == "ketama":
        # Unweighted: 100 names a server, one point each, the digest's first word.
        traits.update({POINTS_PER_DIGEST: "1", DIGEST_BYTES: "4 of 16 (little-endian)",
                       POINTS_PER_SERVER: "100", WEIGHT_ROUNDING: "none (no weights)"})
    return traits


def _twemproxy(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    names = "{server}-{j}" if params.get("names") == "given" else _address_names(servers)
    traits = _ketama(servers, float32_digest_counts(servers), names, "first-listed server")
    key_hash = str(params.get("key_hash", "fnv1a_64"))
    traits[KEY_HASH] = {"md5": "MD5, bytes 0-3 little-endian",
                        "fnv1a_64": "twemproxy's fnv1a_64 (32 bits kept)",
                        "murmur": "MurmurHash2, seed 0xdeadbeef x length"}.get(key_hash, key_hash)
    return traits


def _nginx(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    return {ALGORITHM: "ring", KEY_HASH: "CRC-32", POINT_HASH: "CRC-32 chained from the name",
            POINTS_PER_DIGEST: "1", DIGEST_BYTES: "4 of 4", POINTS_PER_SERVER: "160 x weight",
            WEIGHT_ROUNDING: "none (whole weights)", NAME_FORMAT: "host, zero byte, port",
            COLLISION_WINNER: "first-listed server", WRAP: CLOCKWISE}


def _haproxy(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    return {ALGORITHM: "ring", KEY_HASH: str(params["key_hash"]),
            POINT_HASH: "full_hash(id x 4096 + j)", POINTS_PER_DIGEST: "1",
            DIGEST_BYTES: "4 of 4", POINTS_PER_SERVER: "16 x weight",
            WEIGHT_ROUNDING: "none (whole weights)",
            NAME_FORMAT: f"numeric ids ({params['server_ids']})",
            COLLISION_WINNER: "none (points never coincide)",
            WRAP: "nearer of the two neighbouring points"}


def _envoy_ring_hash(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    point_hash = ("xxHash64, seed 0" if params.get("hash_function", "xx_hash") == "xx_hash"
                  else "MurmurHash2 64 (libstdc++), seed 0xc70f6907")
    return {ALGORITHM: "ring", KEY_HASH: "xxHash64, seed 0", POINT_HASH: point_hash,
            POINTS_PER_DIGEST: "1", DIGEST_BYTES: "8 of 8",
            POINTS_PER_SERVER: "ring size x weight / total, by running sums",
            WEIGHT_ROUNDING: "running sums in host order", NAME_FORMAT: "{server}_{j}",
            COLLISION_WINNER: "first-listed server", WRAP: CLOCKWISE}


def _pingora(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    v2 = params.get("version", "v2") == "v2"
    return {ALGORITHM: "ring", KEY_HASH: "CRC-32", POINT_HASH: "CRC-32 chained from the name",
            POINTS_PER_DIGEST: "1", DIGEST_BYTES: "4 of 4",
            POINTS_PER_SERVER: f"{params.get('point_multiple', 160)} x weight",
            WEIGHT_ROUNDING: "none (whole weights)",
            NAME_FORMAT: "address as Rust prints it, zero byte, port",
            COLLISION_WINNER: "smallest socket address" if v2 else "first-listed server",
            WRAP: CLOCKWISE}


def _cassandra(params: Mapping[str, Any], servers: Sequence[Server]) -> Traits:
    per_weight = int(params["points_per_weight"])
    allocated = params.get("allocation") == "allocator"
    placed = (f"Cassandra's token allocator, rf {params.get('replication_factor', 1)} "
              f"(seed {params['seed']}, list order)"
              if allocated else f"random tokens (seed {params['seed']} and the name)")
    return {ALGORITHM: "ring", KEY_HASH: "Cassandra's Murmur3Partitioner token (64 bits)",
            POINT_HASH: placed,
            POINTS_PER_DIGEST: "1", DIGEST_BYTES: "8 of 8",
            POINTS_PER_SERVER: f"{per_weight} x weight (num_tokens)",
            WEIGHT_ROUNDING: "rounded to nearest",
            NAME_FORMAT: ("none (list order places tokens)" if allocated
                          else "none (names seed tokens)"),
            COLLISION_WINNER: "first-listed server", WRAP: CLOCKWISE}


#: traits of each ring construction that has an entry
CONSTRUCTION_TRAITS: dict[str, Callable[[Mapping[str, Any], Sequence[Server]], Traits]] = {
    "points": _points, "libketama": _libketama, "libmemcached": _libmemcached,
    "twemproxy": _twemproxy, "nginx": _nginx, "haproxy": _haproxy,
    "envoy_ring_hash": _envoy_ring_hash, "pingora": _pingora, "cassandra": _cassandra,
}
#: parameters that choose a form, not a routing (a ring's layout)
_NOT_ROUTING = frozenset({"layout"})


def recipe_traits(algorithm: str, params: Mapping[str, Any], servers: Sequence[Server],
                  ring: Ring | None = None) -> Traits:
    """The recipe's traits on these servers (see the module doc); given the ring it builds
    there, a collision rule is stated only if two of its points do collide."""
    if algorithm == "ring" and params.get("construction") in CONSTRUCTION_TRAITS:
        traits = CONSTRUCTION_TRAITS[str(params["construction"])](params, servers)
        if ring is not None and ring.collisions == 0 and COLLISION_WINNER in traits:
            traits[COLLISION_WINNER] = "no equal points on this fleet"
        return traits
    traits = {ALGORITHM: algorithm if algorithm != "ring"
              else f"ring, construction {params.get('construction')}"}
    if algorithm in _ALGORITHM_KEY_HASH:
        traits[KEY_HASH] = _ALGORITHM_KEY_HASH[algorithm]
    for name, value in sorted(params.items()):
        if name not in _NOT_ROUTING and name != "construction":
            traits[f"parameter {name}"] = str(value)
    return traits


def causes(a: Traits, b: Traits) -> list[str]:
    """Each trait the two recipes differ in, as 'trait: A's value vs B's value'."""
    order = [*TRAITS, *sorted((set(a) | set(b)) - set(TRAITS))]
    if a.get(ALGORITHM) != b.get(ALGORITHM):
        # Different algorithms: their other traits are not comparable, only the key hash.
        order = [ALGORITHM, KEY_HASH]
    return [f"{trait}: {a.get(trait, '(none)')} vs {b.get(trait, '(none)')}"
            for trait in order if a.get(trait) != b.get(trait)]
