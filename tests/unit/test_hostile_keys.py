"""The hostile-keys metric: a brute force that wins against an unkeyed hash and stays at
chance against SipHash with an unknown key; its table's validation; its cost model."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.crc_forgery import forged_names
from harness.core.hashing import hash_many, hash_numbered
from harness.core.ring import reference_owners
from harness.core.servers import numbered_servers
from harness.metrics.base import RunShape
from harness.metrics.hostile_keys import (
    CHUNK,
    HostileKeys,
    HostileKeysMetric,
    HostileKeysOptions,
    _values_in_arcs,
    candidate_name,
    chance_noise,
    chunk_prefix,
)
from harness.recipes.constructions.generator import generate_ring
from harness.run import estimate
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario

KEY = "000102030405060708090a0b0c0d0e0f"
FLEET = """
[servers]
count = 100
[generator]
points_per_weight = 160
[keys]
count = 2000
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
repeats = 1
"""


def _measure(tmp_path: Path, table: str, generator: str = "") -> HostileKeys:
    path = tmp_path / "s.toml"
    text = FLEET.replace("points_per_weight = 160", f"points_per_weight = 160\n{generator}")
    path.write_text(text + "[hostile_keys]\n" + table)
    record: HostileKeys = run_scenario(load_scenario(path), show_progress=False) \
        .runs[0].figure("hostile_keys")
    return record


@pytest.fixture(scope="module")
def attack(tmp_path_factory: pytest.TempPathFactory) -> HostileKeys:
    """The issue's targets in one run: N = 100 at 160 points, 1M candidates, three hashes."""
    return _measure(tmp_path_factory.mktemp("attack"),
                    'hashes = ["blake2b-32", "crc32", "siphash24-32"]\n'
                    "budgets = [10_000, 100_000, 1_000_000]\n")


def test_unkeyed_blake2b_falls_to_a_million_candidates(attack: HostileKeys) -> None:
    """Against blake2b-32, 1M candidates put at least 90% of the attack on the target, whose
    load then dwarfs the mean; the share grows with the budget."""
    blake = next(a for a in attack.attacks if a.hash == "blake2b-32")
    shares = [b.share_on_target for b in blake.budgets]
    assert shares == sorted(shares)
    assert blake.budgets[-1].share_on_target >= 0.9
    assert blake.budgets[-1].target_load > 5 * blake.target_load_before
    assert blake.candidates == 1_000_000 and blake.candidates_per_second > 0


def test_every_hit_of_an_exact_model_lands(attack: HostileKeys) -> None:
    """With the real ring as its model, every key the attacker picked lands on the target:
    its batch lookups agree with the plain reference that routes the attack."""
    for a in attack.attacks:
        if a.attacker_knows_key:
            for b in a.budgets:
                assert b.on_target == min(b.hits, attack.attack_keys)


def test_keyed_siphash_stays_at_chance(attack: HostileKeys) -> None:
    """Against siphash24-32 under a key the attacker lacks, the share on the target stays at
    the target's arc share within 4 binomial standard deviations, at every budget, and the
    target's load stays near the mean."""
    sip = next(a for a in attack.attacks if a.hash == "siphash24-32")
    assert sip.method == "brute-force"
    assert sip.keyed and not sip.attacker_knows_key
    assert sip.noise_bound == pytest.approx(chance_noise(sip.chance_share, attack.attack_keys))
    for b in sip.budgets:
        assert abs(b.share_on_target - sip.chance_share) <= sip.noise_bound, b
        assert b.target_load < 1.5


def test_a_leaked_key_is_as_bad_as_no_key(tmp_path: Path) -> None:
    """Knowing the key too (knowledge = 'hash-and-key'), the attacker wins against SipHash
    as against blake2b: the key's secrecy is what protects."""
    record = _measure(tmp_path, 'knowledge = "hash-and-key"\nbudgets = [600_000]\n',
                      generator=f'hash = "siphash24-32"\nhash_key = "{KEY}"')
    (sip,) = record.attacks
    assert sip.attacker_knows_key and sip.budgets[0].share_on_target >= 0.9


def test_candidates_are_the_names_hashed() -> None:
    """Candidate i is named attack-{chunk}-{j}; the chunk prefixes hash to what names give."""
    assert candidate_name(3) == b"attack-0-3"
    assert candidate_name(CHUNK + 5) == b"attack-1-5"
    assert chunk_prefix(1) + b"5" == candidate_name(CHUNK + 5)
    names = [candidate_name(i) for i in range(CHUNK, CHUNK + 50)]
    for name in ("blake2b-32", "crc32"):
        assert np.array_equal(hash_numbered(name, chunk_prefix(1), 50),
                              hash_many(name, names))


def test_the_secret_key_is_never_written(tmp_path: Path) -> None:
    """A key the scenario gives appears in none of the result files, nor on stdout."""
    path = tmp_path / "s.toml"
    path.write_text(FLEET.replace("points_per_weight = 160",
                                  f'points_per_weight = 16\nhash = "siphash24-32"\n'
                                  f'hash_key = "{KEY.upper()}"')
                    + "[hostile_keys]\nbudgets = [5000]\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    for file in (tmp_path / "out").iterdir():
        text = file.read_text()
        assert KEY not in text.lower(), file
    record = json.loads((tmp_path / "out" / "s.json").read_text())
    assert "given in the scenario" in record["scenario"]["generator"]["hash_key"]


@pytest.mark.parametrize(("table", "needle"), [
    ("budgets = [100_000, 10_000]\n", "hostile_keys.budgets must be a rising list"),
    ("budgets = []\n", "hostile_keys.budgets must be a rising list"),
    ("budgets = [1000]\n", "budgets of at least attack_keys (5,000)"),
    ("attack_share = 1\n", "hostile_keys.attack_share must be a share"),
    ("attack_share = 0\n", "hostile_keys.attack_share must be a share"),
    ("attack_share = nan\n", "hostile_keys.attack_share must be a share"),
    ("attack_share = true\n", "hostile_keys.attack_share must be a share"),
    ('hashes = ["sha1"]\n', "hostile_keys.hashes must be a list of names from"),
    ('hashes = ["crc32", "crc32"]\n', "a list of distinct hash names"),
    ('target = "nobody"\n', "hostile_keys.target must name a server on the ring"),
    ("target = 3\n", "hostile_keys.target must be the name of a server"),
    ('knowledge = "all"\n', "hostile_keys.knowledge must be one of 'hash', 'hash-and-key'"),
    ("methods = []\n", "hostile_keys.methods must be a non-empty list"),
    ('methods = ["guess"]\n', "hostile_keys.methods must be a list of names from"),
    ("attack_keys = 0\n", "hostile_keys.attack_keys must be an integer from 1"),
    ("budget = [1]\n", "unknown key 'hostile_keys.budget'"),
])
def test_bad_tables_are_one_line(table: str, needle: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Each bad [hostile_keys] field is refused in one line naming it, before any work."""
    path = tmp_path / "s.toml"
    path.write_text(FLEET + "[hostile_keys]\n" + table)
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "out").exists()


def test_other_constructions_are_refused(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """nginx fixes its own hash: the metric says it needs the points construction."""
    path = tmp_path / "s.toml"
    path.write_text(FLEET.replace("points_per_weight = 160", 'construction = "nginx"')
                    + "[hostile_keys]\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "construction = 'points'" in capsys.readouterr().err


def test_cost_model_counts_a_million_candidates() -> None:
    """A 1M budget costs every candidate's time (at least the measured rate's worth), its
    hits' indexes in memory, and two rings beside the run's; a larger budget costs more."""
    servers = numbered_servers(100)
    metric = HostileKeysMetric()
    million = HostileKeysOptions(budgets=(1_000_000,), hashes=("blake2b-32",))
    seconds, why = metric.estimated_seconds(million, servers)
    # 0.93 M candidates/s measured for blake2b-32 on two shared cores: at least 0.5 s
    assert seconds >= 0.5 and "1,000,000 candidates" in why
    assert metric.estimated_bytes(million, servers) >= 8 * 1_000_000
    larger = HostileKeysOptions(budgets=(10_000_000,), hashes=("blake2b-32",))
    assert metric.estimated_seconds(larger, servers)[0] > seconds
    assert metric.working(_shape(million)).rings == 2
    assert metric.working(_shape(HostileKeysOptions(knowledge="hash-and-key"))).rings == 0
    forging = HostileKeysOptions(budgets=(1_000_000,), hashes=("crc32",))
    assert metric.estimated_bytes(forging, servers) > metric.estimated_bytes(million, servers)


def _shape(options: HostileKeysOptions) -> RunShape:
    """A sweep point of a 16,000-point ring measured with these options."""
    return RunShape(entries=16_000, keys=10_000, key_hash_bytes=4, ring_array_bytes=96_000,
                    reference_bytes=192_000, layouts=(), form_bytes=0.0, scalar_keys=100,
                    peer_bytes=0.0, operations=0, options={"hostile_keys": options})


def test_a_forgery_too_large_for_memory_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A billion forged CRC-32 candidates would need about 64 GB: refused before work."""
    monkeypatch.setattr(estimate, "available_memory_bytes", lambda: 16 * 2**30)
    path = tmp_path / "s.toml"
    path.write_text(FLEET + '[hostile_keys]\nhashes = ["crc32"]\nbudgets = [1_000_000_000]\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "[hostile_keys] (budgets" in err and "available memory" in err


def test_a_billion_candidates_is_refused_by_the_time_budget(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """10**9 blake2b-32 candidates would outlast the default ten minutes: refused up front,
    naming the table (on a machine with the memory for their hits' indexes)."""
    monkeypatch.setattr(estimate, "available_memory_bytes", lambda: 2**40)
    path = tmp_path / "s.toml"
    path.write_text(FLEET + "[hostile_keys]\nbudgets = [1_000_000_000]\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "[hostile_keys]" in err and "1,000,000,000 candidates" in err


def test_estimate_includes_the_extra_rings(tmp_path: Path) -> None:
    """The scenario's estimate grows by the rings the attack builds beside the run's."""
    path = tmp_path / "s.toml"
    path.write_text(FLEET + '[hostile_keys]\nknowledge = "hash-and-key"\nbudgets = [5000]\n')
    alone = estimate.estimate_peak_bytes(load_scenario(path))
    path.write_text(FLEET + '[hostile_keys]\nhashes = ["crc32"]\nbudgets = [5000]\n')
    assert estimate.estimate_peak_bytes(load_scenario(path)) > alone
    assert np.isfinite(alone)


def test_crc32_forgery_makes_every_candidate_a_hit(attack: HostileKeys) -> None:
    """CRC-32 lets the attacker construct names instead of searching: every forged
    candidate lands on the target, at every budget, and the whole attack with it."""
    forged = next(a for a in attack.attacks if a.method == "forgery")
    assert forged.hash == "crc32" and forged.hits_per_second == forged.candidates_per_second
    for b in forged.budgets:
        assert b.hits == b.budget and b.on_target == attack.attack_keys
    assert not any(a.method == "forgery" for a in attack.attacks if a.hash != "crc32")


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=60), st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=50))
def test_forged_names_have_the_chosen_checksums(prefix: bytes, targets: list[int]) -> None:
    """For any prefix and target values, prefix + the forged 4 bytes has that CRC-32."""
    wanted = np.array(targets, dtype=np.uint32)
    names = forged_names(prefix, wanted)
    assert [zlib.crc32(n) for n in names] == targets
    assert all(n.startswith(prefix) and len(n) == len(prefix) + 4 for n in names)


def test_forged_values_lie_in_the_target_arcs() -> None:
    """The values a forgery aims at are distinct and all owned by the target, wrap-around
    arc included."""
    ring = generate_ring(numbered_servers(7), 3, "crc32")
    for target in range(7):
        values = _values_in_arcs(ring.positions, ring.owners, target, 2_000, seed=target)
        assert len(np.unique(values)) == 2_000
        assert (reference_owners(ring, values) == target).all()


def test_methods_choose_the_attacks(tmp_path: Path) -> None:
    """methods = ['forgery'] runs only the forgery, and only for the hashes that allow one."""
    record = _measure(tmp_path, 'methods = ["forgery"]\nhashes = ["crc32", "blake2b-32"]\n'
                      "budgets = [5000]\n")
    assert [(a.hash, a.method) for a in record.attacks] == [("crc32", "forgery")]


def test_hashes_of_another_width_are_attacked_too(tmp_path: Path) -> None:
    """A 64-bit keyed ring (its layouts 64-bit) attacked with 32-bit hashes beside its own:
    each is built at its own width, the exact models win and the keyed one stays near
    chance."""
    path = tmp_path / "s.toml"
    path.write_text('[servers]\ncount = 10\n[generator]\npoints_per_weight = 20\n'
                    'hash = "siphash24-64"\n[keys]\ncount = 500\n[measure]\n'
                    'layouts = ["numpy-packed-64"]\nmetrics = ["balance"]\nrepeats = 1\n'
                    '[hostile_keys]\nhashes = ["siphash24-64", "blake2b-32", "crc32"]\n'
                    "budgets = [60_000]\nnormal_requests = 1000\n")
    record: HostileKeys = run_scenario(load_scenario(path), show_progress=False) \
        .runs[0].figure("hostile_keys")
    by = {(a.hash, a.method): a for a in record.attacks}
    assert set(by) == {("siphash24-64", "brute-force"), ("blake2b-32", "brute-force"),
                       ("crc32", "brute-force"), ("crc32", "forgery")}
    for key in (("blake2b-32", "brute-force"), ("crc32", "forgery")):
        assert by[key].budgets[0].share_on_target == 1.0
    sip = by[("siphash24-64", "brute-force")]
    assert abs(sip.budgets[0].share_on_target - sip.chance_share) <= sip.noise_bound


def _hash_keys_in(value: object) -> list[object]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "hash_key"] + [
            x for v in value.values() for x in _hash_keys_in(v)]
    if isinstance(value, list):
        return [x for v in value for x in _hash_keys_in(v)]
    return []


def test_no_key_given_or_drawn_is_written_by_any_record(tmp_path: Path) -> None:
    """A key given to a recipe of [comparison], and the keys drawn for the ring and for the
    attacked hashes, appear in no file: every hash_key of the JSON is the hidden mark."""
    path = tmp_path / "k.toml"
    path.write_text('[servers]\ncount = 5\n[generator]\nhash = "siphash24-32"\n'
                    'points_per_weight = 8\n[keys]\ncount = 500\n[measure]\n'
                    'layouts = ["numpy-packed"]\nmetrics = ["balance"]\nrepeats = 1\n'
                    "[comparison]\nservers = [5]\nkeys = 500\nzipf_requests = 500\n"
                    "zipf_universe = 100\nrepeats = 1\n[[comparison.algorithms]]\n"
                    f'name = "ring"\nhash = "siphash24-32"\nhash_key = "{KEY}"\n'
                    '[hostile_keys]\nhashes = ["siphash24-32", "siphash24-64"]\n'
                    "budgets = [5000]\nnormal_requests = 100\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    for file in (tmp_path / "out").iterdir():
        assert KEY not in file.read_text().lower(), file
    keys = _hash_keys_in(json.loads((tmp_path / "out" / "k.json").read_text()))
    assert len(keys) >= 3
    assert all(k is None or str(k).startswith("(secret, not recorded)") for k in keys), keys


def test_a_single_server_takes_every_attack(tmp_path: Path) -> None:
    """One server owns the whole ring: every attack, keyed or not, lands on it, at chance 1
    with no noise."""
    path = tmp_path / "s.toml"
    path.write_text('[servers]\ncount = 1\n[generator]\npoints_per_weight = 3\n[keys]\n'
                    'count = 100\n[measure]\nlayouts = ["numpy-packed"]\nmetrics = ["balance"]\n'
                    'repeats = 1\n[hostile_keys]\nhashes = ["crc32", "siphash24-32"]\n'
                    "budgets = [200]\nattack_keys = 100\nnormal_requests = 50\n")
    record: HostileKeys = run_scenario(load_scenario(path), show_progress=False) \
        .runs[0].figure("hostile_keys")
    assert len(record.attacks) == 3
    for a in record.attacks:
        assert a.chance_share == 1.0 and a.noise_bound == 0.0
        assert a.budgets[0].share_on_target == 1.0


def test_a_target_that_lost_its_only_point_owns_nothing(tmp_path: Path) -> None:
    """Server 'b31<m#x' was forged so that its one point '0:b31<m#x' has the CRC-32 of '0:a':
    the lower index keeps the position, so the target owns no arc. Chance is 0, search
    finds nothing, and there is nothing to forge into (no forgery row)."""
    path = tmp_path / "s.toml"
    path.write_text('[[servers.list]]\nname = "a"\n[[servers.list]]\nname = "b31<m#x"\n'
                    '[[servers.list]]\nname = "c"\n[generator]\nhash = "crc32"\n'
                    'points_per_weight = 1\npoint_name = "{j}:{server}"\n[keys]\ncount = 100\n'
                    '[measure]\nlayouts = ["numpy-packed"]\nmetrics = ["collisions"]\n'
                    'repeats = 1\n[hostile_keys]\ntarget = "b31<m#x"\nbudgets = [1000]\n'
                    "attack_keys = 100\nnormal_requests = 50\n")
    result = run_scenario(load_scenario(path), show_progress=False)
    assert result.runs[0].figure("collisions").collisions == 1
    record: HostileKeys = result.runs[0].figure("hostile_keys")
    (search,) = record.attacks
    assert search.method == "brute-force" and search.chance_share == 0.0
    assert search.budgets[0].hits == 0 and search.budgets[0].share_on_target == 0.0
