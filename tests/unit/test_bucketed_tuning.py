"""The bucketed batch lookup's tunings: every one the calibration can choose routes like
the reference (hypothesis, at every window width, depth, distance and alignment of the
grid), the
C core refuses what the binding refuses, and the calibration measures, chooses by its
rule, caches per CPU, size class and C build, and ignores a broken cache."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.native.bucketed import (
    ALIGNMENTS,
    MAX_DEPTH,
    MAX_OFFSETS_AHEAD,
    WINDOWS,
    BucketedTuning,
    CBucketedRing,
    default_tuning,
)
from harness.core.ring import Ring, reference_owners
from harness.recipes.layouts import bucketed_cache, bucketed_tuning
from harness.recipes.layouts.bucketed import BucketedLayout
from harness.recipes.layouts.bucketed_cache import calibrate
from harness.recipes.layouts.bucketed_tuning import (
    Calibration,
    Trial,
    measure,
    stage_one,
    stage_three,
    stage_two,
    winner,
)

pytestmark = pytest.mark.c_core

BUCKET = 2**16


def _grid() -> list[BucketedTuning]:
    """Every tuning the calibration can try, on any ring size."""
    tried = {tuning for entries in (1, 2**21, 2**22) for tuning in stage_one(
        default_tuning(entries))}
    tried |= {tuning for first in list(tried) for tuning in stage_two(first)}
    tried |= {tuning for first in list(tried) for tuning in stage_three(first)}
    return sorted(tried)


GRID = _grid()


def test_the_grid_covers_every_width_depth_distance_and_alignment() -> None:
    """The grid holds the search, every window width, depths 8-32 at 1-4x distances, and
    every width on every alignment up to its own size."""
    assert {t.window for t in GRID} == set(WINDOWS)
    assert {(t.depth, t.offsets_ahead // t.depth) for t in GRID if t.window} >= {
        (d, f) for d in (8, 16, 32) for f in (1, 2, 4)}
    assert {(t.window, t.align) for t in GRID if t.window} == {
        (w, a) for w in WINDOWS if w for a in ALIGNMENTS if a <= w}


@st.composite
def rings(draw: st.DrawFn) -> Ring:
    """Rings whose buckets hold from none to a few hundred entries: some buckets dense
    (past two windows of every width), bunched at one end, or empty, over a few buckets
    so that every window path and its fallback are taken."""
    buckets = draw(st.lists(st.integers(0, BUCKET - 1), min_size=1, max_size=6, unique=True))
    positions: list[int] = []
    for bucket in buckets:
        count = draw(st.sampled_from([1, 15, 16, 31, 32, 64, 127, 128, 129, 300]))
        bunched = draw(st.booleans())
        span = BUCKET // 8 if bunched else BUCKET
        lows = draw(st.lists(st.integers(0, span - 1), min_size=1, max_size=count,
                             unique=True))
        offset = draw(st.integers(0, BUCKET - span)) if bunched else 0
        positions += [bucket * BUCKET + offset + low for low in lows]
    owners = draw(st.lists(st.integers(0, 999), min_size=len(positions),
                           max_size=len(positions)))
    return Ring.from_points(positions, owners)


def _keys(ring: Ring, seed: int) -> np.ndarray:
    """On, beside and between the ring's points, their buckets' edges, and random keys."""
    p = ring.positions.astype(np.int64)
    starts = (p >> 16) << 16
    keys = np.concatenate([p - 1, p, p + 1, starts, starts - 1, starts + BUCKET - 1,
                           np.random.default_rng(seed).integers(0, 2**32, 500),
                           [0, 2**32 - 1]])
    return np.unique(keys[(keys >= 0) & (keys < 2**32)]).astype(np.uint32)


@settings(max_examples=60, deadline=None)
@given(ring=rings(), seed=st.integers(0, 2**32 - 1))
def test_every_tuning_of_the_grid_routes_like_the_reference(ring: Ring, seed: int) -> None:
    """Each window width, depth, distance and alignment routes every key like the
    reference."""
    keys = _keys(ring, seed)
    expected = reference_owners(ring, keys)
    layout = CBucketedRing(ring.positions, ring.owners)
    for tuning in GRID:
        got = layout.lookup_many(keys, tuning)
        assert np.array_equal(got, expected), tuning.label


@settings(max_examples=30, deadline=None)
@given(window=st.sampled_from([w for w in WINDOWS if w]),
       depth=st.sampled_from([1, 2, 4, 64]), ahead=st.sampled_from([1, 3, 255, 256]),
       align=st.sampled_from(ALIGNMENTS), count=st.integers(0, 200),
       seed=st.integers(0, 2**32 - 1))
def test_extreme_depths_and_distances_route_like_the_reference(
    window: int, depth: int, ahead: int, align: int, count: int, seed: int
) -> None:
    """The bounds of depth and distance, at every alignment, and batches shorter than the
    pipeline, route right."""
    rng = np.random.default_rng(seed)
    positions = np.unique(rng.integers(0, 2**32, 200_000, dtype=np.uint64)).astype(np.uint32)
    ring = Ring.from_points(positions, rng.integers(0, 100, len(positions)))
    keys = rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32)
    layout = CBucketedRing(ring.positions, ring.owners)
    got = layout.lookup_many(keys, BucketedTuning(window, depth, ahead, min(align, window)))
    assert np.array_equal(got, reference_owners(ring, keys))


@pytest.mark.parametrize(("window", "depth", "ahead", "align"), [
    (12, 16, 32, 1), (128, 16, 32, 1), (16, 0, 32, 1), (16, 3, 32, 1),
    (16, MAX_DEPTH * 2, 32, 1), (16, 16, 0, 1), (16, 16, MAX_OFFSETS_AHEAD + 1, 1),
    (-1, 16, 32, 1), (16, 2**32, 32, 1), (16, 16, 32, 0), (16, 16, 32, 4),
    (16, 16, 32, 32), (8, 16, 32, 16), (16, 16, 32, -8),
])
def test_a_tuning_the_c_core_refuses_is_refused_in_one_line(
    window: int, depth: int, ahead: int, align: int
) -> None:
    """Widths without a loop, depths not a power of two or past the pipeline's slots,
    distances out of range, alignments other than 1, 8 and 16 or past the window:
    refused before any lookup, naming what was received."""
    with pytest.raises(HarnessError, match=rf"window={window}, depth={depth}, "
                                           rf"offsets_ahead={ahead}, align={align}\)$"):
        BucketedTuning(window, depth, ahead, align)


def test_the_search_ignores_depth_distance_and_alignment() -> None:
    """window 0 (the search) takes any depth, distance and alignment: it uses none."""
    assert BucketedTuning(0, 3, 0, 5).valid()


def test_the_default_tuning_follows_the_ring_size() -> None:
    """Search below 2**21 entries, 16 entries to 2**22, 32 from there (bucketed.c)."""
    assert default_tuning(2**21 - 1).window == 0
    assert default_tuning(2**21).window == 16
    assert default_tuning(2**22).window == 32
    assert default_tuning(10**7) == BucketedTuning(32, 16, 32, 1)


def _trial(stage: int, window: int, paired: float, ns: float = 10.0) -> Trial:
    return Trial(stage, window, 16, 32, ns, ns, ns, paired)


def test_a_stage_keeps_its_first_candidate_unless_another_is_clearly_faster() -> None:
    """2% faster (paired) is noise on a shared machine: the first stays; 10% faster wins;
    the paired ratio decides, not the medians (which a burst of load skews)."""
    assert winner([_trial(1, 32, 1.0), _trial(1, 16, 0.98)], 0) == 0
    assert winner([_trial(1, 32, 1.0), _trial(1, 16, 0.90), _trial(1, 8, 0.95)], 0) == 1
    assert winner([_trial(1, 32, 1.0), _trial(2, 16, 1.0), _trial(2, 8, 0.999)], 1) == 1
    assert winner([_trial(1, 32, 1.0, ns=5.0), _trial(1, 16, 0.9, ns=50.0)], 0) == 1


def test_the_speedup_over_the_default_chains_the_paired_ratios() -> None:
    """Stage one's winner at 0.8 of the default, stage two's choice at 0.5 of that winner:
    2.5x; stage three's at 0.8 of stage two's: 3.125x."""
    trials = [Trial(1, 32, 16, 32, 10, 10, 10, 1.0), Trial(1, 16, 16, 32, 8, 8, 8, 0.8),
              Trial(2, 16, 16, 32, 8, 8, 8, 1.0), Trial(2, 16, 8, 8, 4, 4, 4, 0.5)]
    calibration = Calibration("cpu", 10**7, 24, "digest", "now", "measured", 1, 1,
                              trials, chosen=3, default=0)
    assert calibration.speedup_over_default == pytest.approx(2.5)
    assert calibration.chosen_tuning == BucketedTuning(16, 8, 8)
    trials += [Trial(3, 16, 8, 8, 4, 4, 4, 1.0), Trial(3, 16, 8, 8, 3, 3, 3, 0.8, align=16)]
    calibration = Calibration("cpu", 10**7, 24, "digest", "now", "measured", 1, 1,
                              trials, chosen=5, default=0)
    assert calibration.speedup_over_default == pytest.approx(3.125)
    assert calibration.chosen_tuning == BucketedTuning(16, 8, 8, 16)


def _ring(entries: int) -> CBucketedRing:
    rng = np.random.default_rng(entries)
    positions = np.unique(rng.integers(0, 2**32, entries, dtype=np.uint64)).astype(np.uint32)
    return CBucketedRing(positions, rng.integers(0, 50, len(positions)).astype(np.uint16))


def test_measure_times_every_stage_and_chooses_from_the_last() -> None:
    """Stage one tries every width with the default first; stage two the depths and
    distances at stage one's winner; stage three the alignments at stage two's choice;
    the choice is one of the last stage's trials."""
    ring = _ring(300_000)
    calibration = measure(ring.lookup_many, ring.entries, keys=4096, rounds=2)
    stages = [t.stage for t in calibration.trials]
    assert stages[:len(WINDOWS)] == [1] * len(WINDOWS)
    assert calibration.trials[calibration.default].tuning == default_tuning(ring.entries)
    assert calibration.default == 0
    last = max(stages)
    assert calibration.trials[calibration.chosen].stage == last
    assert last in (1, 3)  # a window's stage two is always followed by its stage three
    if last == 3:
        # Which stage-one trial won depends on the timings: stage two is the grid of one of
        # them, and stage three the alignments of one of stage two's.
        first = [t.tuning for t in calibration.trials if t.stage == 1]
        second = {t.tuning for t in calibration.trials if t.stage == 2}
        third = {t.tuning for t in calibration.trials if t.stage == 3}
        assert any(second == set(stage_two(winner)) for winner in first)
        assert any(third == set(stage_three(choice)) for choice in second)
    assert all(0 < t.min_ns <= t.median_ns <= t.max_ns for t in calibration.trials)
    assert calibration.trials[0].paired_ratio == 1.0
    assert calibration.trials[calibration.chosen].paired_ratio <= 1.0
    assert calibration.source == "measured" and calibration.size_class == 19
    assert calibration.keys == 4096 and calibration.rounds == 2


def test_the_time_estimate_covers_every_candidate_of_the_grid() -> None:
    """CANDIDATES bounds what the stages time: every width centred and on whole lines,
    the 3 x 3 grid, then the three alignments; a calibration takes seconds, not minutes,
    even at the loaded machine's 60 ns a key it is charged at."""
    assert len(stage_one(default_tuning(10**7))) + len(stage_two(
        BucketedTuning(16, 16, 32))) + len(stage_three(BucketedTuning(16, 16, 32))) \
        == bucketed_tuning.CANDIDATES == 25
    assert 0 < bucketed_tuning.CALIBRATION_SECONDS < 10


def test_a_misrouting_candidate_stops_the_calibration() -> None:
    """A tuning that routed unlike the default would be refused, not chosen."""
    ring = _ring(100_000)

    def lookup_many(keys: np.ndarray, tuning: BucketedTuning) -> np.ndarray:
        routes = ring.lookup_many(keys, tuning)
        return routes + 1 if tuning.window == 64 else routes

    with pytest.raises(HarnessError, match="window 64, depth 16, offsets 32 ahead routed"):
        measure(lookup_many, ring.entries, keys=1000, rounds=1)


def test_calibrate_caches_per_size_class_and_reads_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second ring of the same size class reuses the first's choice without timing;
    another size class measures; the cache file sits where the variable points."""
    monkeypatch.setenv(bucketed_cache.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(bucketed_tuning, "CALIBRATION_KEYS", 2048)
    monkeypatch.setattr(bucketed_tuning, "ROUNDS", 1)
    ring = _ring(70_000)
    first = calibrate(ring.lookup_many, ring.entries)
    assert first.source == "measured" and first.keys == 2048
    calls = []

    def counted(keys: np.ndarray, tuning: BucketedTuning) -> np.ndarray:
        calls.append(tuning)
        return ring.lookup_many(keys, tuning)

    again = calibrate(counted, 90_000)  # same class: 2**16 to 2**17 entries
    assert again.source == "cached" and not calls
    assert again.trials == first.trials and again.chosen_tuning == first.chosen_tuning
    other = calibrate(counted, 200_000)
    assert other.source == "measured" and calls
    document = json.loads((tmp_path / bucketed_cache.CACHE_FILE).read_text())
    assert len(document["entries"]) == 2
    assert all(first.cpu in key and first.c_core in key for key in document["entries"])


@pytest.mark.parametrize("content", [
    "", "not json", "[]", '{"format": 99, "entries": {}}', '{"format": 2, "entries": 3}',
    '{"format": 2, "entries": {"KEY": {"cpu": 1}}}',
    '{"format": 2, "entries": {"KEY": {"trials": [{"stage": 1}]}}}',
])
def test_a_broken_cache_means_measuring_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    """A cache file that is empty, not JSON, of another format or with a malformed
    entry (even under this machine's key) is measured past and rewritten whole."""
    monkeypatch.setenv(bucketed_cache.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(bucketed_tuning, "CALIBRATION_KEYS", 1024)
    monkeypatch.setattr(bucketed_tuning, "ROUNDS", 1)
    ring = _ring(70_000)
    key = bucketed_cache.this_machine(ring.entries).text
    (tmp_path / bucketed_cache.CACHE_FILE).write_text(content.replace("KEY", key))
    assert calibrate(ring.lookup_many, ring.entries).source == "measured"
    assert calibrate(ring.lookup_many, ring.entries).source == "cached"


def test_a_cache_that_is_a_fifo_or_too_large_is_measured_past(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO with no writer does not block the calibration, an oversized file is not
    read; either way the calibration measures, and its file then replaces the bad one."""
    monkeypatch.setenv(bucketed_cache.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(bucketed_tuning, "CALIBRATION_KEYS", 1024)
    monkeypatch.setattr(bucketed_tuning, "ROUNDS", 1)
    ring = _ring(70_000)
    os.mkfifo(tmp_path / bucketed_cache.CACHE_FILE)
    assert calibrate(ring.lookup_many, ring.entries).source == "measured"
    (tmp_path / bucketed_cache.CACHE_FILE).unlink()
    (tmp_path / bucketed_cache.CACHE_FILE).write_text(
        " " * (bucketed_cache.CACHE_LIMIT_BYTES + 1))
    assert calibrate(ring.lookup_many, ring.entries).source == "measured"
    assert calibrate(ring.lookup_many, ring.entries).source == "cached"


def test_the_layout_runs_the_chosen_tuning(monkeypatch: pytest.MonkeyPatch) -> None:
    """After calibrate, the layout's batch lookup runs the chosen tuning, same routes."""
    monkeypatch.setattr(bucketed_tuning, "CALIBRATION_KEYS", 1024)
    monkeypatch.setattr(bucketed_tuning, "ROUNDS", 1)
    rng = np.random.default_rng(5)
    positions = np.unique(rng.integers(0, 2**32, 50_000, dtype=np.uint64)).astype(np.uint32)
    owners = rng.integers(0, 9, len(positions)).astype(np.uint16)
    layout = BucketedLayout.build(positions, owners)
    keys = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32)
    before = layout.lookup_many(keys)
    calibration: Calibration = layout.calibrate()
    assert layout.tuning == calibration.chosen_tuning
    assert np.array_equal(layout.lookup_many(keys), before)


def _sound_record(entries: int) -> dict[str, object]:
    record = asdict(measure(_ring(entries).lookup_many, entries, keys=1024, rounds=1))
    del record["cache_refused"]
    return record


@pytest.mark.parametrize(("change", "reason"), [
    (lambda r: r["trials"][1].update(median_ns=float("nan")),
     r"trials\[1\]\.median_ns must be a finite number above 0 .* \(got nan\)"),
    (lambda r: r["trials"][0].update(max_ns="12.5"),
     r"trials\[0\]\.max_ns must be a finite number .* \(got '12\.5'\)"),
    (lambda r: r.update(keys=2**70), r"keys must be an integer from 1 to .* 71 bits"),
    (lambda r: r.update(rounds=True), r"rounds must be an integer .* \(got True\)"),
    (lambda r: r.update(cpu="Another CPU"), r"its cpu 'Another CPU' is not the .* filed under"),
    (lambda r: r.update(c_core="0" * 16), r"its c_core '0000000000000000' is not the"),
    (lambda r: r.update(size_class=r["size_class"] + 1), r"its size_class .* is not the"),
    (lambda r: r["trials"][0].update(window=12), r"trials\[0\]\.window must be one of"),
    (lambda r: r["trials"][2].update(stage=2), r"stage 1's trials are not the candidates"),
    (lambda r: r.update(chosen=(r["chosen"] + 1) % len(r["trials"])),
     r"chosen must be the last stage's winner"),
    (lambda r: r.update(extra={"a": [1]}), r"the record has unknown fields 'extra'"),
], ids=["nan", "string", "huge", "bool", "cpu", "core", "size", "window", "stage", "chosen",
        "extra"])
def test_a_record_that_measure_could_not_have_written_is_refused_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any, reason: str
) -> None:
    """Each kind of wrong record under this machine's key: measured again, with the
    reason in the calibration (and so in the result), and the record rewritten sound."""
    monkeypatch.setenv(bucketed_cache.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(bucketed_tuning, "CALIBRATION_KEYS", 1024)
    monkeypatch.setattr(bucketed_tuning, "ROUNDS", 1)
    record = _sound_record(70_000)
    change(record)
    key = bucketed_cache.this_machine(70_000).text
    (tmp_path / bucketed_cache.CACHE_FILE).write_text(json.dumps(
        {"format": bucketed_cache.CACHE_FORMAT, "entries": {key: record}}))
    ring = _ring(70_000)
    refused = calibrate(ring.lookup_many, ring.entries)
    assert refused.source == "measured"
    assert re.search(reason, refused.cache_refused or ""), refused.cache_refused
    again = calibrate(ring.lookup_many, ring.entries)
    assert again.source == "cached" and again.cache_refused is None
