"""What the history's index keeps of each entry, kept beside it, and what the index costs.

The index page (`history_page`) needs a few numbers of each entry: its id, its commit, its
scenario, and the figures `compare` reads. Reading them from the entry means reading the
whole result, up to `MAX_RESULT_BYTES`, and every run rewrites the index from every entry:
work that grew with the history and a peak no estimate held. So each entry gets a small
sidecar, `NNNN.figures.json`, written when the entry is recorded, from the result already in
memory; the index reads sidecars. An entry without one (a history older than sidecars, or a
sidecar removed or damaged), or changed since its sidecar was written (the sidecar older
than the entry, or naming another size), is read once, and its sidecar written then.

`index_cost` bounds the rebuild before any work, from the files' sizes alone (nothing is
read): the sidecars, all held at once, and the largest entry that must still be read, read
one at a time. `run` adds it to the memory and time it checks (`harness.run.estimate`).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core import noise
from harness.core.atomic import dumps_strict, write_atomically
from harness.core.errors import ResultFormatError
from harness.core.machine import NOT_A_CHECKOUT
from harness.core.model import Result
from harness.core.safe_read import read_regular_file
from harness.report.compare import MIN_ROUNDS, RUN_FIGURES, SUBJECT_FIGURES, Figure, Rounds
from harness.report.history import Entry, entries, machines
from harness.report.results import MAX_RESULT_BYTES, load_result

#: the sidecar format; a sidecar of another version is rebuilt from its entry (2: a
#: timing's figure carries its run's noise band)
SIDECAR_VERSION = 2
#: a sidecar is a few figures; one larger than this is not ours, and is rebuilt
MAX_SIDECAR_BYTES = 16 << 20
#: the subject of a sweep point's own figures (entries, cv_keys, ...)
RING = "(ring)"
_FIGURES = {(scope, figure.label): figure
            for scope, figures in (("run", RUN_FIGURES), ("subject", SUBJECT_FIGURES))
            for figure in figures}

# Measured with tracemalloc on synthetic histories (tests/unit/test_history_cost.py makes one):
# reading a result peaked at 3.4 times its file for a 10.8 MB one and 51 times a 21 KB one
# (a fixed megabyte of cattrs' structuring); with sidecars, the index of 500 entries held
# 4.6 times their bytes, of 300 small ones 1.3 MiB in all. Time: 9 ms an entry from its
# sidecar (500 entries of 100 figures: 4.5 s, most of it finding steps and drawing the
# page), 44 ms to read a 21 KB entry, 0.84 us a byte of a 10.8 MB one.
#: bytes a result read takes, per byte of its file, and beyond it
RESULT_READ_FACTOR = 12.0
RESULT_READ_FIXED = 8 << 20
#: bytes the index holds per byte of sidecar; and per byte of an entry read instead (a
#: figure is about 250 bytes held, and at least 22 bytes of a result's JSON)
SIDECAR_HELD_FACTOR = 10.0
UNREAD_HELD_FACTOR = 12.0
INDEX_FIXED = 8 << 20
#: seconds an entry takes from its sidecar, and a byte of it; an entry read, and a byte
SECONDS_PER_ENTRY = 2e-3
SECONDS_PER_SIDECAR_BYTE = 4e-6
SECONDS_PER_UNREAD_ENTRY = 0.1
SECONDS_PER_RESULT_BYTE = 2e-6


@dataclass(frozen=True)
class Kept:
    """What the index needs of one entry: read once, so the results are not all held."""

    run_id: str
    scenario: str
    commit: str
    figures: dict[tuple[str, str, str], tuple[Figure, float]]
    #: a timing's noise band in its run, (low, high) around its value: the bootstrap
    #: interval of its median over the run's rounds, or their min-max where the result kept
    #: no rounds or too few (`band_of`); none for deterministic figures
    bands: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)
    #: a timing's CPU ns per key in its run, where it kept MIN_ROUNDS rounds of them:
    #: (median, low, high), its band as `bands` (`cpu_of`)
    cpu: dict[tuple[str, str, str], tuple[float, float, float]] = field(
        default_factory=dict)


#: resamples of a band's bootstrap: its ends to about a percent of the median's spread is
#: all a step needs, and an index reading an entry bootstraps each of its timings (about
#: 0.3 ms each at this count, against 2 ms at compare's 2,000)
BAND_RESAMPLES = 400


def band_of(rounds: Rounds | None) -> tuple[float, float] | None:
    """A timing's noise band in its own run (see `Kept.bands`): the bootstrap interval of
    its median from MIN_ROUNDS rounds on, else the rounds' min-max (wider); none for one
    round."""
    if rounds is None or rounds.rounds < 2:
        return None
    if rounds.samples and len(rounds.samples) >= MIN_ROUNDS:
        try:
            low, high = noise.relative_half_width(rounds.samples, resamples=BAND_RESAMPLES)
        except ValueError:
            return None
        return low * rounds.median, high * rounds.median
    return rounds.min, rounds.max


def cpu_of(rounds: Rounds | None) -> tuple[float, float, float] | None:
    """A timing's CPU time in its run and its band (see `Kept.cpu`)."""
    samples: tuple[float, ...] | None = getattr(rounds, "cpu_samples", None)
    if not samples or len(samples) < MIN_ROUNDS:
        return None
    try:
        low, high = noise.relative_half_width(samples, resamples=BAND_RESAMPLES)
    except ValueError:
        return None
    median = statistics.median(samples)
    return median, low * median, high * median


def kept_of(entry: Entry, result: Result) -> Kept:
    """An entry's figures, from its result."""
    figures: dict[tuple[str, str, str], tuple[Figure, float]] = {}
    bands: dict[tuple[str, str, str], tuple[float, float]] = {}
    cpu: dict[tuple[str, str, str], tuple[float, float, float]] = {}
    for run in result.runs:
        for figure in RUN_FIGURES:
            value = figure.get(run)
            if value is not None:
                figures[(run.label, RING, figure.label)] = (figure, value)
        for subject in run.subjects:
            for figure in SUBJECT_FIGURES:
                value = figure.get(subject)
                if value is None:
                    continue
                key = (run.label, subject.name, figure.label)
                figures[key] = (figure, value)
                rounds = figure.timing(subject) if figure.timing else None
                band = band_of(rounds)
                if band is not None:
                    bands[key] = band
                    cpu_band = cpu_of(rounds)
                    if cpu_band is not None:
                        cpu[key] = cpu_band
    return Kept(entry.run_id, result.name, result.git_commit or NOT_A_CHECKOUT, figures,
                bands, cpu)


def sidecar_path(entry_path: Path) -> Path:
    return entry_path.with_suffix(".figures.json")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _current(entry: Entry) -> bool:
    """Whether the entry has a sidecar written after it (stat alone, nothing read)."""
    try:
        return sidecar_path(entry.path).stat().st_mtime_ns >= entry.path.stat().st_mtime_ns
    except OSError:
        return False


#: bytes of a sidecar's start that name its version and its entry's size
SIDECAR_HEAD_BYTES = 256


def _will_read(entry: Entry) -> bool:
    """Whether the index will take the entry's figures from its sidecar: current, and its
    head naming this version and the entry's present size (as `_from_sidecar` checks them),
    from its first bytes alone. A sidecar that only looks current by its timestamp is priced
    as the result it makes the index read."""
    if not _current(entry):
        return False
    try:
        with sidecar_path(entry.path).open("rb") as sidecar:
            head = sidecar.read(SIDECAR_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    found = _HEAD.match(head)
    return (found is not None and int(found["version"]) == SIDECAR_VERSION
            and int(found["size"]) == _size(entry.path)
            and _size(sidecar_path(entry.path)) <= MAX_SIDECAR_BYTES)


_HEAD = re.compile(r'\{\s*"sidecar":\s*(?P<version>\d{1,9}),\s*"entry_bytes":\s*'
                   r'(?P<size>\d{1,19})\s*[,}]')


def write_sidecar(entry: Entry, result: Result) -> Path:
    """The entry's sidecar, from its result (already in memory when it is recorded)."""
    kept = kept_of(entry, result)
    document = {"sidecar": SIDECAR_VERSION, "entry_bytes": _size(entry.path),
                "scenario": kept.scenario, "commit": kept.commit,
                "figures": [[label, subject, figure.label,
                             "run" if subject == RING else "subject", value,
                             *kept.bands.get((label, subject, name), ()),
                             *kept.cpu.get((label, subject, name), ())]
                            for (label, subject, name), (figure, value)
                            in kept.figures.items()]}
    path = sidecar_path(entry.path)
    write_atomically(path, dumps_strict(document, f"the figures of {entry.path}"))
    return path


def _from_sidecar(entry: Entry) -> Kept | None:
    """The entry's figures from its sidecar, or None when it has none we can read."""
    path = sidecar_path(entry.path)
    if not _current(entry):
        return None
    try:
        raw = read_regular_file(path, MAX_SIDECAR_BYTES, "sidecar", error=ResultFormatError)
        document: Any = json.loads(raw)
        if not isinstance(document, dict) or document.get("sidecar") != SIDECAR_VERSION \
                or document.get("entry_bytes") != _size(entry.path):
            return None
        figures = {}
        bands = {}
        cpu = {}
        for label, subject, name, scope, value, *band in document["figures"]:
            if not all(isinstance(v, str) for v in (label, subject, name, scope)) or \
                    not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                            and math.isfinite(v) for v in (value, *band)) \
                    or len(band) not in (0, 2, 5):
                return None
            key = (label, subject, name)
            figures[key] = (_FIGURES[(scope, name)], float(value))
            if band:
                bands[key] = (float(band[0]), float(band[1]))
            if len(band) == 5:
                cpu[key] = (float(band[2]), float(band[3]), float(band[4]))
        scenario, commit = document["scenario"], document["commit"]
        if not isinstance(scenario, str) or not isinstance(commit, str):
            return None
    except (OSError, ResultFormatError, ValueError, KeyError, TypeError, RecursionError,
            OverflowError):
        return None
    return Kept(entry.run_id, scenario, commit, figures, bands, cpu)


def kept_figures(entry: Entry) -> Kept:
    """An entry's figures: from its sidecar, else from the entry (a ResultFormatError when
    it cannot be read), its sidecar then written for the next index."""
    kept = _from_sidecar(entry)
    if kept is not None:
        return kept
    result = load_result(entry.path)
    with contextlib.suppress(OSError, ValueError):  # a read-only history still gets its page
        write_sidecar(entry, result)
    return kept_of(entry, result)


@dataclass(frozen=True)
class IndexCost:
    """The history index's rebuild, bounded from the files' sizes before any work."""

    bytes: float
    seconds: float
    entries: int
    #: entries with no current sidecar, to be read
    unread: int = 0




def index_cost(history: Path) -> IndexCost:
    """What rewriting `history`'s index will take after a run: every sidecar held, and the
    largest entry without one read (one at a time). The run's own entry gets its sidecar
    from memory; it is counted as a sidecar the size of the largest there is."""
    sidecar_bytes, largest_sidecar, unread, unread_bytes, count = 0, 0, 0, 0, 0
    unread_entries = 0
    try:
        listed = [entry for machine in machines(history)
                  for entry in entries(history, machine)]
    except OSError:  # a folder it cannot list: the index will say so, having read nothing
        listed = []
    for entry in listed:
        count += 1
        sidecar = _size(sidecar_path(entry.path)) if _will_read(entry) else 0
        if sidecar:
            sidecar_bytes += sidecar
            largest_sidecar = max(largest_sidecar, sidecar)
        else:
            size = min(_size(entry.path), MAX_RESULT_BYTES)
            unread, unread_bytes = max(unread, size), unread_bytes + size
            unread_entries += 1
    held = (SIDECAR_HELD_FACTOR * (sidecar_bytes + largest_sidecar)
            + UNREAD_HELD_FACTOR * unread_bytes)
    read = RESULT_READ_FACTOR * unread + RESULT_READ_FIXED if unread else 0.0
    seconds = (SECONDS_PER_ENTRY * (count + 1)
               + SECONDS_PER_SIDECAR_BYTE * (sidecar_bytes + largest_sidecar)
               + SECONDS_PER_UNREAD_ENTRY * unread_entries
               + SECONDS_PER_RESULT_BYTE * unread_bytes)
    return IndexCost(INDEX_FIXED + held + read, seconds, count, unread_entries)
