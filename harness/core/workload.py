"""Key workloads: the keys a scenario routes through its ring.

Keys are named by `keys.name` (default "key-{i}"). `uniform` routes `count`
distinct keys; `zipf` draws `count` requests from `universe` distinct keys
with popularity proportional to rank**-exponent (seeded), the skew of real
cache traffic. Each algorithm hashes them its own way (`hash_keys`).

Keys can share a part that is hashed instead of the whole key, as a deployment co-locates
a customer's keys (Redis's `{hash tag}`, a tenant prefix): `parts` distinct parts fill the
template's `{part}` field (key i draws its part uniformly or by zipf popularity, seeded),
and `hash_part` says what every algorithm hashes: the whole key, its hash tag (Redis
Cluster's rule: the bytes between the first `{` and the first `}` after it, when that is
not empty) or the first group of a regular expression (the whole key when it does not
match). What is routed is then the part (`routed_names`): the keys of one part share a
server, and a popular part makes a hot one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.core.client_hashes import hash_tag
from harness.core.regex_cost import SECONDS_PER_REGEX_STEP, search_steps

DISTRIBUTIONS = ("uniform", "zipf")
#: what every algorithm hashes of a key
HASH_PARTS = ("whole", "tag", "regex")

#: bytes per key a run holds beyond its name's characters: the name as a str (49 bytes of
#: header) and as bytes (33), with a list's pointer to each; its hash, owners and
#: reference copies; a hash computed in Python (libketama's MD5: a digest and an int a key,
#: about 130 bytes with their lists); and a list of Python ints (40 bytes an item) that any
#: Python-level lookup makes, whose arenas the allocator keeps. About 240 counted; measured
#: on a fuzzed run of 600,000 keys through libketama and the tuples layout, which peaked
#: at 252 MiB (tests/test_estimate_bound.py)
BYTES_PER_KEY = 256
#: the str header BYTES_PER_KEY counts for a key's name, which a zipf request shares with
#: its distinct key (priced with the universe)
SHARED_STR_HEADER = 49
#: bytes per distinct key of a zipf universe beyond its name's characters: the str (49),
#: the list's pointers (16), its rank, popularity and permutation entries (24) and the
#: Python int of its id (28); measured 97 bytes a key (with 11-character names) as the
#: universe grew from 100,000 to 2,000,000 at 600,000 requests
BYTES_PER_DISTINCT_KEY = 120
#: a key's drawn part while names are made: its list item (8) and int object (28), and
#: numpy's int64 draw (8)
BYTES_PER_PART_DRAW = 48
#: a part drawn by zipf popularity: five float64 or int64 arrays over the parts
BYTES_PER_ZIPF_PART = 40
#: seconds a part drawn by zipf popularity costs: 39 s measured for 100,000,000 parts
#: (numpy's choice and the permutation), with a margin of about 2
SECONDS_PER_ZIPF_PART = 8e-7
#: a routed part beside its key: a str header (49) and the list's pointer to it (8)
BYTES_PER_ROUTED_NAME = 57


@dataclass(frozen=True)
class KeysSpec:
    count: int = 200_000
    name: str = "key-{i}"
    distribution: str = "uniform"
    #: zipf only: popularity of the key of rank r is proportional to r**-zipf_exponent
    zipf_exponent: float = 1.0
    #: zipf only: number of distinct keys requests are drawn from
    universe: int = 100_000
    seed: int = 1
    #: distinct parts filling the template's `{part}` field (0: the template has none)
    parts: int = 0
    #: how key i's part is drawn: "uniform", or "zipf" with `part_exponent`
    part_distribution: str = "uniform"
    part_exponent: float = 1.0
    #: what every algorithm hashes: "whole", "tag" or "regex"
    hash_part: str = "whole"
    #: hash_part = "regex": a pattern with one group, the part hashed
    hash_part_regex: str = ""


def longest_name(keys: KeysSpec) -> int:
    """Characters of the longest key name: the template at the first and last key id, and
    at the first and last part (a template may pad a number to any width)."""
    fields = [{"i": i} | ({"part": p} if keys.parts else {})
              for i in (0, keys.count - 1)
              for p in ((0, keys.parts - 1) if keys.parts else (0,))]
    return max(len(keys.name.format(**f)) for f in fields)


def key_bytes(keys: KeysSpec) -> float:
    """What a run holds of its workload's names and hashes: every key name (the longest
    one's length, so a template such as "{i:>100000}" counts), and for zipf every distinct
    name plus the popularity, draw and permutation arrays over the universe."""
    longest = longest_name(keys)
    # The name as a str and again encoded to bytes while hashing: twice its length. A zipf
    # request is a reference to its distinct key's str, priced with the universe below: the
    # request itself holds only the encoded copy.
    uniform = keys.distribution == "uniform"
    per_name = BYTES_PER_KEY + (2 * longest if uniform else longest - SHARED_STR_HEADER)
    named = keys.count if uniform else keys.universe  # the ids whose names are made
    if keys.hash_part != "whole":
        # The routed part beside the name: one more str of at most the name's length.
        per_name += BYTES_PER_ROUTED_NAME + longest
    total = per_name * keys.count
    if keys.parts:
        # Each named id's part: a list item and its int object, while names are made.
        total += named * BYTES_PER_PART_DRAW
    if not uniform:
        # Each distinct key is named once and drawn from, never hashed or owned: its name
        # (a str), a list's pointer, and the popularity, draw and permutation arrays.
        total += keys.universe * (BYTES_PER_DISTINCT_KEY + longest)
    if keys.parts and keys.part_distribution == "zipf":
        # The parts' ranks, popularity, its normalised copy and cumulative sum (numpy's
        # choice), and their permutation: float64 or int64 each. They live only while the
        # parts are drawn, before any name is made (`key_parts` returns a list of the
        # parts and drops them), so the workload's peak is the larger of that moment and
        # the names', not their sum: summed, 3,000,000 parts behind 600,000 tagged keys
        # were estimated at 3.1x the run's measured peak.
        drawing = keys.parts * BYTES_PER_ZIPF_PART + named * BYTES_PER_PART_DRAW
        total = max(total, drawing)
    return float(total)


def _names(spec: KeysSpec, ids: list[int]) -> list[str]:
    """The names of these key ids, each with its part when the template has one."""
    if not spec.parts:
        return [spec.name.format(i=i) for i in ids]
    part_of = key_parts(spec, max(ids, default=0) + 1)
    return [spec.name.format(i=i, part=part_of[i]) for i in ids]


def key_parts(spec: KeysSpec, ids: int) -> list[int]:
    """The part of each key id below `ids`: uniform over `parts`, or by zipf popularity
    (rank**-part_exponent, the popular parts at random ids), from its own seeded stream so
    that adding parts leaves the keys' draw alone."""
    rng = np.random.default_rng([spec.seed, 0x9A27])
    if spec.part_distribution == "uniform":
        return rng.integers(0, spec.parts, size=ids).tolist()  # type: ignore[no-any-return]
    ranks = np.arange(1, spec.parts + 1, dtype=np.float64)
    popularity = ranks**-spec.part_exponent
    drawn = rng.choice(spec.parts, size=ids, p=popularity / popularity.sum())
    part_of_rank = rng.permutation(spec.parts)
    return part_of_rank[drawn].tolist()  # type: ignore[no-any-return]


def key_seconds(keys: KeysSpec) -> float:
    """Seconds of the workload's own work beyond naming the keys (which every run pays and
    the estimate leaves in its margins): drawing parts by zipf popularity, numpy's choice
    over every part; and searching every key with `hash_part_regex`, at the bound of its
    backtracking on the longest name (`regex_cost`)."""
    seconds = 0.0
    if keys.parts and keys.part_distribution == "zipf":
        seconds += SECONDS_PER_ZIPF_PART * keys.parts
    if keys.hash_part == "regex" and keys.hash_part_regex:
        seconds += (SECONDS_PER_REGEX_STEP * keys.count
                    * search_steps(keys.hash_part_regex, longest_name(keys)))
    return seconds


def key_seconds_why(keys: KeysSpec) -> str:
    """What `key_seconds` prices, in the estimate's words ("" when nothing)."""
    why = []
    if keys.parts and keys.part_distribution == "zipf":
        why.append("parts drawn by zipf (parts, part_distribution)")
    if keys.hash_part == "regex" and keys.hash_part_regex:
        why.append("every key searched by hash_part_regex at its backtracking bound on the "
                   "longest name")
    return "keys: " + " and ".join(why) if why else ""


def key_names(spec: KeysSpec) -> list[str]:
    """The workload's keys (requests, for zipf), in request order."""
    if spec.distribution == "uniform":
        return _names(spec, list(range(spec.count)))
    rng = np.random.default_rng(spec.seed)
    ranks = np.arange(1, spec.universe + 1, dtype=np.float64)
    popularity = ranks**-spec.zipf_exponent
    requests = rng.choice(spec.universe, size=spec.count, p=popularity / popularity.sum())
    # Which key holds which rank is itself random, so popular keys are not all low ids.
    key_of_rank = rng.permutation(spec.universe)
    distinct = _names(spec, key_of_rank.tolist())
    return [distinct[r] for r in requests.tolist()]


def hashed_part(spec: KeysSpec) -> Callable[[str], str]:
    """What an algorithm hashes of one key name, by `hash_part`."""
    if spec.hash_part == "tag":
        return hash_tag
    if spec.hash_part == "regex":
        pattern = re.compile(spec.hash_part_regex)

        def group(name: str) -> str:
            found = pattern.search(name)
            part = found.group(1) if found else None
            return name if part is None else part

        return group
    return str


def routed_names(spec: KeysSpec, names: list[str]) -> list[str]:
    """What the run routes for each key: the key, or the part of it that is hashed."""
    if spec.hash_part == "whole":
        return names
    part = hashed_part(spec)
    return [part(name) for name in names]
