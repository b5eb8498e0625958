"""The bucketed layout's tuning cache: one record per CPU, ring size class and C core,
used only if `measure` could have written it on this machine.

The cache is a JSON file in `tuning_cache_dir()`: `$RING_HARNESS_TUNING_CACHE`, else the
platform's user cache folder (platformdirs; on Linux `$XDG_CACHE_HOME/ring-harness`, else
`~/.cache/ring-harness`), never in the checkout. Anyone can write to it, and a tuning
read from it is timed and published as this machine's, so a record is read strictly
(`read_record`): every field of the type and within the bounds `measure` writes, every
trial a tuning of the grid (`stage_one`, `stage_two`, `stage_three`) in the order the
stages try them, each stage's first trial at a paired ratio of exactly 1, the chosen trial
the one the recorded ratios choose, its figures finite and positive, and its own CPU, size
class and C core those of the key it is filed under and of this machine. A file that
cannot be read whole (not a regular file, too large, not UTF-8 JSON, another format) and
a record with anything else wrong are refused: the calibration is measured again and
the record rewritten, and the result's calibration says the record was refused and why
(`Calibration.cache_refused`). The cache only saves time; nothing in it can reach a
result but a tuning this machine measured.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import platformdirs

from harness.core.atomic import write_atomically
from harness.core.calibration import Calibration, Trial
from harness.core.errors import HarnessError
from harness.core.machine import cpu_model
from harness.core.native import bucketed as c_bucketed
from harness.core.safe_read import read_regular_file
from harness.recipes.layouts.bucketed_tuning import (
    NEXT_STAGES,
    LookupMany,
    c_core_digest,
    measure,
    size_class,
    stage_one,
    winner,
)

#: where the cache lives when the environment does not say
CACHE_VARIABLE = "RING_HARNESS_TUNING_CACHE"
CACHE_FILE = "bucketed-tuning.json"
#: the largest cache file read: a few KiB an entry, one entry per CPU and size class
CACHE_LIMIT_BYTES = 4 * 2**20
#: bumped when the cache file's shape changes (older files are then measured again)
CACHE_FORMAT = 3
#: bounds of what `measure` records: the bucketed ring holds 1 to 2**32 - 1 entries; a
#: calibration routes at most 2**32 keys a round in at most 10,000 rounds
MAX_ENTRIES = 2**32 - 1
MAX_KEYS = 2**32
MAX_ROUNDS = 10_000
#: a key routed slower than a millisecond, or a candidate 1,000 times slower or faster
#: than its stage's first, is no timing of this lookup (it takes 2 to 200 ns)
MAX_NS = 1e6
MAX_RATIO = 1e3
#: the longest text field (a CPU's name, a C core's digest, a time)
TEXT_LIMIT = 512
#: the fields of a record: a calibration's, but for the note of this run
RECORD_FIELDS = frozenset(f.name for f in fields(Calibration)) - {"cache_refused"}
TRIAL_FIELDS = frozenset(f.name for f in fields(Trial))


class RecordRefused(Exception):
    """A cache file or record that cannot be trusted, and why (one phrase)."""


@dataclass(frozen=True)
class CacheKey:
    """What a record is filed under: the CPU, the ring size class and the C core."""

    cpu: str
    size_class: int
    c_core: str

    @property
    def text(self) -> str:
        return f"{self.cpu} | 2**{self.size_class} | {self.c_core}"

    @classmethod
    def parse(cls, text: str) -> CacheKey | None:
        cpu, _, rest = text.rpartition(" | 2**")
        size, separator, core = rest.partition(" | ")
        if not (cpu and separator and size.isdigit() and size.isascii()):
            return None
        return cls(cpu, int(size), core)


def this_machine(entries: int) -> CacheKey:
    """The key of this CPU, this ring's size class and this build of the C core."""
    return CacheKey(cpu_model(), size_class(entries), c_core_digest())


def tuning_cache_dir() -> tuple[Path, str]:
    """The folder of the tuning cache, and why, in words."""
    explicit = os.environ.get(CACHE_VARIABLE)
    if explicit:
        return Path(explicit), f"${CACHE_VARIABLE} names it"
    return platformdirs.user_cache_path("ring-harness", appauthor=False), "the user cache folder"


def _shown(value: object) -> str:
    """A value as a refusal quotes it: ASCII, at most 40 characters."""
    text = ascii(value) if not isinstance(value, int) or abs(value) < 2**64 \
        else f"an integer of {value.bit_length()} bits"
    return text if len(text) <= 40 else text[:37] + "..."


def _object(value: object, names: frozenset[str], what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordRefused(f"{what} must be an object (got {type(value).__name__})")
    if missing := sorted(names - value.keys()):
        raise RecordRefused(f"{what} has no {', '.join(missing)}")
    if extra := sorted(value.keys() - names):
        raise RecordRefused(f"{what} has unknown fields {_shown(', '.join(extra))}")
    return value


def _integer(record: dict[str, Any], name: str, low: int, high: int, what: str) -> int:
    value = record[name]
    if type(value) is not int or not low <= value <= high:
        raise RecordRefused(f"{what}{name} must be an integer from {low} to {high} "
                            f"(got {_shown(value)})")
    return value


def _one_of(record: dict[str, Any], name: str, legal: tuple[int, ...], what: str) -> int:
    value = record[name]
    if type(value) is not int or value not in legal:
        raise RecordRefused(f"{what}{name} must be one of {', '.join(map(str, sorted(legal)))} "
                            f"(got {_shown(value)})")
    return value


def _figure(record: dict[str, Any], name: str, high: float, what: str) -> float:
    value = record[name]
    if type(value) not in (int, float) or not (math.isfinite(value) and 0 < value <= high):
        raise RecordRefused(f"{what}{name} must be a finite number above 0 and at most "
                            f"{high:g} (got {_shown(value)})")
    return float(value)


def _text(record: dict[str, Any], name: str) -> str:
    value = record[name]
    if not isinstance(value, str) or not 0 < len(value) <= TEXT_LIMIT:
        raise RecordRefused(f"{name} must be a text of 1 to {TEXT_LIMIT} characters "
                            f"(got {_shown(value)})")
    return value


def _trial(value: object, index: int) -> Trial:
    what = f"trials[{index}]."
    record = _object(value, TRIAL_FIELDS, f"trials[{index}]")
    median, low, high = (_figure(record, name, MAX_NS, what)
                         for name in ("median_ns", "min_ns", "max_ns"))
    if not low <= median <= high:
        raise RecordRefused(f"{what}min_ns, median_ns and max_ns must be in order "
                            f"(got {low:g}, {median:g}, {high:g})")
    try:
        return Trial(_integer(record, "stage", 1, 1 + len(NEXT_STAGES), what),
                     _one_of(record, "window", c_bucketed.WINDOWS, what),
                     _integer(record, "depth", 1, c_bucketed.MAX_DEPTH, what),
                     _integer(record, "offsets_ahead", 1, c_bucketed.MAX_OFFSETS_AHEAD, what),
                     median, low, high,
                     _figure(record, "paired_ratio", MAX_RATIO, what),
                     _one_of(record, "align", c_bucketed.ALIGNMENTS, what))
    except ValueError as exc:  # a combination the C core does not run
        raise RecordRefused(f"{what[:-1]}: {exc}") from None


def _check_stages(trials: list[Trial], entries: int, chosen: int) -> None:
    """The trials are the candidates `measure` tries, stage by stage from each stage's
    winner by the recorded ratios, and `chosen` is the last stage's winner."""
    candidates, stage, first, best = stage_one(c_bucketed.default_tuning(entries)), 1, 0, 0
    stages = iter(NEXT_STAGES)
    while candidates:
        tried = trials[first:first + len(candidates)]
        if [t.tuning for t in tried] != candidates or any(t.stage != stage for t in tried):
            raise RecordRefused(f"stage {stage}'s trials are not the candidates it tries "
                                f"from stage {stage - 1}'s choice" if stage > 1 else
                                "stage 1's trials are not the candidates it tries")
        if tried[0].paired_ratio != 1:
            raise RecordRefused(f"stage {stage}'s first trial must have a paired ratio of 1 "
                                f"(got {tried[0].paired_ratio:g})")
        best = winner(trials[:first + len(candidates)], first)
        first += len(candidates)
        stage, next_stage = next(stages, (0, None))
        candidates = next_stage(trials[best].tuning) if next_stage else []
    if first != len(trials):
        raise RecordRefused(f"it holds {len(trials) - first} trials past the last stage")
    if chosen != best:
        raise RecordRefused(f"chosen must be the last stage's winner, trial {best} "
                            f"(got {chosen})")


def read_record(value: object, key: CacheKey) -> Calibration:
    """The calibration a record filed under `key` holds, if every field is what `measure`
    writes and names `key`'s CPU, size class and C core; else RecordRefused saying why."""
    record = _object(value, RECORD_FIELDS, "the record")
    trials = record["trials"]
    if not isinstance(trials, list) or not trials:
        raise RecordRefused(f"trials must be a list of trials (got {_shown(trials)})")
    parsed = [_trial(trial, index) for index, trial in enumerate(trials)]
    entries = _integer(record, "entries", 1, MAX_ENTRIES, "")
    for name, own, filed in (("cpu", _text(record, "cpu"), key.cpu),
                             ("size_class", _integer(record, "size_class", 1, 64, ""),
                              key.size_class),
                             ("c_core", _text(record, "c_core"), key.c_core)):
        if own != filed:
            raise RecordRefused(f"its {name} {_shown(own)} is not the {_shown(filed)} it is "
                                "filed under")
    if size_class(entries) != key.size_class:
        raise RecordRefused(f"its {entries} entries are not of size class 2**{key.size_class}")
    try:
        datetime.fromisoformat(_text(record, "measured_at"))
    except ValueError:
        raise RecordRefused(f"measured_at must be an ISO 8601 time "
                            f"(got {_shown(record['measured_at'])})") from None
    if record["source"] != "measured":
        raise RecordRefused(f"source must be 'measured' (got {_shown(record['source'])})")
    chosen = _integer(record, "chosen", 0, len(parsed) - 1, "")
    _integer(record, "default", 0, 0, "")  # stage one's first trial, always
    _check_stages(parsed, entries, chosen)
    try:
        return Calibration(
            cpu=key.cpu, entries=entries, size_class=key.size_class, c_core=key.c_core,
            measured_at=record["measured_at"], source="cached",
            keys=_integer(record, "keys", 1, MAX_KEYS, ""),
            rounds=_integer(record, "rounds", 1, MAX_ROUNDS, ""),
            trials=parsed, chosen=chosen, default=0)
    except ValueError as exc:
        raise RecordRefused(str(exc)) from None


def _read_entries(path: Path) -> dict[str, Any]:
    """The cache's records by key: none when the file is missing; RecordRefused when it is
    not a regular file of at most CACHE_LIMIT_BYTES (a FIFO would block a plain read,
    /dev/zero fill memory), not UTF-8 JSON or of another format."""
    if not os.path.lexists(path):
        return {}
    try:
        text = read_regular_file(path, CACHE_LIMIT_BYTES, "tuning cache", RecordRefused)
        document = json.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise RecordRefused("the cache file is not UTF-8") from None
    except (ValueError, RecursionError):
        raise RecordRefused("the cache file is not JSON") from None
    if not isinstance(document, dict) or document.get("format") != CACHE_FORMAT:
        raise RecordRefused(f"the cache file is not of format {CACHE_FORMAT}")
    entries = document.get("entries")
    if not isinstance(entries, dict):
        raise RecordRefused("the cache file's entries are not an object")
    return entries


def cached(key: CacheKey) -> tuple[Calibration | None, str | None]:
    """The cached calibration filed under `key`, or why the cache's record (or file) was
    refused; (None, None) when there is none."""
    try:
        record = _read_entries(tuning_cache_dir()[0] / CACHE_FILE).get(key.text)
        return (read_record(record, key), None) if record is not None else (None, None)
    except (RecordRefused, HarnessError) as exc:
        return None, str(exc).removeprefix(str(tuning_cache_dir()[0] / CACHE_FILE) + ": ")


def _sound(entries: dict[str, Any]) -> dict[str, Any]:
    """The records that read under their own keys (another machine's too): a record
    refused is not written back."""
    kept: dict[str, Any] = {}
    for text, record in entries.items():
        key = CacheKey.parse(text)
        with contextlib.suppress(RecordRefused):
            if key is not None and read_record(record, key):
                kept[text] = record
    return kept


def store(calibration: Calibration) -> None:
    """File a measured calibration under its key, beside the other sound records."""
    path = tuning_cache_dir()[0] / CACHE_FILE
    try:
        entries = _sound(_read_entries(path))
    except (RecordRefused, HarnessError):
        entries = {}
    key = CacheKey(calibration.cpu, calibration.size_class, calibration.c_core)
    record = {**asdict(calibration), "source": "measured"}
    del record["cache_refused"]
    entries[key.text] = record
    # A read-only or full cache folder, or a directory where the file goes, only costs
    # measuring again next time.
    with contextlib.suppress(OSError):
        write_atomically(path, json.dumps({"format": CACHE_FORMAT, "entries": entries},
                                          indent=1, sort_keys=True, allow_nan=False))


def calibrate(lookup_many: LookupMany, entries: int) -> Calibration:
    """The cached choice for this machine and size class, else one measured now (and
    cached), saying why a cached record was refused if one was."""
    found, refused = cached(this_machine(entries))
    if found is not None:
        return found
    calibration = measure(lookup_many, entries)
    store(calibration)
    if refused is None:
        return calibration
    return Calibration(**{**asdict(calibration), "trials": calibration.trials,
                          "cache_refused": refused})
