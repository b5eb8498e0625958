"""A fuzzer of the bucketed tuning cache: hostile cache files under this machine's key.

Each example starts from a sound cache file (one record `measure` wrote on this machine)
and makes it hostile: a field of the record, or of one of its trials, replaced by a wrong
type, NaN or Infinity, an integer past 64 bits, nested garbage, or deleted, or an unknown
one added; another CPU's, size class's or C core's fields under this key; the file
truncated, with NaN literals or bytes that are not UTF-8, nested past the recursion
limit; a symlink to /dev/zero, a dangling one, a directory, a FIFO or an oversized file
where the file should be. Every example calibrates (the cache's record used only if it
is sound, else measured again with the refusal in the calibration), with finite figures a
result can hold and a table that renders, leaves nothing beside the cache file, and the
next calibration reads the rewritten record. A few examples run `run` and then `show`
on a scenario of the bucketed layout: exit 0 both.

RING_HARNESS_FUZZ_EXAMPLES sets the examples (200 by default).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.atomic import dumps_strict
from harness.core.machine import cpu_model
from harness.core.native.bucketed import CBucketedRing
from harness.metrics.calibration_tables import calibration_table
from harness.recipes.layouts import bucketed_cache, bucketed_tuning
from harness.recipes.layouts.bucketed_cache import CACHE_FILE, CacheKey, calibrate
from harness.recipes.layouts.bucketed_tuning import Calibration, measure
from tests.fuzz_examples import fuzz_examples

pytestmark = pytest.mark.c_core

EXAMPLES = fuzz_examples(200)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
ENTRIES = 70_000

HOSTILE_VALUES = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, "12.5", "", "x" * 600, 2**64, 2**200,
                     -(2**70), -1, 0, 1, 0.0, 1e308, 5e-324, None, True, False, [], {},
                     [[[[]]]], {"a": {"b": [1, {"c": None}]}}, "\x1b]0;x\x07", "\udcff"]),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8))
#: another machine's identity, field by field
FOREIGN = {"cpu": "AMD EPYC (family 23 model 49 stepping 0, L2 512 KiB, L3 16 MiB)",
           "c_core": "0123456789abcdef"}
PLACES = ["devzero", "directory", "dangling", "fifo", "oversized", "empty"]


def _ring() -> CBucketedRing:
    rng = np.random.default_rng(3)
    drawn = np.unique(rng.integers(0, 2**32, ENTRIES + 500, dtype=np.uint64))
    positions = np.sort(drawn[:ENTRIES]).astype(np.uint32)
    return CBucketedRing(positions, rng.integers(0, 9, len(positions)).astype(np.uint16))


RING = _ring()


@pytest.fixture
def small_calibration(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Calibrations of 1,024 keys in one round: milliseconds, so many examples run."""
    monkeypatch.setattr(bucketed_tuning, "CALIBRATION_KEYS", 1024)
    monkeypatch.setattr(bucketed_tuning, "ROUNDS", 1)
    yield


def _sound_document() -> dict[str, Any]:
    calibration = measure(RING.lookup_many, ENTRIES, keys=1024, rounds=1)
    record = asdict(calibration)
    del record["cache_refused"]
    key = bucketed_cache.this_machine(ENTRIES).text
    return {"format": bucketed_cache.CACHE_FORMAT, "entries": {key: record}}


SOUND = _sound_document()
KEY = next(iter(SOUND["entries"]))


@st.composite
def record_mutations(draw: st.DrawFn) -> dict[str, Any]:
    """The sound document with its record changed: one field (or a trial's) replaced,
    deleted or joined by an unknown one, or another machine's identity under this key."""
    document: dict[str, Any] = json.loads(json.dumps(SOUND))
    record = document["entries"][KEY]
    kind = draw(st.sampled_from(["field", "trial", "delete", "extra", "foreign", "moved"]))
    event(f"record: {kind}")
    if kind == "field":
        record[draw(st.sampled_from(sorted(record)))] = draw(HOSTILE_VALUES)
    elif kind == "trial":
        trial = record["trials"][draw(st.integers(0, len(record["trials"]) - 1))]
        trial[draw(st.sampled_from(sorted(trial)))] = draw(HOSTILE_VALUES)
    elif kind == "delete":
        del record[draw(st.sampled_from(sorted(record)))]
    elif kind == "extra":
        record[draw(st.text(min_size=1, max_size=8))] = draw(HOSTILE_VALUES)
    elif kind == "foreign":
        for name in draw(st.lists(st.sampled_from(["cpu", "c_core", "size_class"]),
                                  min_size=1, unique=True)):
            record[name] = FOREIGN.get(name, record["size_class"] + 1)
    else:  # a ring of another size class measured, filed under this key
        record["entries"] = draw(st.sampled_from([1, 2**20, 2**32 - 1]))
    return document


@st.composite
def hostile_texts(draw: st.DrawFn) -> bytes:
    """The sound file's text broken: truncated, a number made NaN or Infinity, a byte that
    is not UTF-8 put in, nested past the recursion limit, or random bytes."""
    text = json.dumps(SOUND, indent=1).encode()
    kind = draw(st.sampled_from(["truncated", "constant", "bytes", "nested", "random"]))
    event(f"text: {kind}")
    if kind == "truncated":
        return text[:draw(st.integers(0, len(text) - 1))]
    if kind == "constant":
        return text.replace(b'"paired_ratio": 1.0', b'"paired_ratio": '
                            + draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity"])), 1)
    if kind == "bytes":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + text[at:]
    if kind == "nested":
        return b'{"format": 3, "entries": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    return draw(st.binary(max_size=200))


def _place(path: Path, kind: str) -> None:
    """Something other than a regular file where the cache file should be."""
    event(f"place: {kind}")
    if kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_text("{}")
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "oversized":
        with path.open("wb") as handle:
            handle.truncate(bucketed_cache.CACHE_LIMIT_BYTES + 1)
    else:
        path.write_bytes(b"")


HOSTILE = st.one_of(record_mutations().map(lambda d: ("document", d)),
                    hostile_texts().map(lambda t: ("text", t)),
                    st.sampled_from(PLACES).map(lambda p: ("place", p)))


def _write(folder: Path, hostile: tuple[str, Any]) -> Path:
    path = folder / CACHE_FILE
    kind, value = hostile
    if kind == "document":
        path.write_text(json.dumps(value))  # NaN and Infinity as their literals
    elif kind == "text":
        path.write_bytes(value)
    else:
        _place(path, value)
    return path


def _check(calibration: Calibration) -> None:
    """A calibration a result can hold: finite figures, this machine's name, a table."""
    dumps_strict(asdict(calibration), "calibration")
    assert calibration.cpu == cpu_model() and calibration.cpu
    assert calibration.size_class == bucketed_tuning.size_class(ENTRIES)
    assert calibration.c_core == bucketed_tuning.c_core_digest()
    assert calibration_table("bucketed", calibration).rows


@SETTINGS
@given(hostile=HOSTILE)
def test_a_hostile_cache_is_used_only_if_sound_else_measured_again(
    hostile: tuple[str, Any], tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch, small_calibration: None,
) -> None:
    """Whatever the cache holds under this key, the calibration completes: the record if
    it is sound, else measured again with the refusal said; then the file is sound."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv(bucketed_cache.CACHE_VARIABLE, str(folder))
    path = _write(folder, hostile)
    calibration = calibrate(RING.lookup_many, ENTRIES)
    event(f"source: {calibration.source}")
    _check(calibration)
    if calibration.source == "cached":
        assert calibration.cache_refused is None
    else:
        assert calibration.cache_refused, hostile
    leftovers = {entry.name for entry in folder.iterdir()} - {CACHE_FILE}
    assert not leftovers
    if not path.is_dir():
        again = calibrate(RING.lookup_many, ENTRIES)
        assert again.source == "cached" and again.cache_refused is None


def test_a_sound_record_is_used_and_every_field_of_it_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_calibration: None
) -> None:
    """The sound file itself is read (the fuzzer's refusals are not of everything), and
    a record read under another key than its own is refused by its own fields."""
    monkeypatch.setenv(bucketed_cache.CACHE_VARIABLE, str(tmp_path))
    (tmp_path / CACHE_FILE).write_text(json.dumps(SOUND))
    assert calibrate(RING.lookup_many, ENTRIES).source == "cached"
    record = SOUND["entries"][KEY]
    other = CacheKey("Another CPU", record["size_class"], record["c_core"])
    with pytest.raises(bucketed_cache.RecordRefused, match=r"its cpu .* is not the"):
        bucketed_cache.read_record(record, other)


SCENARIO = """format_version = 1
name = "tuned"
description = "the bucketed layout, tuned"
[servers]
count = 10
[generator]
hash = "blake2b-32"
points_per_weight = 7000
[keys]
count = 5000
[measure]
layouts = ["bucketed"]
metrics = ["throughput"]
repeats = 1
scalar_keys = 200
"""


@settings(max_examples=max(4, EXAMPLES // 4), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hostile=HOSTILE)
def test_run_and_show_over_a_hostile_cache(
    hostile: tuple[str, Any], tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    small_calibration: None,
) -> None:
    """`run` of a bucketed scenario over a hostile cache exits 0 with a result `show`
    reads, whose calibration is the cache's sound record or one measured again."""
    folder = tmp_path_factory.mktemp("run")
    cache = folder / "cache"
    cache.mkdir()
    monkeypatch.setenv(bucketed_cache.CACHE_VARIABLE, str(cache))
    record = SOUND["entries"][KEY]
    # filed under the key of this scenario's ring size (70,000 entries' class)
    assert bucketed_tuning.size_class(70_000) == record["size_class"]
    _write(cache, hostile)
    scenario = folder / "tuned.toml"
    scenario.write_text(SCENARIO)
    assert main(["run", str(scenario), "--out", str(folder / "out")]) == 0, \
        capsys.readouterr().err
    assert main(["show", str(folder / "out" / "tuned.json")]) == 0, capsys.readouterr().err
    shown = capsys.readouterr().out
    assert "tuned before it was timed" in shown
    result = json.loads((folder / "out" / "tuned.json").read_text())
    tuned = result["runs"][0]["subjects"][0]["figures"]["throughput"]["calibration"]
    assert tuned["size_class"] == record["size_class"]
    assert (tuned["source"] == "cached") == (tuned["cache_refused"] is None)
