"""The agreement predictor (harness.core.agreement) against hand-worked and sampled figures,
the causes named from recipe traits, and [clients]' refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.agreement import independent_agreement, key_shares, ring_agreement
from harness.core.fields import Fields
from harness.core.ring import Ring, reference_owners
from harness.core.servers import Server, fleet_servers
from harness.metrics.clients.metric import predict
from harness.recipes.algorithms import get_algorithm
from harness.recipes.traits import causes, recipe_traits

SPACE = 2**32


def _ring(positions: list[int], owners: list[int]) -> Ring:
    return Ring.from_points(np.array(positions, np.uint64), np.array(owners), bits=32)


def test_worked_example_measures_the_arcs_that_changed_owner() -> None:
    """Points A=10, B=45, C=80 against A=10, D=60, C=80: the hashes 11..60 change owner
    (B or C to D), 50 of 2**32, and every other hash stays."""
    a = _ring([10, 45, 80], [0, 1, 2])
    b = _ring([10, 60, 80], [0, 1, 2])
    agreement = ring_agreement(a, ["A", "B", "C"], b, ["A", "D", "C"])
    assert agreement == (SPACE - 50) / SPACE


def test_servers_are_compared_by_name_not_index() -> None:
    """The same ring over a reordered server list agrees with itself everywhere."""
    a = _ring([5, 900, 70_000], [0, 1, 2])
    b = _ring([5, 900, 70_000], [2, 0, 1])
    assert ring_agreement(a, ["x", "y", "z"], b, ["y", "z", "x"]) == 1.0
    assert ring_agreement(a, ["x", "y", "z"], b, ["x", "y", "z"]) == 0.0


rings = st.lists(st.tuples(st.integers(0, SPACE - 1), st.integers(0, 4)), min_size=1,
                 max_size=40)


@settings(max_examples=60, deadline=None)
@given(first=rings, second=rings, seed=st.integers(0, 2**32 - 1))
def test_prediction_matches_sampled_agreement(first: list[tuple[int, int]],
                                              second: list[tuple[int, int]], seed: int) -> None:
    """On random rings (equal points included), the merged measure equals the agreement of
    200,000 uniformly drawn hashes within five standard errors, and is symmetric."""
    names = ["s0", "s1", "s2", "s3", "s4"]
    a = _ring([p for p, _ in first], [o for _, o in first])
    b = _ring([p for p, _ in second], [o for _, o in second])
    predicted = ring_agreement(a, names, b, names)
    assert predicted == pytest.approx(ring_agreement(b, names, a, names), abs=1e-12)
    hashes = np.random.default_rng(seed).integers(0, SPACE, 200_000, dtype=np.uint64)
    hashes = hashes.astype(np.uint32)
    sampled = float(np.mean(reference_owners(a, hashes) == reference_owners(b, hashes)))
    error = np.sqrt(max(predicted * (1 - predicted), 1e-6) / len(hashes))
    assert abs(predicted - sampled) <= 5 * error + 1e-9


def test_boundary_hashes_follow_the_lookup_rule() -> None:
    """A hash equal to a point belongs to that point; one past it to the next (first point
    >= hash): the measure counts each integer hash exactly once."""
    a = _ring([0, SPACE - 1], [0, 1])
    b = _ring([1, SPACE - 1], [0, 1])
    # Only the hash 1 differs: a sends it to s1 (its next point), b to s0.
    assert ring_agreement(a, ["s0", "s1"], b, ["s0", "s1"]) == (SPACE - 1) / SPACE


def test_independent_agreement_is_the_sum_of_share_products() -> None:
    """Two routers that pick independently agree with probability sum of share products,
    counting only servers both know."""
    assert independent_agreement({"a": 0.5, "b": 0.5}, {"a": 0.25, "c": 0.75}) == 0.125
    shares = key_shares(np.array([0, 0, 1, 2], np.uint16), ["a", "b", "c"])
    assert shares == {"a": 0.5, "b": 0.25, "c": 0.25}


KEYS = [f"key-{i}".encode() for i in range(100_000)]


def _ring_recipe(servers: list[Server], **params: object) -> object:
    ring = get_algorithm("ring")
    return ring.from_params(servers, ring.parse_params(Fields("t", "r", dict(params))))


@pytest.mark.parametrize(("port", "servers", "cause"), [
    (11211, 10, "server name format"), (11212, 100, "weight rounding"),
    (11211, 100, "server name format")])
def test_libmemcached_against_libketama_named_and_predicted(port: int, servers: int,
                                                            cause: str) -> None:
    """libmemcached and libketama share the key hash: their disagreement is named (the
    port left out of names on 11211; single-precision digest counts at 100 equal servers)
    and the merged prediction is within 0.5 points of 100,000 keys."""
    fleet = [Server(f"10.0.{i}.1:{port}") for i in range(servers)]
    ketama = _ring_recipe(fleet, construction="libketama")
    memcached = _ring_recipe(fleet, construction="libmemcached")
    named = causes(recipe_traits("ring", {"construction": "libketama"}, fleet,
                                 ketama.ring),  # type: ignore[attr-defined]
                   recipe_traits("ring", {"construction": "libmemcached"}, fleet,
                                 memcached.ring))  # type: ignore[attr-defined]
    named_traits = [c.split(":")[0] for c in named]
    assert cause in named_traits
    if port == 11212:
        assert named_traits == [cause]
    a, b = ketama.route(KEYS), memcached.route(KEYS)  # type: ignore[attr-defined]
    predicted, basis = predict(ketama, memcached, fleet, KEYS, a, b)  # type: ignore[arg-type]
    assert basis == "both rings' points merged"
    assert abs(predicted - float(np.mean(a == b))) < 0.005


def test_no_cause_is_named_where_none_bites() -> None:
    """Off port 11211, at a fleet whose single-precision counts floor exactly and whose
    ring has no equal points, the two recipes state the same traits and route every key
    alike; without the ring, their collision rules (last against first listed) differ."""
    fleet = [Server(f"10.0.{i}.1:11212") for i in range(10)]
    ketama = _ring_recipe(fleet, construction="libketama")
    memcached = _ring_recipe(fleet, construction="libmemcached")
    assert causes(
        recipe_traits("ring", {"construction": "libketama"}, fleet,
                      ketama.ring),  # type: ignore[attr-defined]
        recipe_traits("ring", {"construction": "libmemcached"}, fleet,
                      memcached.ring)) == []  # type: ignore[attr-defined]
    assert (ketama.route(KEYS) == memcached.route(KEYS)).all()  # type: ignore[attr-defined]
    assert causes(recipe_traits("ring", {"construction": "libketama"}, fleet),
                  recipe_traits("ring", {"construction": "libmemcached"}, fleet)) == [
        "collision winner: last-listed server vs first-listed server"]


def test_new_recipes_name_their_causes() -> None:
    """libmemcached's spymemcached mode names its points "/host:port-i"; twemproxy hashes
    keys with fnv1a_64 by default on libmemcached's points; slots and Kafka differ in
    algorithm and key hash."""
    fleet = [Server(f"10.0.{i}.1:11211") for i in range(10)]
    spy = causes(recipe_traits("ring", {"construction": "libketama"}, fleet),
                 recipe_traits("ring", {"construction": "libmemcached", "mode": "spy"}, fleet))
    assert spy[0] == "server name format: {server}-{j} vs /{server}-{j}"
    twemproxy = causes(
        recipe_traits("ring", {"construction": "libmemcached"}, fleet),
        recipe_traits("ring", {"construction": "twemproxy", "key_hash": "fnv1a_64",
                               "names": "address"}, fleet))
    assert twemproxy == ["key hash: MD5, bytes 0-3 little-endian vs twemproxy's fnv1a_64 "
                         "(32 bits kept)"]
    assert causes(recipe_traits("redis-slots", {}, fleet),
                  recipe_traits("kafka-murmur2", {}, fleet))[0] == (
        "algorithm: redis-slots vs kafka-murmur2")


def test_different_key_hashes_are_predicted_as_independent() -> None:
    """A CRC-32 ring against an MD5 one: independence, within 0.5 points of the keys."""
    fleet = fleet_servers(20, (1, 2, 4), "10.0.{i}.1:11211")
    md5 = _ring_recipe(fleet, construction="libketama")
    crc = _ring_recipe(fleet, construction="nginx")
    a, b = md5.route(KEYS), crc.route(KEYS)  # type: ignore[attr-defined]
    predicted, basis = predict(md5, crc, fleet, KEYS, a, b)  # type: ignore[arg-type]
    assert basis.startswith("independent key hashes")
    assert abs(predicted - float(np.mean(a == b))) < 0.005
    named = causes(recipe_traits("ring", {"construction": "libketama"}, fleet),
                   recipe_traits("ring", {"construction": "nginx"}, fleet))
    assert named[0] == "key hash: MD5, bytes 0-3 little-endian vs CRC-32"


def test_other_algorithms_name_the_algorithm_and_key_hash_only() -> None:
    """Between a ring and jump only the algorithm and the key hash are compared."""
    fleet = [Server(f"s{i}") for i in range(5)]
    named = causes(recipe_traits("ring", {"construction": "libketama"}, fleet),
                   recipe_traits("jump", {}, fleet))
    assert named == ["algorithm: ring vs jump",
                     "key hash: MD5, bytes 0-3 little-endian vs xxHash64, seed 0"]


BASE = ('[servers]\ncount = 4\nname = "10.0.{i}.1:11211"\n[generator]\nconstruction = '
        '"libketama"\n[keys]\ncount = 300\n[measure]\nlayouts = ["numpy-packed"]\n'
        'metrics = ["balance"]\nrepeats = 1\npeers = ["uhashring-ketama", '
        '"jump-consistent-hash"]\n[clients]\n')


@pytest.mark.parametrize(("clients", "needle"), [
    ("fleets = []", "clients.fleets must be a non-empty list of fleets"),
    ("fleets = [{ servers = 1 }]", "clients.fleets[0].servers must be an integer from 2"),
    ('fleets = [{ servers = 3, remove = "nope" }]',
     "clients.fleets[0].remove must be the name of one of the fleet's servers (got 'nope'"),
    ('fleets = [{ servers = 3, add = "10.0.1.1:11211" }]',
     "clients.fleets[0].add must be a new server name"),
    ("fleets = [{ servers = 3, weights = [0.5] }]", "clients.fleets[0].weights must be"),
    ('fleets = [{ servers = 3, clients = ["ghost", "uhashring-ketama"] }]',
     "clients.fleets[0].clients must name the scenario's peers"),
    ('fleets = [{ servers = 3, clients = ["uhashring-ketama"] }]',
     "clients.fleets[0] must have at least two clients"),
    ('fleets = [{ servers = 3, clients = ["a", "a"] }]',
     "clients.fleets[0].clients must be a non-empty list of distinct client names"),
    ("fleets = [{ servers = 3, weights = [1, 2] }]",
     "for client 'jump-consistent-hash' (as it is); leave it out"),
    ('fleets = [{ servers = 3 }]\nrecipes = [{ name = "x" }, { name = "x" }]',
     "clients.recipes must be recipes with distinct names"),
    ('fleets = [{ servers = 3 }]\nrecipes = [{ name = "jump-consistent-hash", '
     'algorithm = "jump" }]', "clients.recipes must have names other than the peers'"),
    ('fleets = [{ servers = 3 }]\nrecipes = [{ name = "x", construction = "nope" }]',
     "clients.recipes[0].construction must be one of"),
    ('fleets = [{ servers = 3, colour = 1 }]', "unknown key 'clients.fleets[0].colour'"),
])
def test_refusals_are_one_line_before_any_work(tmp_path: Path, clients: str, needle: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Each wrong [clients] is refused with exit 2 and one line naming the field."""
    scenario = tmp_path / "c.toml"
    scenario.write_text(BASE + clients + "\n")
    assert main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_shuffled_fleet_lists_the_same_servers_in_a_seeded_order() -> None:
    """`shuffle = SEED`: the template's servers and weights, in an order the seed fixes;
    without it, template order. A tie rule by list order (pingora v1) then changes owners,
    one by address (pingora v2) does not."""
    from harness.metrics.clients.options import ClientFleet
    from harness.recipes.constructions import get_construction

    plain = ClientFleet("x", 300, name="10.0.0.1:{i}", weights=(1.0, 2.0))
    shuffled = ClientFleet("x", 300, name="10.0.0.1:{i}", weights=(1.0, 2.0), shuffle=3)
    assert plain.server_list() == fleet_servers(300, (1.0, 2.0), "10.0.0.1:{i}")
    assert shuffled.server_list() == ClientFleet(
        "x", 300, name="10.0.0.1:{i}", weights=(1.0, 2.0), shuffle=3).server_list()
    assert shuffled.server_list() != plain.server_list()
    assert sorted(shuffled.server_list(), key=lambda s: s.name) == sorted(
        plain.server_list(), key=lambda s: s.name)
    v2 = get_construction("pingora")
    a, b = v2.build_ring(plain.server_list()), v2.build_ring(shuffled.server_list())
    names_a = [plain.server_list()[o].name for o in a.owners.tolist()]
    names_b = [shuffled.server_list()[o].name for o in b.owners.tolist()]
    assert names_a == names_b
