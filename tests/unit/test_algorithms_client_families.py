"""`modulo` (hash mod N with any key hash) and `rendezvous-score` (rendezvous with any score):
against their definitions written out here, against `rendezvous` (pymemcache's) which is
one member of the family, and their one-line errors."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
import xxhash

from harness.cli import main
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.rendezvous_score import xorshift_mult64

SERVERS = [Server(f"10.0.0.{i}:11211") for i in range(1, 8)]
KEYS = [f"key-{i}".encode() for i in range(1_500)]


def test_modulo_python_memcached() -> None:
    weighted = [Server("a:1", 1), Server("b:2", 3), Server("c:3", 2)]
    algorithm = get_algorithm("modulo").build(weighted, key_hash="crc32", shift=16,
                                              mask_bits=15, weights="repeat")
    buckets = [0, 1, 1, 1, 2, 2]
    expected = [buckets[((zlib.crc32(k) >> 16) & 0x7FFF) % 6] for k in KEYS]
    assert algorithm.route(KEYS).tolist() == expected
    assert algorithm.reference_lookup_many(algorithm.hash_keys(KEYS)) == expected


def test_modulo_key_encoding_and_truncation() -> None:
    algorithm = get_algorithm("modulo").build(SERVERS, key_hash="fnv1a-64",
                                              key_encoding="low-8-bits", key_max_bytes=4)
    keys = ["ké€y-1".encode(), "ké€y-2".encode()]
    hashes = algorithm.hash_keys(keys)
    assert hashes[0] == hashes[1]  # the same first 4 low bytes: 'k', 0xe9, 0xac, 'y'


def test_rendezvous_score_defaults_are_pymemcache() -> None:
    ours = get_algorithm("rendezvous-score").build(SERVERS)
    theirs = get_algorithm("rendezvous").build(SERVERS)
    assert ours.route(KEYS).tolist() == theirs.route(KEYS).tolist()


def test_rendezvous_go_style_xorshift() -> None:
    """go-rendezvous: xorshiftMult64(xxh64(key) ^ xxh64(node)), the first listed on a tie."""
    algorithm = get_algorithm("rendezvous-score").build(
        SERVERS, score="xorshift-mult64", hash="xxh64", tie="first")
    nodes = [xxhash.xxh64_intdigest(s.name.encode()) for s in SERVERS]
    expected = []
    for key in KEYS:
        scores = [xorshift_mult64(xxhash.xxh64_intdigest(key) ^ n) for n in nodes]
        expected.append(scores.index(max(scores)))
    assert algorithm.route(KEYS).tolist() == expected


def test_seeded_score_differs() -> None:
    plain = get_algorithm("rendezvous-score").build(SERVERS, hash="xxh32")
    seeded = get_algorithm("rendezvous-score").build(SERVERS, hash="xxh32", seed=7)
    assert plain.route(KEYS).tolist() != seeded.route(KEYS).tolist()


@pytest.mark.parametrize(("body", "message"), [
    ('name = "rendezvous-score"\nhash = "crc32"\nseed = 3',
     "algorithm.seed must be 0 for hash 'crc32'"),
    ('name = "rendezvous-score"\nscore = "xorshift-mult64"\nhash = "crc32"',
     "algorithm.hash must be a 64-bit hash for score = 'xorshift-mult64'"),
    ('name = "modulo"\nshift = 64', "algorithm.shift must be an integer from 0 to 63"),
    ('name = "modulo"\nkey_hash = "sha7"', "algorithm.key_hash must be one of"),
])
def test_one_line_errors(body: str, message: str, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(f"[servers]\ncount = 3\n[algorithm]\n{body}\n")
    assert main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and str(scenario) in err and len(err.splitlines()) == 1


def test_modulo_weights_refused_before_work(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "w.toml"
    scenario.write_text('[servers]\nlist = [{name = "a", weight = 1.5}]\n'
                        '[algorithm]\nname = "modulo"\nweights = "repeat"\n')
    assert main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 2
    assert "positive integer weights for weights = 'repeat'" in capsys.readouterr().err
