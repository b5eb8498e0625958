"""Client traits of the `points` construction: the hashes against published vectors, each
shipped construction restated as traits (the same ring, point for point), npm hashring's
digest counts, and the one-line errors of combinations no client has."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.params import keyword_fields
from harness.core.servers import Server
from harness.core.trait_hashes import TRAIT_HASHES
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.client_traits import (
    ClientTraits,
    route_plain,
    trait_params,
)
from harness.recipes.constructions.known_clients import OTHER_CLIENTS, SHIPPED_AS_TRAITS
from harness.recipes.traits import causes, recipe_traits

# (hash, input, expected): FNV from the FNV authors' test vectors, one-at-a-time from
# Jenkins' page as Wikipedia quotes it, MurmurHash3 from SMHasher's verification
# strings as commonly quoted, xxHash from the xxHash repository's sanity checks.
VECTORS = [
    ("fnv1a-32", b"", 0x811C9DC5), ("fnv1a-32", b"a", 0xE40C292C),
    ("fnv1a-32", b"foobar", 0xBF9CF968), ("fnv1-32", b"a", 0x050C5D7E),
    ("fnv1-32", b"foobar", 0x31F0B262),
    ("fnv1a-64", b"", 0xCBF29CE484222325), ("fnv1a-64", b"a", 0xAF63DC4C8601EC8C),
    ("fnv1a-64", b"foobar", 0x85944171F73967E8), ("fnv1-64", b"a", 0xAF63BD4C8601B7BE),
    ("oaat-32", b"a", 0xCA2E9442),
    ("oaat-32", b"The quick brown fox jumps over the lazy dog", 0x519E91F5),
    ("murmur3-32", b"", 0), ("murmur3-32", b"hello", 0x248BFA47),
    ("murmur3-32", b"The quick brown fox jumps over the lazy dog", 0x2E4FF723),
    ("xxh32", b"", 0x02CC5D05), ("xxh64", b"", 0xEF46DB3751D8E999),
    ("md5-32le", b"", 0xD98C1DD4), ("sha1-32", b"abc", 0xA9993E36),
    ("sha1-32le", b"abc", 0x363E99A9), ("crc32-hi15", b"123456789", (0xCBF43926 >> 16) & 0x7FFF),
]

FLEETS = {
    "4 equal": [Server(f"10.0.0.{i}:11211") for i in range(1, 5)],
    "5 weighted": [Server(f"mc{i}.example:11211", w) for i, w in enumerate([1, 2, 3, 1, 5])],
    "7 equal": [Server(f"cache-{i}:6379") for i in range(7)],
    "61 equal": [Server(f"node{i}:11211") for i in range(61)],
    "nginx names": [Server("backend"), Server("10.0.0.1:8080", 2), Server("unix:/tmp/s"),
                    Server("[::1]:80")],
}
KEYS = [f"user:{i}".encode() for i in range(2_000)]


@pytest.mark.parametrize(("name", "data", "expected"), VECTORS)
def test_hash_vectors(name: str, data: bytes, expected: int) -> None:
    function = TRAIT_HASHES[name]
    assert function.one(data) == expected
    assert int(function.many([data])[0]) == expected


@pytest.mark.parametrize("name", list(TRAIT_HASHES))
def test_batches_are_the_plain_hash(name: str) -> None:
    """Names of mixed lengths, non-ASCII included: the batch form is the plain one."""
    names = [b"", b"a", b"server-1:12", "ké€y".encode(), bytes(range(256)), b"x" * 70]
    function = TRAIT_HASHES[name]
    assert function.many(names).tolist() == [function.one(n) for n in names]


@pytest.mark.parametrize("fleet", list(FLEETS))
@pytest.mark.parametrize("client", list(SHIPPED_AS_TRAITS))
def test_shipped_constructions_restated(client: str, fleet: str) -> None:
    """The shipped construction and its traits give the same ring and route alike."""
    shipped_params, traits = SHIPPED_AS_TRAITS[client]
    servers = FLEETS[fleet]
    if client == "libmemcached ketama":
        servers = [Server(s.name) for s in servers]
    params = dict(shipped_params)
    shipped = get_construction(params.pop("construction"), **params)
    if shipped.check_servers(servers):
        pytest.skip(f"{client} refuses this fleet: {shipped.check_servers(servers)}")
    restated = get_construction("points", **traits)
    ours, theirs = restated.build_ring(servers), shipped.build_ring(servers)
    assert np.array_equal(ours.positions, theirs.positions)
    assert np.array_equal(ours.owners, theirs.owners)
    assert np.array_equal(restated.key_hashes(KEYS), shipped.key_hashes(KEYS))


def test_points_at_defaults_is_the_ring_it_was() -> None:
    """No trait set: no traits object, the C generator, and the same recorded parameters."""
    assert get_construction("points").traits is None  # type: ignore[attr-defined]
    parsed = RingAlgorithm.parse_ring_params(keyword_fields("test", {"hash": "md5-32"}))
    assert parsed == {"construction": "points", "hash": "md5-32", "hash_key": None,
                      "point_name": "{server}:{j}", "points_per_weight": 160}


@pytest.mark.parametrize("servers", [7, 14, 28, 49, 56, 98])
def test_hashring_double_precision_counts(servers: int) -> None:
    """npm hashring floors w / total * 40 * n in doubles: 39 digests at these fleet sizes
    (the issue's counts, and the live check in tests/live/)."""
    traits = ClientTraits.from_params(OTHER_CLIENTS["npm hashring"][2])
    fleet = [Server(f"s{i}") for i in range(servers)]
    assert traits.name_counts(fleet) == [39] * servers
    exact = ClientTraits.from_params({**OTHER_CLIENTS["npm hashring"][2],
                                      "weight_rounding": "share-exact"})
    assert exact.name_counts(fleet) == [40] * servers


@pytest.mark.parametrize(("rounding", "counts"), [
    ("half-even", [2, 2, 4, 1]), ("half-up", [3, 2, 5, 1]), ("floor", [2, 1, 4, 1]),
    ("ceil", [3, 2, 5, 1]),
])
def test_weight_rounding(rounding: str, counts: list[int]) -> None:
    fleet = [Server("a", 2.5), Server("b", 1.5), Server("c", 4.5), Server("d", 0.01)]
    traits = ClientTraits(points_per_weight=1, weight_rounding=rounding)
    assert traits.name_counts(fleet) == counts


@pytest.mark.parametrize("tie", ["at-or-after", "after", "at-or-before"])
def test_tie_on_a_point(tie: str) -> None:
    """A key hashing exactly onto a point: kept there, passed on, or kept (before)."""
    traits = ClientTraits(hash="crc32", points_per_weight=1, tie=tie)
    fleet = [Server("a"), Server("b"), Server("c")]
    keys = [b"a:0", b"b:0", b"c:0"]  # each exactly on its server's one point
    plain = route_plain(traits, fleet, keys)
    assert (plain == [0, 1, 2]) == (tie != "after")
    ring = traits.build_ring(fleet)
    hashes = traits.key_hashes(keys)
    fast = [int(ring.owners[np.searchsorted(ring.positions, h) % ring.entries])
            for h in hashes]
    assert fast == plain


BAD = {
    "digest of a non-digest hash": ('hash = "crc32"\npoints_per_digest = 4',
                                    "generator.points_per_digest must be 1 for hash 'crc32'"),
    "too many words": ('hash = "md5-32le"\npoints_per_digest = 5',
                       "generator.points_per_digest must be at most 4"),
    "key hash width": ('hash = "crc32"\nkey_hash = "xxh64"',
                       "generator.key_hash must be a hash as wide as the ring's 'crc32'"),
    "ring size": ('hash = "crc32"\nring_size = 1', "generator.ring_size must be 0 or from 2"),
    "unknown rounding": ('weight_rounding = "banker"',
                         "generator.weight_rounding must be one of 'half-even'"),
    "first point": ("first_point = 2", "generator.first_point must be an integer from 0 to 1"),
    "chain and digest": ('hash = "md5-32"\nchain = "previous"\npoints_per_digest = 2',
                         "generator.points_per_digest must be 1 with chain = 'previous'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_traits_one_line(case: str, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    body, message = BAD[case]
    scenario = tmp_path / "bad.toml"
    scenario.write_text(f"[servers]\ncount = 3\n[generator]\n{body}\n")
    assert main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and str(scenario) in err and "(got " in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("params", [
    {"hash": "md5-32le", "points_per_digest": 4, "points_per_weight": 125},
    {"hash": "fnv1a-32", "points_per_weight": 500},
    {"hash": "crc32", "chain": "previous", "points_per_weight": 500},
    {"hash": "xxh64", "points_per_weight": 500, "tie": "at-or-before"},
])
def test_traits_ring_within_its_priced_bytes(params: dict[str, object]) -> None:
    """A traits ring's generation, as `algorithms/cost.generation_cost` prices it: its
    peak, traced, stays within that at 40 servers x 500 points."""
    import tracemalloc

    from harness.recipes.algorithms.cost import generation_cost
    construction = get_construction("points", **params)
    servers = [Server(f"10.0.{i}.1:11211") for i in range(40)]
    points = sum(construction.point_counts(servers))
    tracemalloc.start()
    try:
        construction.build_ring(servers)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    priced = generation_cost({"construction": "points", "point_name": "{server}:{j}",
                              **params}, points).peak
    assert peak <= priced


# -- the traits as the clients matrix names them (harness/recipes/traits.py) ---------------

#: libmemcached's ketama mode takes no weights ("100" points a server); its traits restate
#: the ring of equal weights only, so their descriptions differ in that, truly
DESCRIBED_ALIKE = [name for name in SHIPPED_AS_TRAITS if name != "libmemcached ketama"]


@pytest.mark.parametrize("fleet", list(FLEETS))
@pytest.mark.parametrize("client", DESCRIBED_ALIKE)
def test_restated_constructions_name_no_cause(client: str, fleet: str) -> None:
    """A shipped construction and the traits that build its ring are described alike, so
    the matrix names no cause between a client and its restatement."""
    shipped_params, traits = SHIPPED_AS_TRAITS[client]
    servers = FLEETS[fleet]
    params = dict(shipped_params)
    if get_construction(params["construction"], **{
            k: v for k, v in params.items() if k != "construction"}).check_servers(servers):
        pytest.skip(f"{client} refuses this fleet")
    assert causes(recipe_traits("ring", params, servers),
                  recipe_traits("ring", {"construction": "points", **traits}, servers)) == []


def test_npm_hashring_names_only_what_bites() -> None:
    """On 10 equal servers with no equal points npm hashring's traits and libketama name no
    cause; at 7, the double-precision floor (39 digests, not 40) is named; without the ring,
    the collision winner is."""
    _, _, npm = OTHER_CLIENTS["npm hashring"]
    ten = [Server(f"10.0.{i}.1:11211") for i in range(10)]
    ketama = {"construction": "libketama"}
    rings = [get_construction("libketama").build_ring(ten),
             get_construction("points", **{k: v for k, v in npm.items()
                                           if k != "construction"}).build_ring(ten)]
    assert causes(recipe_traits("ring", ketama, ten, rings[0]),
                  recipe_traits("ring", npm, ten, rings[1])) == []
    assert causes(recipe_traits("ring", ketama, ten), recipe_traits("ring", npm, ten)) == [
        "collision winner: last-listed server vs first-listed server"]
    seven = [Server(f"10.0.{i}.1:11211") for i in range(7)]
    assert causes(recipe_traits("ring", ketama, seven), recipe_traits("ring", npm, seven))[0] == (
        "weight rounding: exact fraction, floored vs double-precision share, floored")


def test_each_differing_trait_is_named() -> None:
    """PyPI hashring against npm hashring: three words of each digest and the next point
    strictly after the key's hash; a traits ring's key encoding, cut and ring size too."""
    fleet = [Server(f"10.0.{i}.1:11211") for i in range(10)]
    _, _, npm = OTHER_CLIENTS["npm hashring"]
    _, _, pypi = OTHER_CLIENTS["pypi hashring"]
    named = [c.split(":")[0] for c in causes(recipe_traits("ring", npm, fleet),
                                             recipe_traits("ring", pypi, fleet))]
    assert named == ["points per digest", "digest bytes used", "points per server",
                     "collision winner", "wrap direction"]
    odd = {**npm, "key_encoding": "low-8-bits", "key_max_bytes": 250, "ring_size": 1000}
    assert causes(recipe_traits("ring", npm, fleet), recipe_traits("ring", odd, fleet)) == [
        "key hash: MD5, bytes 0-3 little-endian vs MD5, bytes 0-3 little-endian, of each "
        "character's low 8 bits, of the first 250 bytes",
        "ring size: (none) vs positions and key hashes modulo 1,000"]


def _one_trait_changes() -> list[tuple[str, object]]:
    """Every value of every choice trait, and the numeric traits at a value of their own."""
    found: list[tuple[str, object]] = [("points_per_digest", 2), ("first_point", 1),
                                       ("key_max_bytes", 8), ("ring_size", 1 << 20)]
    for param in trait_params():
        if param.kind == "choice" and isinstance(param.choices, tuple):
            found += [(param.name, value) for value in param.choices]
    return found


@pytest.mark.parametrize(("trait", "value"), _one_trait_changes())
def test_every_trait_value_is_described(trait: str, value: object) -> None:
    """Any one trait set on a ring of MD5 names gives a description of every trait, in
    words (no crash on a hash of another width, a keyed one, or a chain)."""
    params: dict[str, object] = {"construction": "points", "hash": "md5-32", trait: value}
    if value in ("blake2b-64", "fnv1-64", "fnv1a-64", "xxh64"):
        params["hash"] = "blake2b-64"  # a 64-bit key hash needs a 64-bit ring
    fleet = [Server(f"10.0.{i}.1:11211", 1 + i % 3) for i in range(5)]
    described = recipe_traits("ring", params, fleet)
    assert set(described) >= {"algorithm", "key hash", "point hash", "points per digest",
                              "digest bytes used", "points per server", "weight rounding",
                              "server name format", "collision winner", "wrap direction"}
    assert all(isinstance(v, str) and v for v in described.values())
