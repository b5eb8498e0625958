"""Which recipe routes like the observations: the shipped clients first, then the space of
client traits, pruned.

Order of the search, cheapest and likeliest first:

1. **Shipped recipes**: every shipped construction and algorithm at its defaults (and each
   construction's modes), and the real clients of `known_clients.OTHER_CLIENTS`, each
   routing every key.
2. **Hash mod N** (`modulo`): every key hash, shift and mask; a key's hash is computed once
   for all of them, so this family costs a numpy pass each.
3. **Rendezvous** (`rendezvous-score`, fleets of weight 1): every score hash and name
   template, first on a sample of keys; the seeded hashes (MurmurHash3, xxHash) also under
   each seed of `RENDEZVOUS_SEEDS` and any `--seed` given.
4. **Rings of client traits** (`points`): the key hashes are ranked by how much ring
   structure they show in the observations (sorted by a ring's key hash, the observed
   owners come in runs, one per arc; sorted by any other hash they change at random), and
   tried in that order. For one hash, every naming scheme (template, first point, points per
   digest, server form, chaining) is hashed once, for the most names any count asks; each
   count rule (points per weight x rounding) takes a prefix of those points; each ring is
   tried with every tie rule, on a sample of keys first (`SAMPLE_KEYS`), and only a ring
   that routes the sample as well as the best so far routes every key. The search of rings
   stops after the first hash with a ring that reproduces every key.

   **Key forms.** Besides a ring's own key hash, each hash is also tried in the one form
   that shows clearly more ring structure than the plain one (`STRUCTURE_GAP`): keys cut to
   one of the lengths of `truncations` (`key_max_bytes`) and/or positions and key hashes
   taken modulo one of `RING_SIZES` (`ring_size`); a form with a ring size builds its rings
   again from the reduced points. Hash mod N is tried with every truncation too.
5. **Points off the ladder**: when no ring reproduces every key, the best three rings
   (the right naming scheme with a near count routes most keys) are swept over every count
   of points per weight up to `MAX_SWEPT_PER_WEIGHT`: each server's points are hashed once
   and the running nearest point of each sampled key gives the owner at every count at
   once (`_sweep_counts`); the counts that route the sample best are tried on every key.
6. **Other key hashes**: when still no ring reproduces every key, the best three rings
   again with every other key hash of their width (a client may hash keys otherwise than
   points).

Each stage is priced on its own (`declare`, `Space.stages`), so the time budget can be held
stage by stage (`budget.StageBudget`, passed to `run_search` as its `gate`).

What it does not search: truncation lengths and ring sizes outside those lists, counts past
`MAX_SWEPT_PER_WEIGHT` (or `SWEEP_NAMES` names in all), seeds of hashes other than
MurmurHash3 and xxHash, and key truncation in rendezvous scores.
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
from harness.core.trait_hashes import DIGEST_HASHES, SEEDED_HASHES, TRAIT_HASHES, digest_words
from harness.recipes.algorithms import ALGORITHMS, Algorithm, get_algorithm
from harness.recipes.constructions import CONSTRUCTIONS
from harness.recipes.constructions.client_traits import WEIGHT_ROUNDINGS, ClientTraits
from harness.recipes.constructions.known_clients import OTHER_CLIENTS

#: keys a candidate routes before it may route them all
SAMPLE_KEYS = 96
#: the stages of the search, in the order they run, each with what it tries (the module
#: doc); a stage after the first runs only while no candidate reproduces every key, but for
#: hash mod N and rendezvous, which always follow the shipped recipes
STAGES = {"shipped": "shipped recipes and known clients", "modulo": "hash mod N",
          "rendezvous": "rendezvous", "rings": "rings of client traits",
          "counts": "points off the ladder", "key hashes": "other key hashes"}
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
#: a key sorted by its hash and its run counted (`structure`), and one (key, count, server)
#: step of the count sweep (`_sweep_counts`): numpy passes, priced with a margin of about 3
SECONDS_PER_SORTED_KEY = 0.5e-6
SECONDS_PER_SWEPT = 0.1e-6
#: a server's names at one count rule, in Python (share-exact's fractions the slowest)
SECONDS_PER_COUNT = 5e-6

#: rendezvous seeds tried besides 0 (pymemcache's and clandestined's murmur3 seed, and
#: go-redis's unseeded xxh64): 0x9747b28c, the default seed of lz4-java's xxHash32 block
#: stream (LZ4BlockOutputStream.DEFAULT_SEED) and of tnm/murmurhash-java, also Apache
#: Kafka's murmur2 seed; 4193360111 and 2718281828, facebook/mcrouter's rendezvous seeds of
#: server names and of keys (kRendezvousHashSeed, kRendezvousExtraHashSeed)
RENDEZVOUS_SEEDS = (0x9747B28C, 4193360111, 2718281828)
#: ring sizes tried below a hash's width: a 16-bit ring (hash & 0xffff); 360 and 1,024
#: (rings of degrees and of slots in hand-written clients); Integer.MAX_VALUE and 2**31 (a
#: Java int kept non-negative by % or by & 0x7fffffff); the same for a Java long
RING_SIZES = (2**16, 360, 1024, 2**31 - 1, 2**31, 2**63 - 1, 2**63)
#: key lengths a client may hash only the first bytes of: common limits, tried when some
#: key is longer and no two keys that share that prefix were seen on different servers
KEY_TRUNCATIONS = (8, 16, 32, 64, 128, 250)
#: lengths tried from the smallest prefix that routes consistently (`truncations`), and
#: all lengths tried at most
DERIVED_TRUNCATIONS = 4
MAX_TRUNCATIONS = 8
#: keys a truncation needs in shared prefixes to be taken from the data (of every 20)
SHARED_SHARE = 20
#: longest cut read from the data (the first `STRUCTURE_KEYS` keys are read)
TRUNCATION_LIMIT = 1024
#: keys whose order `structure` reads for a key form (a sample, so a form costs little)
STRUCTURE_KEYS = 20_000
#: the count sweep: points per weight up to this, and names hashed in all at most
MAX_SWEPT_PER_WEIGHT = 1024
SWEEP_NAMES = 200_000
#: counts of the sweep tried on every key (those that route the sample best)
SWEPT_OFFERED = 4


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
    #: stages of `STAGES` not run (over the time budget, a match already in hand)
    skipped: tuple[str, ...] = ()

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
    truncations: tuple[int, ...] = ()
    swept: int = 0
    #: each stage of `STAGES` with its estimated seconds, in the order they run; they sum
    #: to `cost.seconds`
    stages: tuple[tuple[str, float], ...] = ()

    @property
    def rings(self) -> int:
        """Rings tried at most: each with every tie rule and every key form (its own key
        hash, the most structured hash's, and up to `MAX_FORMS` cut or resized)."""
        return self.ring_schemes * self.ring_counts * len(TIES) * (2 + MAX_FORMS)

    @property
    def total(self) -> int:
        return self.shipped + self.modulo + self.rendezvous + self.rings + self.swept


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


def _checked(candidate: Candidate, servers: Sequence[Server]
             ) -> tuple[type[Algorithm], dict[str, Any]]:
    """The candidate's algorithm and its parameters checked for the fleet, defaults filled
    (a plugin's algorithm without `checked_params` keeps them as given)."""
    algorithm = get_algorithm(candidate.algorithm)
    params = algorithm.checked_params(servers, dict(candidate.params)) if hasattr(
        algorithm, "checked_params") else dict(candidate.params)
    return algorithm, params


def _candidate_seconds(candidate: Candidate, servers: Sequence[Server], keys: int) -> float:
    """A shipped recipe or known client built for the fleet and routing every key, priced
    by its algorithm's own share of the cost model (its build and its route of `keys`),
    beside hashing the keys twice. A price per key alone missed what grows with the
    fleet: clandestined scores every server in Python, 35.0 s of CPU at 1,000 servers
    and 10,000 keys against 9.6 s declared for the whole stage."""
    algorithm, params = _checked(candidate, servers)
    built, _ = algorithm.estimated_build_seconds(servers, params)
    routed, _ = algorithm.estimated_seconds(servers, params, reference_keys=0, fast_keys=keys,
                                            plain_keys=0)
    return keys * SECONDS_PER_KEY_HASH * 2 + built + routed


def _refusal(candidate: Candidate, servers: Sequence[Server]) -> str | None:
    try:
        algorithm, params = _checked(candidate, servers)
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


def modulo_candidates(observations: Observations, cuts: Sequence[int] = ()
                      ) -> list[Candidate]:
    """Hash mod N: every key hash, encoding, shift, mask and weighting; then each again with
    the keys cut to each length of `cuts`."""
    out = _modulo_candidates(observations)
    for cut in cuts:
        out += [Candidate(f"{c.label}, key_max_bytes {cut}", c.origin, c.algorithm,
                          {**c.params, "key_max_bytes": cut}) for c in out
                if "key_max_bytes" not in c.params]
    return out


def _modulo_candidates(observations: Observations) -> list[Candidate]:
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


def rendezvous_candidates(observations: Observations, seeds: Sequence[int] = ()
                          ) -> list[Candidate]:
    """Rendezvous scores: every hash and name template unseeded, then the seeded hashes
    under each of `RENDEZVOUS_SEEDS` and `seeds`."""
    if any(s.weight != 1 for s in observations.servers):
        return []
    out = []
    tried = [0, *dict.fromkeys(x for x in (*RENDEZVOUS_SEEDS, *seeds) if x)]
    for seed in tried:
        for hash_name, function in TRAIT_HASHES.items():
            if seed and hash_name not in SEEDED_HASHES:
                continue
            seeded = {"seed": seed} if seed else {}
            named = f", seed {seed:#x}" if seed else ""
            for encoding in encodings(observations):
                for template in RENDEZVOUS_TEMPLATES:
                    out.append(Candidate(f"rendezvous {hash_name}{named}", "traits",
                                         "rendezvous-score",
                                         {"hash": hash_name, "name_template": template,
                                          "key_encoding": encoding, **seeded}))
                if function.bits == 64:
                    out.append(Candidate(f"rendezvous xorshift {hash_name}{named}", "traits",
                                         "rendezvous-score",
                                         {"score": "xorshift-mult64", "hash": hash_name,
                                          "tie": "first", "key_encoding": encoding,
                                          **seeded}))
    return out


def truncations(observations: Observations) -> tuple[int, ...]:
    """Key lengths a client may cut keys to, as the observations allow them: a length is
    ruled out when two keys that share their first so many bytes were seen on different
    servers, and pointless when no key is longer. First the smallest lengths that route
    every shared prefix to one server, when many keys share one (the data's own evidence),
    then the common limits of `KEY_TRUNCATIONS`."""
    keys = observations.keys[:STRUCTURE_KEYS]  # what a length costs to read stays bounded
    owners = observations.owners[:STRUCTURE_KEYS]
    longest = max(len(k) for k in keys)
    limit = min(longest, TRUNCATION_LIMIT)  # so no prefix read is longer

    def shared(n: int) -> int | None:
        """Keys in a prefix of n bytes shared with another key; None: not one server."""
        first: dict[bytes, int] = {}
        size: dict[bytes, int] = {}
        for key, owner in zip(keys, owners, strict=True):
            prefix = key[:n]
            if first.setdefault(prefix, owner) != owner:
                return None
            size[prefix] = size.get(prefix, 0) + 1
        return sum(c for c in size.values() if c > 1)

    low, high = 0, limit  # consistency only grows with n (at the longest key it holds)
    while low < high:
        middle = (low + high) // 2
        if shared(middle) is None:
            low = middle + 1
        else:
            high = middle
    out: list[int] = []
    evidence = shared(low) if 0 < low < limit else None
    if evidence is not None and evidence * SHARED_SHARE >= len(keys):
        out += [n for n in range(low, low + DERIVED_TRUNCATIONS) if n < longest]
    out += [n for n in KEY_TRUNCATIONS if low <= n < longest and n not in out]
    return tuple(out[:MAX_TRUNCATIONS])


def ring_sizes(bits: int) -> tuple[int, ...]:
    return tuple(r for r in RING_SIZES if r < 2**bits)


# -- the space and its cost, before any work ----------------------------------------------

def declare(observations: Observations, seeds: Sequence[int] = ()) -> Space:
    """The search space and an upper bound of its seconds and bytes."""
    servers = observations.servers
    keys = len(observations.keys)
    schemes = name_schemes(observations)
    counts = max(len(count_rules(servers, 1)), 1)
    most_names = max(max(c) for c in count_rules(servers, 1))
    shipped = shipped_candidates(servers)
    cuts = truncations(observations)
    modulo = modulo_candidates(observations, cuts)
    rendezvous = rendezvous_candidates(observations, seeds)
    points_per_ring = sum(max(c) for c in [[most_names]]) * len(servers)
    names = len(schemes) * most_names * len(servers)
    # each ring built for both collision winners at the hash's width, and again at one ring
    # size for at most RING_SIZE_HASHES hashes (those with the most schemes, at worst);
    # looked up (priced at half a ring) with up to 1 + MAX_FORMS more key forms
    per_hash: dict[str, int] = {}
    for scheme in schemes:
        per_hash[scheme["hash"]] = per_hash.get(scheme["hash"], 0) + 1
    resized = sum(sorted(per_hash.values(), reverse=True)[:RING_SIZE_HASHES])
    rings = (len(schemes) + resized) * counts * 2
    lookups = len(schemes) * counts * 2 * (1 + MAX_FORMS)
    hash_count = len(TRAIT_HASHES) * len(encodings(observations))
    structure_keys = min(keys, STRUCTURE_KEYS)
    forms = (1 + len(cuts)) * (1 + len(RING_SIZES))
    swept_per_weight, swept_names = sweep_size(servers)
    swept_vectors = swept_per_weight * len(WEIGHT_ROUNDINGS)
    other_hashes = max(sum(1 for f in TRAIT_HASHES.values() if f.bits == bits)
                       for bits in {f.bits for f in TRAIT_HASHES.values()})
    stage_seconds = {
        "shipped": sum(_candidate_seconds(c, servers, keys) for c in shipped),
        # every key hashed once a hash; with cut keys: the sample, then every key of each
        # (hash, cut)
        "modulo": hash_count * keys * SECONDS_PER_KEY_HASH
        + hash_count * len(cuts) * (SAMPLE_KEYS + keys) * SECONDS_PER_KEY_HASH,
        "rendezvous": len(rendezvous) * len(servers) * (SAMPLE_KEYS + keys / 10)
        * SECONDS_PER_SCORE,
        # key forms: cut keys of the structure sample hashed, every form sorted, and the
        # chosen forms of each hash hashed for every key; then the rings
        "rings": hash_count * len(cuts) * structure_keys * SECONDS_PER_KEY_HASH
        + hash_count * forms * structure_keys * SECONDS_PER_SORTED_KEY
        + hash_count * MAX_FORMS * keys * SECONDS_PER_KEY_HASH
        + names * SECONDS_PER_NAME
        + rings * (SECONDS_PER_RING + points_per_ring * SECONDS_PER_RING_POINT)
        + lookups * SECONDS_PER_RING / 2,
        # the count sweep of the best rings: their names, the sweep, the counts tried
        "counts": KEY_HASH_RINGS * (swept_names * 4 * SECONDS_PER_NAME
                                    + swept_vectors * len(servers) * SECONDS_PER_COUNT
                                    + SAMPLE_KEYS * swept_vectors * len(servers)
                                    * SECONDS_PER_SWEPT
                                    + SWEPT_OFFERED * (SECONDS_PER_RING
                                                       + keys * SECONDS_PER_KEY_HASH
                                                       + swept_names * 4
                                                       * SECONDS_PER_RING_POINT)),
        # the best rings built again (their names hashed, as a scenario builds them) with
        # every other key hash of their width, each routing every key
        "key hashes": KEY_HASH_RINGS * other_hashes * (
            points_per_ring * (SECONDS_PER_NAME + SECONDS_PER_RING_POINT) + SECONDS_PER_RING
            + keys * SECONDS_PER_KEY_HASH),
    }
    seconds = sum(stage_seconds.values())
    # Held: each key hash of every key (8 bytes; and a cut form's of each hash), the kept
    # candidates' owners and the sample (8 bytes each), the keys. At work: one naming
    # scheme's points (4 a digest at most, 8 bytes each), its names (about 100 bytes each
    # while formatted) and one ring's sort (positions, owners, order and their sorted
    # copies: about 50 bytes a point); or the count sweep's points (8 bytes, 4 a name) and
    # its arrays (a server's running nearest points for the sample; the sample's best
    # distance, owner and step for every count: 8 bytes each); and a fixed MiB for the
    # shipped recipes' structures (maglev's table the largest).
    held = float(keys * 8 * ((1 + MAX_FORMS) * hash_count + KEPT + 2) + keys * 80
                 + structure_keys * 8 * 4)
    scheme_names = most_names * len(servers)
    ring_work = float(scheme_names * (4 * 8 + 100) + scheme_names * 4 * 50)
    deepest = swept_names // len(servers) * 4
    sweep_work = float(swept_names * 4 * (8 + 50) + swept_names * 100
                       + SAMPLE_KEYS * 8 * (2 * deepest + 5 * swept_vectors)
                       + swept_vectors * len(servers) * 8)
    peak = held + max(ring_work, sweep_work) + 2**20
    why = f"{keys:,} observed keys on {len(servers):,} servers"
    cost = Cost(held=held, peak=peak, seconds=seconds, why=why, why_seconds=(
        f"{len(schemes):,} ring naming schemes x {counts:,} count rules, "
        f"key truncations {len(cuts)} x ring sizes {len(RING_SIZES)} on {why}"))
    return Space(len(shipped), len(modulo), len(rendezvous), len(schemes), counts, cost,
                 cuts, KEY_HASH_RINGS * swept_vectors,
                 tuple((stage, stage_seconds[stage]) for stage in STAGES))


def sweep_size(servers: Sequence[Server]) -> tuple[int, int]:
    """Points per weight the count sweep reaches, and the names it hashes at most (the
    heaviest server's share of P x N names bounds every rounding's)."""
    total = sum(s.weight for s in servers)
    heaviest = max(s.weight for s in servers)
    per_unit = max(heaviest, heaviest / total * len(servers))  # names a unit of P gives
    names_per_step = max(1.0, per_unit) * len(servers) + len(servers)
    per_weight = max(1, min(MAX_SWEPT_PER_WEIGHT, int(SWEEP_NAMES // names_per_step)))
    return per_weight, int(per_weight * names_per_step)


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


#: asked before each stage whether it runs: the stage, and whether some candidate already
#: reproduces every key; it may also raise to stop the search (`budget.StageBudget`)
Gate = Callable[[str, list[Found]], bool]


def run_search(observations: Observations, progress: Callable[[str], None] | None = None,
               seeds: Sequence[int] = (), gate: Gate | None = None) -> Search:
    """The search of the module doc; `gate` decides before each stage whether it runs
    (every stage runs that the search reaches, without one)."""
    start = time.perf_counter()
    observed = np.array(observations.owners, dtype=np.int64)
    ranking = Ranking(observed)
    keys = list(observations.keys)
    servers = list(observations.servers)
    say = progress or (lambda text: None)
    skipped: list[str] = []

    def runs(stage: str) -> bool:
        if gate is None or gate(stage, ranking.found):
            return True
        skipped.append(stage)
        return False

    def matched() -> bool:
        return any(f.agreement == 1.0 for f in ranking.found)

    if runs("shipped"):
        say("shipped recipes and known clients")
        for candidate in shipped_candidates(servers):
            algorithm = get_algorithm(candidate.algorithm).build(servers, **candidate.params)
            ranking.offer(candidate, _fixed(algorithm.route(keys).astype(np.int64)))
    cuts = truncations(observations)
    key_hashes = _KeyHashes(keys)
    if runs("modulo"):
        say("hash mod N" + (f" (and keys cut to {', '.join(map(str, cuts))} bytes)" if cuts
                            else ""))
        for candidate in modulo_candidates(observations, cuts):
            ranking.offer(candidate, _modulo_route(candidate, key_hashes, servers))
    if runs("rendezvous"):
        say("rendezvous")
        for candidate in rendezvous_candidates(observations, seeds):
            ranking.offer(candidate, _rendezvous_route(candidate, keys, servers))
    stopped = ""
    if not matched() and runs("rings"):
        stopped = _search_rings(observations, ranking, key_hashes, say, cuts)
    if not matched() and runs("counts"):
        _search_counts(observations, ranking, key_hashes, say)
    if not matched() and runs("key hashes"):
        say("other key hashes for the best rings")
        _search_key_hashes(observations, ranking)
    return Search(ranking.found, ranking.tried, time.perf_counter() - start, stopped,
                  tuple(skipped))


def _fixed(owners: npt.NDArray[np.int64]) -> Callable[[slice], npt.NDArray[np.int64]]:
    return lambda part: owners[part]


@dataclass(frozen=True)
class KeyForm:
    """How a client hashes keys before the ring: which hash (`same`: the points'), cut to
    how many bytes, and the ring size positions and key hashes are taken modulo (0: none)."""

    key_hash: str = "same"
    key_max_bytes: int = 0
    ring_size: int = 0

    def params(self) -> dict[str, Any]:
        return {"key_hash": self.key_hash, "key_max_bytes": self.key_max_bytes,
                "ring_size": self.ring_size}


class _KeyHashes:
    """Each key hash of every key, computed once per (hash, encoding, cut); and of the first
    keys only (a sample), for what reads no more."""

    def __init__(self, keys: list[bytes]) -> None:
        self.keys = keys
        self._cache: dict[tuple[str, str, int], npt.NDArray[np.unsignedinteger]] = {}
        self._first: dict[tuple[str, str, int, int], npt.NDArray[np.unsignedinteger]] = {}

    def get(self, hash_name: str, encoding: str, cut: int = 0, ring_size: int = 0
            ) -> npt.NDArray[np.unsignedinteger]:
        if (hash_name, encoding, cut) not in self._cache:
            traits = ClientTraits(hash=hash_name, key_encoding=encoding, key_max_bytes=cut)
            self._cache[hash_name, encoding, cut] = traits.key_hashes(self.keys)
        return _reduced(self._cache[hash_name, encoding, cut], ring_size)

    def first(self, count: int, hash_name: str, encoding: str, cut: int = 0,
              ring_size: int = 0) -> npt.NDArray[np.unsignedinteger]:
        """The hashes of the first `count` keys, without hashing every key."""
        if (hash_name, encoding, cut) in self._cache:
            return self.get(hash_name, encoding, cut, ring_size)[:count]
        if (hash_name, encoding, cut, count) not in self._first:
            traits = ClientTraits(hash=hash_name, key_encoding=encoding, key_max_bytes=cut)
            self._first[hash_name, encoding, cut, count] = traits.key_hashes(
                self.keys[:count])
        return _reduced(self._first[hash_name, encoding, cut, count], ring_size)


def _reduced(hashes: npt.NDArray[np.unsignedinteger], ring_size: int
             ) -> npt.NDArray[np.unsignedinteger]:
    if not ring_size or ring_size >= 1 << (8 * hashes.dtype.itemsize):
        return hashes
    result: npt.NDArray[np.unsignedinteger] = hashes % hashes.dtype.type(ring_size)
    return result


def _modulo_route(candidate: Candidate, key_hashes: _KeyHashes, servers: Sequence[Server]
                  ) -> Callable[[slice], npt.NDArray[np.int64]]:
    p = candidate.params
    buckets = np.repeat(np.arange(len(servers)), [int(s.weight) if p["weights"] == "repeat"
                                                  else 1 for s in servers])
    cut = p.get("key_max_bytes", 0)

    def route(part: slice) -> npt.NDArray[np.int64]:
        if part == slice(0, SAMPLE_KEYS):  # a cut form's every key only when it is worth it
            hashes = key_hashes.first(SAMPLE_KEYS, p["key_hash"], p["key_encoding"], cut)
        else:
            hashes = key_hashes.get(p["key_hash"], p["key_encoding"], cut)[part]
        values = hashes.astype(np.uint64) >> np.uint64(p["shift"])
        if p["mask_bits"]:
            values &= np.uint64((1 << p["mask_bits"]) - 1)
        owners: npt.NDArray[np.int64] = buckets[
            (values % np.uint64(len(buckets))).astype(np.int64)].astype(np.int64)
        return owners
    return route


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


def points_suggested(score: float, keys: int) -> float | None:
    """Points of a ring whose key hash shows this `structure` on so many keys: a pair of
    neighbouring keys changes owner when a point falls between them (1 - exp(-P / K) for P
    random points) and it belongs to another server, so P = -K ln(1 - score)."""
    return -keys * float(np.log1p(-score)) if 0.0 < score < 1.0 else None


def _forms(observed: npt.NDArray[np.int64], key_hashes: _KeyHashes, hash_name: str,
           encoding: str, cuts: Sequence[int]) -> list[tuple[float, KeyForm]]:
    """Each cut and ring size of keys hashed by `hash_name`, with the ring structure it
    shows on the first `STRUCTURE_KEYS` keys."""
    count = min(len(observed), STRUCTURE_KEYS)
    sample = observed[:count]
    out = []
    for cut in (0, *cuts):
        hashes = key_hashes.first(count, hash_name, encoding, cut)
        for ring_size in (0, *ring_sizes(TRAIT_HASHES[hash_name].bits)):
            out.append((structure(sample, _reduced(hashes, ring_size)),
                        KeyForm(key_max_bytes=cut, ring_size=ring_size)))
    return out


def chosen_forms(scored: Sequence[tuple[float, KeyForm]], plain: float) -> list[KeyForm]:
    """The forms worth rings: those that show clearly more structure than the plain hash
    (`STRUCTURE_GAP`) and about as much as the best (`FORM_TOLERANCE`: cut lengths that
    split the keys alike show alike). Forms at the hash's width come first, since a ring
    size within the tolerance adds nothing the observations show; at most one ring size
    (its rings are built again) and `MAX_FORMS` in all."""
    useful = [(score, form) for score, form in scored
              if form != KeyForm() and score < plain - STRUCTURE_GAP]
    if not useful:
        return []
    best = min(score for score, _ in useful)
    close = sorted((pair for pair in useful if pair[0] <= best + FORM_TOLERANCE),
                   key=lambda pair: (pair[1].ring_size != 0, pair[0]))
    out: list[KeyForm] = []
    for _, form in close:
        if form.ring_size and any(f.ring_size for f in out):
            continue
        if form.ring_size and any(f.key_max_bytes == form.key_max_bytes for f in out):
            continue  # the same cut at full width is as good: the ring size adds nothing
        out.append(form)
    return out[:MAX_FORMS]


def _search_rings(observations: Observations, ranking: Ranking, key_hashes: _KeyHashes,
                  say: Callable[[str], None], cuts: Sequence[int] = ()) -> str:
    servers = list(observations.servers)
    schemes = name_schemes(observations)
    by_hash: dict[str, list[dict[str, Any]]] = {}
    for scheme in schemes:
        by_hash.setdefault(scheme["hash"], []).append(scheme)
    count = min(len(ranking.observed), STRUCTURE_KEYS)
    scores = {h: min(structure(ranking.observed[:count],
                               key_hashes.first(count, h, e)) for e in encodings(observations))
              for h in by_hash}
    # Each hash's forms (cut keys, a ring size) that show clearly more structure than the
    # hash alone; the hashes are then tried in the order of their best.
    forms: dict[str, list[KeyForm]] = {}
    best = dict(scores)
    for h in by_hash:
        scored = [pair for e in encodings(observations)
                  for pair in _forms(ranking.observed, key_hashes, h, e, cuts)]
        chosen = chosen_forms(scored, scores[h])
        if chosen:
            forms[h] = chosen
            best[h] = min(score for score, form in scored if form in chosen)
    # A ring size builds every ring of its hash again: kept for the few hashes it helps most
    sized = sorted((h for h in forms if any(f.ring_size for f in forms[h])),
                   key=lambda h: best[h])
    for h in sized[RING_SIZE_HASHES:]:
        forms[h] = [f for f in forms[h] if not f.ring_size]
    order = sorted(by_hash, key=lambda h: best[h])
    # The key hash that shows the most ring structure, when it shows clearly more than the
    # others: tried as the key hash of rings hashed otherwise too (twemproxy's kind).
    structured = order[0] if len(order) > 1 and \
        best[order[1]] - best[order[0]] > STRUCTURE_GAP and order[0] not in forms else None
    rules = {d: count_rules(servers, d) for d in (1, 2, 3, 4)}
    for hash_name in order:
        extra = forms.get(hash_name, [])
        suggested = points_suggested(best[hash_name], count)
        say(f"rings hashed by {hash_name}"
            + "".join(f", also keys cut to {f.key_max_bytes} bytes" * bool(f.key_max_bytes)
                      + f"{',' if f.key_max_bytes else ', also'} ring size {f.ring_size:,}"
                      * bool(f.ring_size) for f in extra)
            + (f" (the observations suggest about {suggested:,.0f} points)"
               if suggested is not None and best[hash_name] < 1 - STRUCTURE_GAP
               and not any(f.key_max_bytes for f in extra) else ""))
        for scheme in by_hash[hash_name]:
            _try_scheme(scheme, servers, rules[scheme.get("points_per_digest", 1)],
                        ranking, key_hashes, structured, extra)
        if any(f.agreement == 1.0 for f in ranking.found):
            return hash_name
    return ""


#: how much less structure than the next a key hash must show to be taken for the ring's
#: (`structure`): on 2,000 keys the ring's key hash measured 0.2-0.4 at 3-7 servers and
#: 0.89 at 98 (npm hashring), every other hash 0.98-1.03 (one standard deviation of a
#: random order is about 0.01 there)
STRUCTURE_GAP = 0.05
#: forms of one hash within this much structure of its best are all tried (keys cut to
#: 10 or 11 bytes may split them into the same groups), up to `MAX_FORMS`
FORM_TOLERANCE = 0.02
MAX_FORMS = 4
#: hashes whose rings are built again at a ring size, at most
RING_SIZE_HASHES = 2
#: ring candidates whose key hash is varied, or whose count is swept, when no ring
#: reproduces every key
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
                key_hashes: _KeyHashes, structured: str | None = None,
                extra: Sequence[KeyForm] = ()) -> None:
    chain = scheme.get("chain") == "previous"
    if chain:  # a chain: one count rule a weight (nginx: points_per_weight x weight)
        rules = {counts: r for counts, r in rules.items()
                 if any(x["weight_rounding"] == "half-even" for x in r)}
    most = max(max(counts) for counts in rules)
    traits = ClientTraits.from_params({**scheme, "points_per_weight": 1})
    per_digest = traits.points_per_digest
    points = [_server_points(traits, s, most) for s in servers]
    forms = [KeyForm()]
    if structured not in (None, traits.hash) and \
            TRAIT_HASHES[str(structured)].bits == traits.bits:
        forms.append(KeyForm(key_hash=str(structured)))
    forms += extra
    for ring_size in dict.fromkeys(f.ring_size for f in forms):
        looked_up = [(f, key_hashes.get(
            traits.hash if f.key_hash == "same" else f.key_hash, traits.key_encoding,
            f.key_max_bytes, f.ring_size)) for f in forms if f.ring_size == ring_size]
        for counts, rule in rules.items():
            positions = _reduced(np.concatenate(
                [p[:c * per_digest] for p, c in zip(points, counts, strict=True)]), ring_size)
            owners = np.repeat(np.arange(len(servers), dtype=np.int64),
                               [c * per_digest for c in counts])
            for winner in ("first", "last"):
                ring = _ring(positions, owners, winner)
                if ring is None:
                    continue
                for (key_form, hashes), tie in itertools.product(looked_up, TIES):
                    params = {**scheme, **rule[0], "tie": tie, "collision_winner": winner,
                              **key_form.params()}
                    ranking.offer(_ring_candidate(params), _ring_route(ring, hashes, tie))
                if ring[2] == 0:
                    break  # no equal points: the collision winner cannot matter


def _ring_candidate(params: dict[str, Any]) -> Candidate:
    stated = _set_traits(params)
    label = "ring " + ", ".join(f"{k} {v}" for k, v in stated.items())
    return Candidate(label, "traits", "ring", {"construction": "points", **stated})


def _server_points(traits: ClientTraits, server: Server, count: int
                   ) -> npt.NDArray[np.unsignedinteger]:
    if traits.chain == "previous" or traits.points_per_digest == 1:
        return traits.server_points(server, count)
    return digest_words(traits.hash, traits.names_of(server, count),
                        traits.points_per_digest).reshape(-1)


# -- points off the ladder -------------------------------------------------------------------

def _search_counts(observations: Observations, ranking: Ranking, key_hashes: _KeyHashes,
                   say: Callable[[str], None]) -> None:
    """The best rings of traits (one a naming scheme and key form) swept over every count of
    points per weight (`_sweep_counts`); the counts that route the sample best are offered."""
    servers = list(observations.servers)
    seen: set[tuple[tuple[str, Any], ...]] = set()
    for found in list(ranking.found):
        candidate = found.candidate
        if candidate.origin != "traits" or candidate.algorithm != "ring":
            continue
        shape = tuple(sorted((k, v) for k, v in candidate.params.items()
                             if k not in ("points_per_weight", "weight_rounding")))
        if shape in seen:
            continue
        if any(f.agreement == 1.0 for f in ranking.found):
            return
        seen.add(shape)
        if len(seen) > KEY_HASH_RINGS:
            break
        per_weight, _ = sweep_size(servers)
        say(f"points per weight 1 to {per_weight:,} for {candidate.label}")
        traits_params = {k: v for k, v in candidate.params.items() if k != "construction"}
        for params, (positions, owners) in _sweep_counts(traits_params, servers, ranking,
                                                         key_hashes):
            for winner in ("first", "last"):
                ring = _ring(positions, owners, winner)
                if ring is None:
                    continue
                traits = ClientTraits.from_params(params)
                hashes = key_hashes.get(traits.key_hash_name, traits.key_encoding,
                                        traits.key_max_bytes, traits.ring_size)
                ranking.offer(_ring_candidate({**params, "collision_winner": winner}),
                              _ring_route(ring, hashes, traits.tie))
                if ring[2] == 0:
                    break


def count_vectors(servers: Sequence[Server], per_digest: int, chain: bool, most: int
                  ) -> dict[tuple[int, ...], dict[str, Any]]:
    """Every distinct vector of names per server for points per weight 1 to `most`, with
    the first (P, rounding) that gives it."""
    roundings = ("half-even",) if chain else WEIGHT_ROUNDINGS
    out: dict[tuple[int, ...], dict[str, Any]] = {}
    for per in range(1, most + 1):
        for rounding in roundings:
            traits = ClientTraits(points_per_weight=per, weight_rounding=rounding,
                                  points_per_digest=per_digest)
            counts = tuple(traits.name_counts(servers))
            if sum(counts):
                out.setdefault(counts, {"points_per_weight": per,
                                        "weight_rounding": rounding})
    return out


def _sweep_counts(params: dict[str, Any], servers: list[Server], ranking: Ranking,
                  key_hashes: _KeyHashes
                  ) -> list[tuple[dict[str, Any], tuple[npt.NDArray[np.unsignedinteger],
                                                        npt.NDArray[np.int64]]]]:
    """The counts of this ring's points that route the sample best (`count_agreements`),
    each with the ring's points and owners."""
    traits = ClientTraits.from_params({**params, "points_per_weight": 1})
    sample = ranking.sample
    hashes = key_hashes.first(len(sample), traits.key_hash_name, traits.key_encoding,
                              traits.key_max_bytes, traits.ring_size)
    vectors, agreement, points = count_agreements(traits, servers, hashes, sample,
                                                  sweep_size(servers)[0])
    per_digest = traits.points_per_digest
    out = []
    for v in np.argsort(-agreement, kind="stable")[:SWEPT_OFFERED]:
        counts, rule = vectors[int(v)]
        positions = np.concatenate([p[:c * per_digest] for p, c in zip(points, counts,
                                                                      strict=True)])
        owners = np.repeat(np.arange(len(servers), dtype=np.int64),
                           [c * per_digest for c in counts])
        out.append(({**params, **rule}, (positions, owners)))
    return out


def count_agreements(traits: ClientTraits, servers: Sequence[Server],
                     hashes: npt.NDArray[np.unsignedinteger], sample: npt.NDArray[np.int64],
                     most: int) -> tuple[list[tuple[tuple[int, ...], dict[str, Any]]],
                                         npt.NDArray[np.float64],
                                         list[npt.NDArray[np.unsignedinteger]]]:
    """How well the ring of `traits` routes the sampled keys (their key hashes, reduced,
    and their observed owners) at every count of `count_vectors` up to `most` points per
    weight: (the count vectors with their rules, each one's agreement, each server's
    points). A key's owner at a count is the server of its nearest point in the tie's
    direction among each server's first so many: the running minimum of the distances
    along each server's points gives every count at once."""
    per_digest = traits.points_per_digest
    vectors = list(count_vectors(servers, per_digest, traits.chain == "previous",
                                 most).items())
    table = np.array([counts for counts, _ in vectors], dtype=np.int64)  # (vectors, servers)
    deepest = table.max(axis=0)
    modulus = traits.modulus
    targets = hashes.astype(np.uint64)
    if traits.tie == "after":  # the first point past the hash: the first at or after h + 1
        with np.errstate(over="ignore"):
            targets = targets + np.uint64(1)
        if modulus < 2**64:
            targets %= np.uint64(modulus)
    none = np.iinfo(np.uint64).max
    best = np.full((len(sample), len(table)), none, dtype=np.uint64)
    owner = np.full((len(sample), len(table)), -1, dtype=np.int64)
    points: list[npt.NDArray[np.unsignedinteger]] = []
    for index, server in enumerate(servers):
        own = _reduced(_server_points(traits, server, int(deepest[index])),
                       traits.ring_size)
        points.append(own)
        if len(own) == 0:
            continue
        distance = _distances(own.astype(np.uint64), targets, modulus,
                              traits.tie == "at-or-before")
        nearest = np.minimum.accumulate(distance, axis=1)  # (sample, points)
        counts = table[:, index] * per_digest
        reached = np.where(counts > 0, nearest[:, np.maximum(counts - 1, 0)], none)
        closer = reached < best if traits.collision_winner == "first" else (
            (reached <= best) & (reached != none))
        best = np.where(closer, reached, best)
        owner = np.where(closer, index, owner)
    agreement: npt.NDArray[np.float64] = np.mean(owner == sample[:, None], axis=0)
    return vectors, agreement, points


def _distances(points: npt.NDArray[np.uint64], hashes: npt.NDArray[np.uint64], modulus: int,
               backward: bool) -> npt.NDArray[np.uint64]:
    """(sample, points): how far each point lies after each hash (or before it, `backward`),
    modulo the ring's size."""
    ahead, behind = (hashes[:, None], points[None, :]) if backward else (
        points[None, :], hashes[:, None])
    with np.errstate(over="ignore"):
        distance = ahead - behind  # wraps modulo 2**64
        if modulus < 2**64:
            distance = np.where(ahead >= behind, distance, distance + np.uint64(modulus))
    result: npt.NDArray[np.uint64] = distance
    return result


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
