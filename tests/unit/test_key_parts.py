"""Hashing part of a key ([keys] parts, hash_part): Redis's hash-tag rule, a regular
expression's group, co-located keys on one server, and the estimate's share."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.core.client_hashes import hash_tag
from harness.core.servers import Server
from harness.core.workload import KeysSpec, key_bytes, key_names, routed_names
from harness.recipes.algorithms.redis_slots import RedisSlotsAlgorithm


def test_hash_tag_follows_redis_cluster() -> None:
    # The cases Redis's cluster specification gives for keyHashSlot.
    assert hash_tag("{user1000}.following") == "user1000"
    assert hash_tag("foo{}{bar}") == "foo{}{bar}"
    assert hash_tag("foo{{bar}}zap") == "{bar"
    assert hash_tag("foo{bar}{zap}") == "bar"
    assert hash_tag("no tag") == "no tag"
    assert hash_tag("open{only") == "open{only"


@given(st.text(alphabet="{}ab", max_size=12))
def test_hash_tag_slots_like_redis_slots(name: str) -> None:
    """Routing the tag leaves redis-slots' own routing (which applies the same rule)
    unchanged, for any name of braces."""
    redis = RedisSlotsAlgorithm.build([Server(f"s{i}", 1.0) for i in range(3)])
    whole = redis.route([name.encode()])
    tagged = redis.route([hash_tag(name).encode()])
    if hash_tag(hash_tag(name)) == hash_tag(name):
        assert whole.tolist() == tagged.tolist()


def test_regex_group_and_whole_key_when_it_does_not_match() -> None:
    spec = KeysSpec(count=3, hash_part="regex", hash_part_regex=r"^tenant-(\d+)/")
    assert routed_names(spec, ["tenant-42/a", "tenant-42/b", "other"]) == \
        ["42", "42", "other"]
    assert routed_names(KeysSpec(), ["a", "b"]) == ["a", "b"]


def test_parts_fill_the_template_deterministically() -> None:
    spec = KeysSpec(count=1_000, name="{{c-{part}}}:k-{i}", parts=7, hash_part="tag")
    names = key_names(spec)
    assert names == key_names(spec)
    assert len(set(names)) == 1_000
    parts = set(routed_names(spec, names))
    assert parts <= {f"c-{p}" for p in range(7)} and len(parts) == 7


def test_zipf_parts_make_one_part_popular() -> None:
    spec = KeysSpec(count=20_000, name="{{c-{part}}}:{i}", parts=100,
                    part_distribution="zipf", part_exponent=1.2, hash_part="tag")
    counts = np.unique(routed_names(spec, key_names(spec)), return_counts=True)[1]
    assert counts.max() > 5 * 20_000 / 100


def test_estimate_prices_parts_and_routed_names() -> None:
    plain = key_bytes(KeysSpec(count=10_000))
    with_parts = key_bytes(KeysSpec(count=10_000, name="{{c-{part}}}:{i}", parts=50,
                                    hash_part="tag"))
    assert with_parts > plain + 10_000 * 100


def test_co_located_keys_make_a_hot_server(tmp_path: Path) -> None:
    """The same keys routed whole and by a zipf-drawn tag: the tag's balance is worse,
    and the result echoes the key options."""
    def run(extra: str, name: str) -> dict[str, object]:
        scenario = tmp_path / f"{name}.toml"
        scenario.write_text(
            f'name = "{name}"\n[servers]\ncount = 20\n[keys]\ncount = 20000\n'
            'name = "{{c-{part}}}:order-{i}"\nparts = 200\npart_distribution = "zipf"\n'
            f'{extra}\n[measure]\nlayouts = ["numpy-aligned"]\nmetrics = ["balance"]\n')
        assert main(["run", str(scenario), "--out", str(tmp_path / "out"),
                     "--no-history"]) == 0
        result = json.loads((tmp_path / "out" / f"{name}.json").read_text())
        return dict(result["runs"][0]["figures"]["balance"]) | {
            "keys": result["scenario"]["keys"]}
    whole, tagged = run("", "whole"), run('hash_part = "tag"', "tagged")
    assert float(str(tagged["cv_keys"])) > 3 * float(str(whole["cv_keys"]))
    assert isinstance(tagged["keys"], dict) and tagged["keys"]["hash_part"] == "tag"
    assert isinstance(whole["keys"], dict) and "hash_part" not in whole["keys"]
