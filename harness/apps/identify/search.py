"""Which recipe routes like the observations: the shipped clients first, then the space of
client traits, pruned.

Order of the search, cheapest and likeliest first:

1. **Shipped recipes**: every shipped construction and algorithm at its defaults (and each
   construction's modes), and the real clients of `known_clients.OTHER_CLIENTS`, each
   routing every key.
2. **Hash mod N** (`modulo`): every key hash, shift and mask; a key's hash is computed once
   for all of them, so this family costs a numpy pass each.
3. **Rendezvous** (`rendezvous-score`, fleets of weight 1): every score hash and name
   template, first on a sample of keys.
4. **Rings of client traits** (`points`): the key hashes are ranked by how much ring
   structure they show in the observations (sorted by a ring's key hash, the observed
   owners come in runs, one per arc; sorted by any other hash they change at random), and
   tried in that order. For one hash, every naming scheme (template, first point, points per
   digest, server form, chaining) is hashed once, for the most names any count asks; each
   count rule (points per weight x rounding) takes a prefix of those points; each ring is
   tried with every tie rule, on a sample of keys first (`SAMPLE_KEYS`), and only a ring
   that routes the sample as well as the best so far routes every key. The search of rings
   stops after the first hash with a ring that reproduces every key.

5. **Other key hashes**: when no ring reproduces every key, the best three rings again with
   every other key hash of their width (a client may hash keys otherwise than points).

What it does not search: ring sizes other than the hash's width, key truncation, and
rendezvous seeds.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.apps.identify.observations import Observations
from harness.core.cost import Cost
from harness.core.errors import HarnessError, ScenarioError
from harness.core.servers import Server
from harness.core.trait_hashes import DIGEST_HASHES, TRAIT_HASHES, digest_words
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.constructions import CONSTRUCTIONS
from harness.recipes.constructions.client_traits import WEIGHT_ROUNDINGS, ClientTraits
from harness.recipes.constructions.known_clients import OTHER_CLIENTS

#: keys a candidate routes before it may route them all
SAMPLE_KEYS = 96
#: candidates kept, with their owners, for the ranking and the explanation of a partial match
KEPT = 12
#: point-name templates tried, the common ones first
TEMPLATES = ("{server}-{j}", "{server}:{j}", "{server}{j}", "{server}_{j}", "{server}#{j}",
             "{server} {j}", "{j}-{server}", "{j}:{server}", "{j}{server}", "/{server}-{j}")
#: points (or digests) per unit of weight tried
PER_WEIGHT = (1, 2, 3, 4, 5, 8, 10, 16, 20, 25, 32, 40, 50, 64, 80, 100, 120, 128, 150, 160,
              200, 250, 256, 300, 320)
RENDEZVOUS_TEMPLATES = ("{server}-{key}", "{server}{key}", "{key}-{server}", "{key}{server}",
                        "{server}:{key}", "{key}:{server}")
SHIFTS = (0, 8, 16, 32)
MASKS = (0, 15, 16, 31, 32)
TIES = ("at-or-after", "after", "at-or-before")
#: measured on this kind of machine (2 shared cores), each with a margin of about 2: a point
#: name formatted and hashed (sha1 through hashlib the slowest, 2.2 us), a ring of P points
#: sorted and looked up three ways on the sample, a rendezvous score in Python
SECONDS_PER_NAME = 4e-6
SECONDS_PER_RING_POINT = 0.15e-6
SECONDS_PER_RING = 150e-6
SECONDS_PER_SCORE = 12e-6
SECONDS_PER_KEY_HASH = 12e-6


@dataclass(frozen=True)
class Candidate:
    """A recipe: its algorithm and parameters, where it comes from, and its name."""

    label: str
    origin: str
    algorithm: str
    params: dict[str, Any]


@dataclass
class Found:
    candidate: Candidate
    agreement: float
    owners: npt.NDArray[np.int64]


@dataclass
class Search:
    """The outcome: candidates ranked by agreement, what was tried and how long it took."""

    ranked: list[Found] = field(default_factory=list)
    tried: int = 0
    seconds: float = 0.0
    stopped_after: str = ""

    @property
    def matches(self) -> list[Found]:
        return [f for f in self.ranked if f.agreement == 1.0]


@dataclass(frozen=True)
class Space:
    """The search space, declared before any work: counts per family and the cost."""

    shipped: int
    modulo: int
    rendezvous: int
    ring_schemes: int
    ring_counts: int
    cost: Cost

    @property
    def rings(self) -> int:
        """Rings tried at most: each with every tie rule and up to two key hashes."""
        return self.ring_schemes * self.ring_counts * len(TIES) * 2

    @property
    def total(self) -> int:
        return self.shipped + self.modulo + self.rendezvous + self.rings


# -- the candidates ------------------------------------------------------------------------

def shipped_candidates(servers: Sequence[Server]) -> list[Candidate]:
    """Every shipped recipe at its defaults (constructions with each mode), and the known
    clients; those that refuse the fleet are left out."""
    out: list[Candidate] = []
    for name, cls in CONSTRUCTIONS.items():
        if name in ("points", "allocated"):
            continue
        choices: list[dict[str, Any]] = [{}]
        for param in cls.params:
            if param.kind == "choice" and isinstance(param.choices, tuple | list):
                choices = [{**c, param.name: v} for c in choices for v in param.choices]
        for params in choices:
            label = name + "".join(f" {k}={v}" for k, v in params.items())
            out.append(Candidate(label, "shipped", "ring", {"construction": name, **params}))
    for hash_name in ("blake2b-32", "md5-32", "crc32", "fnv1a-fmix32"):
        out.append(Candidate(f"points {hash_name}", "shipped", "ring",
                             {"construction": "points", "hash": hash_name}))
    for name in ALGORITHMS:
        if name not in ("ring", "bounded-load", "modulo", "rendezvous-score"):
            out.append(Candidate(name, "shipped", name, {}))
    for name, (_, algorithm, params) in OTHER_CLIENTS.items():
        out.append(Candidate(name, "known client", algorithm, dict(params)))
    return [c for c in out if _refusal(c, servers) is None]


def _refusal(candidate: Candidate, servers: Sequence[Server]) -> str | None:
    try:
        algorithm = get_algorithm(candidate.algorithm)
        params = algorithm.checked_params(servers, dict(candidate.params)) if hasattr(
            algorithm, "checked_params") else dict(candidate.params)
        return algorithm.check_servers(servers, params)
    except (ScenarioError, HarnessError) as exc:
        return str(exc)


def _ascii(observations: Observations) -> bool:
    return all(k.isascii() for k in observations.keys) and all(
        s.name.isascii() for s in observations.servers)


def encodings(observations: Observations) -> tuple[str, ...]:
    """Key encodings that can differ here: only non-ASCII text tells them apart."""
    return ("utf-8",) if _ascii(observations) else ("utf-8", "low-8-bits")


def server_forms(servers: Sequence[Server]) -> tuple[str, ...]:
    if any(s.name.endswith(":11211") for s in servers):
        return ("as-written", "without-port-11211")
    return ("as-written",)


def name_schemes(observations: Observations) -> list[dict[str, Any]]:
    """Every naming scheme of a ring tried, grouped by hash (in `TRAIT_HASHES` order)."""
    out = []
    for hash_name in TRAIT_HASHES:
        digests = range(1, 1 + min(4, DIGEST_HASHES[hash_name].words)) if (
            hash_name in DIGEST_HASHES) else range(1, 2)
        for encoding in encodings(observations):
            for form in server_forms(observations.servers):
                for per_digest in digests:
                    for template in TEMPLATES:
                        for first in (0, 1):
                            out.append({"hash": hash_name, "key_encoding": encoding,
                                        "server_form": form, "points_per_digest": per_digest,
                                        "point_name": template, "first_point": first})
            for form in ("host-nul-port", "as-written"):
                out.append({"hash": hash_name, "key_encoding": encoding, "chain": "previous",
                            "server_form": form})
    return out


def count_rules(servers: Sequence[Server], per_digest: int) -> dict[tuple[int, ...],
                                                                     list[dict[str, Any]]]:
    """Each distinct vector of names per server, with the (P, rounding) pairs that give it."""
    rules: dict[tuple[int, ...], list[dict[str, Any]]] = {}
    for per in PER_WEIGHT:
        for rounding in WEIGHT_ROUNDINGS:
            traits = ClientTraits(points_per_weight=per, weight_rounding=rounding,
                                  points_per_digest=per_digest)
            counts = tuple(traits.name_counts(servers))
            if sum(counts) == 0:
                continue
            rules.setdefault(counts, []).append({"points_per_weight": per,
                                                 "weight_rounding": rounding})
    return rules


def modulo_candidates(observations: Observations) -> list[Candidate]:
    servers = observations.servers
    weights = ["none"] if all(s.weight == 1 for s in servers) else []
    if all(s.weight == int(s.weight) for s in servers):
        weights.append("repeat")
    out = []
    for hash_name, function in TRAIT_HASHES.items():
        for encoding in encodings(observations):
            for shift in SHIFTS:
                if shift >= function.bits:
                    continue
                for mask in MASKS:
                    if mask and mask >= function.bits - shift:
                        continue
                    for weight in weights:
                        out.append(Candidate(f"modulo {hash_name}", "traits", "modulo", {
                            "key_hash": hash_name, "shift": shift, "mask_bits": mask,
                            "weights": weight, "key_encoding": encoding}))
    return out


def rendezvous_candidates(observations: Observations) -> list[Candidate]:
    if any(s.weight != 1 for s in observations.servers):
        return []
    out = []
    for hash_name, function in TRAIT_HASHES.items():
        for encoding in encodings(observations):
            for template in RENDEZVOUS_TEMPLATES:
                out.append(Candidate(f"rendezvous {hash_name}", "traits", "rendezvous-score",
                                     {"hash": hash_name, "name_template": template,
                                      "key_encoding": encoding}))
            if function.bits == 64:
                out.append(Candidate(f"rendezvous xorshift {hash_name}", "traits",
                                     "rendezvous-score",
                                     {"score": "xorshift-mult64", "hash": hash_name,
                                      "tie": "first", "key_encoding": encoding}))
    return out


# -- the space and its cost, before any work ----------------------------------------------

def declare(observations: Observations) -> Space:
    """The search space and an upper bound of its seconds and bytes."""
    servers = observations.servers
    keys = len(observations.keys)
    schemes = name_schemes(observations)
    counts = max(len(count_rules(servers, 1)), 1)
    most_names = max(max(c) for c in count_rules(servers, 1))
    shipped = shipped_candidates(servers)
    modulo = modulo_candidates(observations)
    rendezvous = rendezvous_candidates(observations)
    points_per_ring = sum(max(c) for c in [[most_names]]) * len(servers)
    names = len(schemes) * most_names * len(servers)
    rings = len(schemes) * counts * 2  # the points' key hash, and the most structured
    seconds = (
        len(shipped) * keys * SECONDS_PER_KEY_HASH * 2
        + len(TRAIT_HASHES) * len(encodings(observations)) * keys * SECONDS_PER_KEY_HASH
        + len(rendezvous) * len(servers) * (SAMPLE_KEYS + keys / 10) * SECONDS_PER_SCORE
        + names * SECONDS_PER_NAME
        + rings * (SECONDS_PER_RING + points_per_ring * SECONDS_PER_RING_POINT))
    # Held: each key hash of every key (8 bytes), the kept candidates' owners and the
    # sample (8 bytes each), the keys. At work: one naming scheme's points (4 a digest at
    # most, 8 bytes each), its names (about 100 bytes each while formatted) and one ring's
    # sort (positions, owners, order and their sorted copies: about 50 bytes a point);
    # and a fixed MiB for the shipped recipes' structures (maglev's table the largest).
    hash_count = len(TRAIT_HASHES) * len(encodings(observations))
    held = float(keys * 8 * (hash_count + KEPT + 2) + keys * 80)
    scheme_names = most_names * len(servers)
    peak = held + float(scheme_names * (4 * 8 + 100) + scheme_names * 4 * 50) + 2**20
    why = f"{keys:,} observed keys on {len(servers):,} servers"
    cost = Cost(held=held, peak=peak, seconds=seconds, why=why, why_seconds=(
        f"{len(schemes):,} ring naming schemes x {counts:,} count rules on {why}"))
    return Space(len(shipped), len(modulo), len(rendezvous), len(schemes), counts, cost)


# -- the search -------------------------------------------------------------------------------

class Ranking:
    """The best candidates so far, with their owners (for the explanation)."""

    def __init__(self, observed: npt.NDArray[np.int64]) -> None:
        self.observed = observed
        self.sample = observed[:SAMPLE_KEYS]
        self.found: list[Found] = []
        self.tried = 0

    @property
    def floor(self) -> float:
        """The agreement a candidate must reach on the sample to route every key."""
        if self.found and self.found[0].agreement == 1.0:
            return 1.0  # only another exact match is worth routing every key
        if len(self.found) < KEPT:
            return 0.0
        return self.found[-1].agreement - 0.05

    def offer(self, candidate: Candidate, route: Callable[[slice], npt.NDArray[np.int64]]
              ) -> Found | None:
        """Route the sample; if it does as well as the kept ones, every key."""
        self.tried += 1
        sampled = route(slice(0, SAMPLE_KEYS))
        if float(np.mean(sampled == self.sample)) < self.floor:
            return None
        owners = route(slice(None))
        found = Found(candidate, float(np.mean(owners == self.observed)), owners)
        self.found.append(found)
        self.found.sort(key=lambda f: -f.agreement)
        del self.found[KEPT:]
        return found


def run_search(observations: Observations, progress: Callable[[str], None] | None = None
               ) -> Search:
    """The search of the module doc."""
    start = time.perf_counter()
    observed = np.array(observations.owners, dtype=np.int64)
    ranking = Ranking(observed)
    keys = list(observations.keys)
    servers = list(observations.servers)
    say = progress or (lambda text: None)

    say("shipped recipes and known clients")
    for candidate in shipped_candidates(servers):
        algorithm = get_algorithm(candidate.algorithm).build(servers, **candidate.params)
        ranking.offer(candidate, _fixed(algorithm.route(keys).astype(np.int64)))
    say("hash mod N")
    key_hashes = _KeyHashes(keys)
    for candidate in modulo_candidates(observations):
        ranking.offer(candidate, _modulo_route(candidate, key_hashes, servers))
    say("rendezvous")
    for candidate in rendezvous_candidates(observations):
        ranking.offer(candidate, _rendezvous_route(candidate, keys, servers))
    stopped = ""
    if not any(f.agreement == 1.0 for f in ranking.found):
        stopped = _search_rings(observations, ranking, key_hashes, say)
    if not any(f.agreement == 1.0 for f in ranking.found):
        say("other key hashes for the best rings")
        _search_key_hashes(observations, ranking)
    return Search(ranking.found, ranking.tried, time.perf_counter() - start, stopped)


def _fixed(owners: npt.NDArray[np.int64]) -> Callable[[slice], npt.NDArray[np.int64]]:
    return lambda part: owners[part]


class _KeyHashes:
    """Each key hash of every key, computed once per (hash, encoding)."""

    def __init__(self, keys: list[bytes]) -> None:
        self.keys = keys
        self._cache: dict[tuple[str, str], npt.NDArray[np.unsignedinteger]] = {}

    def get(self, hash_name: str, encoding: str) -> npt.NDArray[np.unsignedinteger]:
        if (hash_name, encoding) not in self._cache:
            traits = ClientTraits(hash=hash_name, key_encoding=encoding)
            self._cache[hash_name, encoding] = traits.key_hashes(self.keys)
        return self._cache[hash_name, encoding]


def _modulo_route(candidate: Candidate, key_hashes: _KeyHashes, servers: Sequence[Server]
                  ) -> Callable[[slice], npt.NDArray[np.int64]]:
    p = candidate.params
    hashes = key_hashes.get(p["key_hash"], p["key_encoding"]).astype(np.uint64)
    buckets = np.repeat(np.arange(len(servers)), [int(s.weight) if p["weights"] == "repeat"
                                                  else 1 for s in servers])
    values = hashes >> np.uint64(p["shift"])
    if p["mask_bits"]:
        values &= np.uint64((1 << p["mask_bits"]) - 1)
    owners = buckets[(values % np.uint64(len(buckets))).astype(np.int64)].astype(np.int64)
    return lambda part: owners[part]


def _rendezvous_route(candidate: Candidate, keys: list[bytes], servers: Sequence[Server]
                      ) -> Callable[[slice], npt.NDArray[np.int64]]:
    algorithm = get_algorithm("rendezvous-score").build(servers, **candidate.params)
    owner_of = algorithm.owner_of_key  # type: ignore[attr-defined]

    def route(part: slice) -> npt.NDArray[np.int64]:
        return np.array([owner_of(k) for k in keys[part]], dtype=np.int64)
    return route


def structure(observed: npt.NDArray[np.int64], hashes: npt.NDArray[np.unsignedinteger]
              ) -> float:
    """Owner changes along the keys sorted by this hash, against changes at random: a ring
    hashed by it shows runs (below 1), any other hash none (about 1)."""
    order = np.argsort(hashes, kind="stable")
    changes = int(np.count_nonzero(np.diff(observed[order])))
    shares = np.bincount(observed) / len(observed)
    expected = (len(observed) - 1) * (1.0 - float(np.sum(shares**2)))
    return changes / expected if expected > 0 else 1.0


def _search_rings(observations: Observations, ranking: Ranking, key_hashes: _KeyHashes,
                  say: Callable[[str], None]) -> str:
    servers = list(observations.servers)
    schemes = name_schemes(observations)
    by_hash: dict[str, list[dict[str, Any]]] = {}
    for scheme in schemes:
        by_hash.setdefault(scheme["hash"], []).append(scheme)
    scores = {h: min(structure(ranking.observed, key_hashes.get(h, e))
                     for e in encodings(observations)) for h in by_hash}
    order = sorted(by_hash, key=lambda h: scores[h])
    # The key hash that shows the most ring structure, when it shows clearly more than the
    # others: tried as the key hash of rings hashed otherwise too (twemproxy's kind).
    structured = order[0] if len(order) > 1 and \
        scores[order[1]] - scores[order[0]] > STRUCTURE_GAP else None
    rules = {d: count_rules(servers, d) for d in (1, 2, 3, 4)}
    for hash_name in order:
        say(f"rings hashed by {hash_name}")
        for scheme in by_hash[hash_name]:
            _try_scheme(scheme, servers, rules[scheme.get("points_per_digest", 1)],
                        ranking, key_hashes, structured)
        if any(f.agreement == 1.0 for f in ranking.found):
            return hash_name
    return ""


#: how much less structure than the next a key hash must show to be taken for the ring's
#: (`structure`): on 2,000 keys the ring's key hash measured 0.2-0.4 at 3-7 servers and
#: 0.89 at 98 (npm hashring), every other hash 0.98-1.03 (one standard deviation of a
#: random order is about 0.01 there)
STRUCTURE_GAP = 0.05
#: ring candidates whose key hash is varied when no ring reproduces every key
KEY_HASH_RINGS = 3


def _search_key_hashes(observations: Observations, ranking: Ranking) -> None:
    """The best rings of traits again, each with every other key hash of its width (a
    client may hash keys otherwise than points, as twemproxy does)."""
    servers = list(observations.servers)
    keys = list(observations.keys)
    rings = [f.candidate for f in ranking.found
             if f.candidate.origin == "traits" and f.candidate.algorithm == "ring"]
    for candidate in rings[:KEY_HASH_RINGS]:
        bits = TRAIT_HASHES[candidate.params["hash"]].bits
        for key_hash, function in TRAIT_HASHES.items():
            if function.bits != bits or key_hash == candidate.params["hash"]:
                continue
            params = {**candidate.params, "key_hash": key_hash}
            algorithm = get_algorithm("ring").build(servers, **params)
            ranking.offer(Candidate(f"{candidate.label}, key_hash {key_hash}", "traits",
                                    "ring", params),
                          _fixed(algorithm.route(keys).astype(np.int64)))


def _try_scheme(scheme: dict[str, Any], servers: list[Server],
                rules: dict[tuple[int, ...], list[dict[str, Any]]], ranking: Ranking,
                key_hashes: _KeyHashes, structured: str | None = None) -> None:
    chain = scheme.get("chain") == "previous"
    if chain:  # a chain: one count rule a weight (nginx: points_per_weight x weight)
        rules = {counts: r for counts, r in rules.items()
                 if any(x["weight_rounding"] == "half-even" for x in r)}
    most = max(max(counts) for counts in rules)
    traits = ClientTraits.from_params({**scheme, "points_per_weight": 1})
    per_digest = traits.points_per_digest
    points = [_server_points(traits, s, most) for s in servers]
    by_key_hash = {"same": key_hashes.get(traits.hash, traits.key_encoding)}
    if structured not in (None, traits.hash) and \
            TRAIT_HASHES[str(structured)].bits == traits.bits:
        by_key_hash[str(structured)] = key_hashes.get(str(structured), traits.key_encoding)
    for counts, rule in rules.items():
        positions = np.concatenate([p[:c * per_digest] for p, c in zip(points, counts,
                                                                      strict=True)])
        owners = np.repeat(np.arange(len(servers), dtype=np.int64),
                           [c * per_digest for c in counts])
        for winner in ("first", "last"):
            ring = _ring(positions, owners, winner)
            if ring is None:
                continue
            for (key_hash, hashes), tie in itertools.product(by_key_hash.items(), TIES):
                params = {**scheme, **rule[0], "tie": tie, "collision_winner": winner,
                          "key_hash": key_hash}
                stated = _set_traits(params)
                label = "ring " + ", ".join(f"{k} {v}" for k, v in stated.items())
                candidate = Candidate(label, "traits", "ring",
                                      {"construction": "points", **stated})
                ranking.offer(candidate, _ring_route(ring, hashes, tie))
            if ring[2] == 0:
                break  # no equal points: the collision winner cannot matter


def _server_points(traits: ClientTraits, server: Server, count: int
                   ) -> npt.NDArray[np.unsignedinteger]:
    if traits.chain == "previous" or traits.points_per_digest == 1:
        return traits.server_points(server, count)
    return digest_words(traits.hash, traits.names_of(server, count),
                        traits.points_per_digest).reshape(-1)


def _ring(positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.int64],
          winner: str) -> tuple[npt.NDArray[np.unsignedinteger], npt.NDArray[np.int64], int] | None:
    if len(positions) == 0:
        return None
    order = np.lexsort((owners if winner == "first" else -owners, positions))
    sorted_positions, sorted_owners = positions[order], owners[order]
    keep = np.ones(len(order), dtype=bool)
    keep[1:] = sorted_positions[1:] != sorted_positions[:-1]
    return sorted_positions[keep], sorted_owners[keep], int(len(order) - keep.sum())


def _ring_route(ring: tuple[npt.NDArray[np.unsignedinteger], npt.NDArray[np.int64], int],
                hashes: npt.NDArray[np.unsignedinteger], tie: str
                ) -> Callable[[slice], npt.NDArray[np.int64]]:
    positions, owners, _ = ring

    def route(part: slice) -> npt.NDArray[np.int64]:
        h = hashes[part]
        if tie == "at-or-before":
            index = np.searchsorted(positions, h, side="right") - 1  # -1: the last point
        else:
            index = np.searchsorted(positions, h, side="left" if tie == "at-or-after"
                                    else "right") % len(positions)
        result: npt.NDArray[np.int64] = owners[index]
        return result
    return route


def _set_traits(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters as a recipe states them: those at their defaults left out."""
    defaults = {f: getattr(ClientTraits(), f) for f in params}
    defaults["hash"] = None  # always stated
    defaults["points_per_weight"] = None
    return {k: v for k, v in params.items() if v != defaults.get(k)}


