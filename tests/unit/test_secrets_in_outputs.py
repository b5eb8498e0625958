"""A keyed hash's key, wherever a scenario gives it, appears in no output: no file the run
writes (result, renderings, history entry, sidecar, index page), no re-rendering by `show`,
and nothing printed (#38, class 8)."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import pytest

from harness.cli import main
from tests.paths import ROOT

#: every place a recipe with a hash_key can be given
PLACES = ("generator", "equivalence.against", "comparison", "migration", "clients",
          "routes_like", "removals")


def _scenario(keys: dict[str, str]) -> str:
    peer = str(ROOT / "peers" / "python" / "ketama_peer.py")
    sip = 'hash = "siphash24-32"'
    return f"""
[servers]
count = 5
[generator]
{sip}
hash_key = "{keys['generator']}"
points_per_weight = 8
[keys]
count = 400
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
repeats = 1
peers = [{{ command = ["{sys.executable}", "{peer}"], name = "kp", exact = false, \
routes_like = {{ {sip}, hash_key = "{keys['routes_like']}" }} }}]
[equivalence]
max_points = 1000
fleets = [{{ servers = 4 }}]
[equivalence.against]
points_per_weight = 8
{sip}
hash_key = "{keys['equivalence.against']}"
[comparison]
servers = [5]
keys = 400
zipf_requests = 400
zipf_universe = 100
repeats = 1
peers = []
algorithms = [{{ name = "ring", {sip}, hash_key = "{keys['comparison']}" }}]
[migration]
to = {{ {sip}, hash_key = "{keys['migration']}" }}
cache_objects = 100
universe = 1000
requests_per_stage = 1000
warmup_requests = 1000
[clients]
fleets = [{{ servers = 3 }}]
recipes = [{{ name = "r1", {sip}, hash_key = "{keys['clients']}" }}]
[removals]
servers = 4
keys = 400
repeats = 1
memory = false
algorithms = [{{ name = "ring", {sip}, hash_key = "{keys['removals']}" }}]
"""


def _leaks(keys: dict[str, str], text: str) -> list[str]:
    lowered = text.lower()
    return [place for place, key in keys.items() if key in lowered]


@pytest.mark.parametrize("upper", [False, True])
def test_no_key_reaches_any_file_or_stream(upper: bool, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A unique random key in each place (lower or upper case hex): after run, show and
    a run that is refused, no file under the output and history folders, and no line of
    stdout or stderr, holds any of them."""
    keys = {place: secrets.token_hex(16) for place in PLACES}
    given = {p: k.upper() if upper else k for p, k in keys.items()}
    scenario = tmp_path / "s.toml"
    scenario.write_text(_scenario(given))
    out, history = tmp_path / "out", tmp_path / "history"
    assert main(["run", str(scenario), "--out", str(out), "--history", str(history),
                 "--no-progress"]) == 0
    assert main(["show", str(out / "s.json"), "--write"]) == 0
    # A refused run quotes the table it refuses: the key in it is hidden there too.
    refused = tmp_path / "r.toml"
    refused.write_text(_scenario(given).replace(
        "[migration]\n", f'[migration]\nfrom = {{ hash_key = "{given["migration"]}" }}\n'))
    assert main(["run", str(refused), "--out", str(tmp_path / "r")]) == 2
    captured = capsys.readouterr()
    assert "migration.from must be" in captured.err
    assert _leaks(keys, captured.out + captured.err) == []
    written = [p for folder in (out, history) for p in folder.rglob("*") if p.is_file()]
    assert {p.suffix for p in written} >= {".json", ".md", ".html"}
    assert any(p.name == "index.html" for p in written)
    for path in written:
        assert _leaks(keys, path.read_bytes().decode("utf-8", "replace")) == [], path
