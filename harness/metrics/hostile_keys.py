"""Hostile keys: an attacker who knows the recipe picks key names that all land on one server.

The attacker targets one server and knows the ring's recipe (servers, points,
point names and hash: Kerckhoffs's principle), so it can rebuild the ring
offline. It tries numbered candidate names (`attack-{c}-{j}`, a chunk and a
number) by brute force, hashing each chunk in one C batch
(`harness.core.hashing.hash_numbered`) and routing it with one batch lookup,
and keeps the candidates its ring sends to the target. Against a keyed hash
(SipHash) whose key it does not hold, it can only rebuild the ring under a key
of its own; its picks then land on the target by chance.

The attack sends `attack_keys` distinct keys (distinct, so that no cache in
front of the fleet absorbs them). With a budget of B candidates it sends the
hits among the first B, and fills up with other candidates when it found too
few; its share on the target is the fraction of those keys that the real ring
routes there. The traffic mix: `normal_requests` honest requests for distinct
keys (`user-{i}`, one each) with the attack's requests added, `attack_share` of
all requests, spread evenly over its keys. The target's load is its requests
per unit weight over the mean, before and during the attack.

Where the hash allows, the attacker does better than search (`methods`
"forgery"): CRC-32 is affine, so four appended bytes give a name any chosen
checksum (`harness.core.crc_forgery`); the attacker picks values inside the
target's arcs and forges one name per value, every candidate a hit.

Chance is the target's exact share of the hash space (its arcs). A keyed
hash's share under an unknown key is Binomial(attack_keys, chance) /
attack_keys: `noise_bound` is four of its standard deviations, the bound the
tests hold it to.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.crc_forgery import forge_suffixes, forged_names
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.hashing import HASH_NAMES, hash_bits, hash_numbered, is_keyed
from harness.core.servers import Server
from harness.core.tables import Answer, Section, Table, count, literal, number, pct, text
from harness.metrics.base import MetricBase, Reference, ScenarioView, Working, answered_runs
from harness.recipes.algorithms.ring import NO_LAYOUT
from harness.recipes.constructions.client_traits import trait_params

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.metrics.base import RunShape
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.algorithms.base import Algorithm

#: candidates hashed and routed per batch (and per step of progress)
CHUNK = 1 << 17
#: how far, in standard deviations of the binomial share, chance may stray
NOISE_SIGMAS = 4.0
KNOWLEDGE = ("hash", "hash-and-key")
METHODS = ("brute-force", "forgery")
#: the hashes that let an attacker construct a name for a chosen hash value
FORGEABLE = ("crc32",)
#: the name every forged candidate starts with (four computed bytes follow)
FORGED_PREFIX = b"attack-forged-"
#: the largest budget a table may ask for (about 5 minutes of blake2b-32 on one core)
MAX_BUDGET = 10**9
#: seconds per candidate (hash in C, batch lookup, mask) on one core, measured on the
#: project's 2-core machine and rounded up: 3.3 M/s for blake2b-32 on two cores, over
#: 20 M/s for the others
SECONDS_PER_CANDIDATE = {"blake2b-32": 8e-7, "blake2b-64": 9e-7, "md5-32": 9e-7}
OTHER_SECONDS_PER_CANDIDATE = 2e-7
#: a forged candidate: drawn in an arc, its suffix solved (0.44 M/s measured under load)
SECONDS_PER_FORGED_CANDIDATE = 3e-6
#: bytes per candidate in a chunk (hashes, packed words, owners, mask, hit indexes) and
#: per hit kept over the whole budget (its index)
BYTES_PER_CHUNK_CANDIDATE = 40
BYTES_PER_HIT = 8
#: bytes per honest request (its hash, owner and the count it adds) and per attack key
#: (its name, hash and owner)
BYTES_PER_NORMAL_REQUEST = 24
BYTES_PER_ATTACK_KEY = 200
#: bytes per forged candidate: its arc, offset, value (int64 each, with np.unique's copy),
#: suffix and owner
BYTES_PER_FORGED_CANDIDATE = 64


@dataclass(frozen=True)
class HostileKeysOptions:
    #: the server attacked (None: the ring's first server)
    target: str | None = None
    #: candidates tried, rising
    budgets: tuple[int, ...] = (10_000, 100_000, 1_000_000)
    #: distinct keys the attack sends
    attack_keys: int = 5_000
    #: the attack's share of all requests in the traffic mix
    attack_share: float = 0.1
    #: honest requests (distinct keys, one request each) in the mix
    normal_requests: int = 200_000
    #: hashes attacked, each on the run's ring recipe with only the hash changed (empty: the
    #: run's own hash)
    hashes: tuple[str, ...] = ()
    #: "hash": the attacker knows the recipe but not a keyed hash's key; "hash-and-key": the
    #: key leaked too
    knowledge: str = "hash"
    #: seeds the attacker's own key (its guess at a keyed hash's) and its forged values
    seed: int = 1
    #: "brute-force" for every hash; "forgery" for those that allow it (FORGEABLE)
    methods: tuple[str, ...] = METHODS


@dataclass
class BudgetOutcome:
    budget: int
    #: candidates among the first `budget` that the attacker's ring sends to the target
    hits: int
    #: the attack's keys the real ring routes to the target, and their share
    on_target: int
    share_on_target: float
    #: the target's load per unit weight over the mean, with the attack in the mix
    target_load: float
    #: the busiest server's load per unit weight over the mean, with the attack in the mix
    peak_load: float


@dataclass
class HashAttack:
    hash: str
    #: "brute-force" (search numbered candidates) or "forgery" (construct them)
    method: str
    keyed: bool
    attacker_knows_key: bool
    candidates: int
    seconds: float
    candidates_per_second: float
    #: hits (candidates the attacker's ring sends to the target) per second: what an attack
    #: of many distinct keys is paced by
    hits_per_second: float
    #: the target's exact share of the hash space: where an attack without knowledge lands
    chance_share: float
    #: NOISE_SIGMAS standard deviations of the share of `attack_keys` chance picks
    noise_bound: float
    #: the target's load per unit weight over the mean with honest traffic only
    target_load_before: float
    budgets: list[BudgetOutcome]


@dataclass
class HostileKeys:
    target: str
    servers: int
    attack_keys: int
    attack_share: float
    normal_requests: int
    attack_requests: int
    attacks: list[HashAttack]


def candidate_name(index: int) -> bytes:
    """The name of candidate `index` (chunk c = index // CHUNK, number j = index % CHUNK)."""
    return f"attack-{index // CHUNK}-{index % CHUNK}".encode()


def chunk_prefix(chunk: int) -> bytes:
    return f"attack-{chunk}-".encode()


def chance_noise(chance: float, attack_keys: int) -> float:
    """NOISE_SIGMAS standard deviations of a binomial share of `attack_keys` draws."""
    return NOISE_SIGMAS * math.sqrt(chance * (1 - chance) / attack_keys)


def _positive_rising(values: object, maximum: int) -> bool:
    return (isinstance(values, list) and bool(values)
            and all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= maximum
                    for v in values)
            and all(b > a for a, b in itertools.pairwise(values)))


def _chunks(budget: int) -> int:
    return -(-budget // CHUNK)


class HostileKeysMetric(MetricBase):
    """Brute-forced keys aimed at one server, against unkeyed and keyed hashes."""

    name: ClassVar[str] = "hostile_keys"
    table: ClassVar[str] = "hostile_keys"
    reference: ClassVar[Reference] = Reference(tables={
        "hostile_keys": "A brute-force attack aiming keys at one server "
                        "([hostile keys](../guide/hostile-keys.md)).",
    })
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = HostileKeys
    cost_fields: ClassVar[str] = "budgets, hashes, normal_requests, attack_keys"

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """The target is on the ring; the attack hashes candidate names as the points
        construction does."""
        on_ring = {s.name for s in scenario.ring_servers()}
        if options.target is not None and options.target not in on_ring:
            raise ScenarioError(f"{top.file}: hostile_keys.target must name a server on the "
                                f"ring (got {options.target!r})")
        traits = {param.name for param in trait_params()}
        for recipe in scenario.recipes():
            if recipe.algorithm != "ring" or recipe.params.get("construction") != "points":
                raise ScenarioError(
                    f"{top.file}: hostile_keys must be left out for {recipe.algorithm} "
                    f"{recipe.label}: the attack hashes candidate names as the points "
                    "construction does (construction = 'points')")
            # A recipe records only the traits set away from their defaults.
            given = sorted(traits & set(recipe.params))
            if given:
                raise ScenarioError(
                    f"{top.file}: hostile_keys must be left out when client traits are set "
                    f"(generator.{given[0]}): the attack rebuilds the ring with each of "
                    "hostile_keys.hashes, keyed ones among them, which client traits do not "
                    "take")

    @staticmethod
    def parse_options(table: Fields) -> HostileKeysOptions:
        """`[hostile_keys]`: target, budgets, attack_keys, attack_share, normal_requests,
        hashes, knowledge, seed (the target and the hashes are checked against the ring by
        the scenario)."""
        expected = "the name of a server on the ring"
        target = table.take_raw("target", None, expected=expected,
                                shown_default="the ring's first server")
        if target is not None and (not isinstance(target, str) or not target):
            raise table.error("target", expected, target)
        expected = f"a rising list of candidate counts from 1 to {MAX_BUDGET:,}"
        budgets = table.take_raw("budgets", list(HostileKeysOptions.budgets), expected=expected)
        if not _positive_rising(budgets, MAX_BUDGET):
            raise table.error("budgets", expected, budgets)
        attack_keys = table.take_int("attack_keys", 5_000, minimum=1, maximum=10**6)
        assert isinstance(budgets, list)
        if budgets[0] < attack_keys:
            raise table.error("budgets", f"budgets of at least attack_keys ({attack_keys:,}) "
                              "candidates each", budgets)
        expected = "a share of all requests, above 0 and below 1"
        share = table.take_raw("attack_share", 0.1, expected=expected)
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < 1:
            raise table.error("attack_share", expected, share)
        options = HostileKeysOptions(
            target=target, budgets=tuple(budgets), attack_keys=attack_keys,
            attack_share=float(share),
            normal_requests=table.take_int("normal_requests", 200_000, minimum=1,
                                           maximum=10**8),
            hashes=table.take_str_list("hashes", [], choices=HASH_NAMES,
                                       shown_default="the ring's own hash"),
            knowledge=table.take_choice("knowledge", KNOWLEDGE, "hash"),
            seed=table.take_int("seed", 1, minimum=0),
            methods=table.take_str_list("methods", list(METHODS), choices=METHODS),
        )
        if not options.methods:
            raise table.error("methods", "a non-empty list of names from "
                              + ", ".join(METHODS), [])
        if len(set(options.hashes)) != len(options.hashes):
            raise table.error("hashes", "a list of distinct hash names", list(options.hashes))
        table.finish()
        return options

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """One chunk of candidates at a time, every hit's index over the largest budget (all
        of them when one server holds the ring), a forgery's values over it, the honest
        traffic, the attack's keys; the rings it builds beside the run's are in `working`."""
        assert isinstance(options, HostileKeysOptions)
        forges = "forgery" in options.methods and (
            not options.hashes or any(h in FORGEABLE for h in options.hashes))
        forged = BYTES_PER_FORGED_CANDIDATE if forges else 0
        return float(BYTES_PER_CHUNK_CANDIDATE * min(CHUNK, options.budgets[-1])
                     + (BYTES_PER_HIT + forged) * options.budgets[-1]
                     + BYTES_PER_NORMAL_REQUEST * options.normal_requests
                     + BYTES_PER_ATTACK_KEY * options.attack_keys)

    def working(self, shape: RunShape) -> Working:
        """Two rings of the run's recipe at a time: the real one of another hash, and the
        attacker's own under its key (a keyed hash whose key it lacks)."""
        options = shape.options.get(self.name)
        if not isinstance(options, HostileKeysOptions):
            return Working()
        return Working(rings=2 if options.hashes or options.knowledge == "hash" else 0)

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        """Every attacked hash tries the largest budget and routes the honest traffic; a
        forgery constructs the largest budget's candidates too."""
        assert isinstance(options, HostileKeysOptions)
        hashes = options.hashes or ("blake2b-32",)  # the run's own: assume the slowest
        per = options.budgets[-1] + options.normal_requests
        seconds = sum(per * SECONDS_PER_CANDIDATE.get(h, OTHER_SECONDS_PER_CANDIDATE)
                      for h in hashes)
        if "forgery" in options.methods:  # the run's own hash may be forgeable
            seconds += sum(per * SECONDS_PER_FORGED_CANDIDATE
                           for h in options.hashes or FORGEABLE if h in FORGEABLE)
        return seconds, (f"{len(hashes)} hash(es) x {options.budgets[-1]:,} candidates "
                         "(budgets, hashes)")

    def steps(self, plan: RunPlan) -> int:
        options = plan.options.get(self.name)
        if not isinstance(options, HostileKeysOptions):
            return 0
        return max(1, len(options.hashes)) * _chunks(options.budgets[-1])

    def measure(self, context: RunContext) -> HostileKeys | None:
        options = context.options.get(self.name)
        if not isinstance(options, HostileKeysOptions):
            return None
        servers = list(context.servers)
        names = [s.name for s in servers]
        target = names.index(options.target) if options.target is not None else 0
        weights = np.array([s.weight for s in servers], dtype=np.float64)
        attack_requests = round(options.attack_share / (1 - options.attack_share)
                                * options.normal_requests)
        own = str(context.algorithm.params["hash"])
        attacks = []
        for hash_name in options.hashes or (own,):
            real = (context.algorithm if hash_name == own
                    else context.build(servers, _recipe_with(context.algorithm, hash_name)))
            if "brute-force" in options.methods:
                attacks.append(self._attack(context, options, real, hash_name, target,
                                            weights, attack_requests))
            else:
                context.advance(_chunks(options.budgets[-1]))
            # A target whose every point lost a collision owns no arc to forge into.
            owns_arcs = real.ring is not None and bool((real.ring.owners == target).any())
            if "forgery" in options.methods and hash_name in FORGEABLE and owns_arcs:
                attacks.append(self._forgery(options, real, hash_name, target, weights,
                                             attack_requests))
            del real
        return HostileKeys(target=names[target], servers=len(servers),
                           attack_keys=options.attack_keys, attack_share=options.attack_share,
                           normal_requests=options.normal_requests,
                           attack_requests=attack_requests, attacks=attacks)

    @staticmethod
    def _attack(context: RunContext, options: HostileKeysOptions, real: Algorithm,
                hash_name: str, target: int, weights: npt.NDArray[np.float64],
                attack_requests: int) -> HashAttack:
        keyed = is_keyed(hash_name)
        knows_key = not keyed or options.knowledge == "hash-and-key"
        model = real
        if not knows_key:
            guess = np.random.default_rng(options.seed).bytes(16).hex()
            model = context.build(list(context.servers),
                                  {**real.params, "hash_key": guess})
        model_key = _key_of(model)
        largest = options.budgets[-1]
        hits: list[npt.NDArray[np.int64]] = []
        misses: list[npt.NDArray[np.int64]] = []
        missed = 0
        started = time.perf_counter()
        for chunk in range(_chunks(largest)):
            context.stage(f"{context.label}: hostile keys, {hash_name}, "
                          f"{chunk * CHUNK:,} of {largest:,} candidates")
            size = min(CHUNK, largest - chunk * CHUNK)
            hashes = hash_numbered(hash_name, chunk_prefix(chunk), size, model_key)
            on_target = model.lookup_many(hashes) == target
            base = chunk * CHUNK
            hits.append(np.flatnonzero(on_target) + base)
            if missed < options.attack_keys:  # fillers, should the hits fall short
                filler = np.flatnonzero(~on_target)[: options.attack_keys - missed] + base
                misses.append(filler)
                missed += len(filler)
            context.advance(1)
        seconds = time.perf_counter() - started
        all_hits = np.concatenate(hits)
        all_misses = np.concatenate(misses) if misses else np.empty(0, dtype=np.int64)
        normal_load = _normal_load(options, real, hash_name, weights)
        outcomes = []
        for budget in options.budgets:
            picked = all_hits[all_hits < budget][: options.attack_keys]
            fill = all_misses[all_misses < budget][: options.attack_keys - len(picked)]
            sent = np.concatenate([picked, fill])
            outcomes.append(_outcome(
                real, [candidate_name(int(i)) for i in sent], budget,
                int((all_hits < budget).sum()), target, normal_load, weights,
                attack_requests))
        chance = _chance(real, target, weights)
        return HashAttack(
            hash=hash_name, method="brute-force", keyed=keyed, attacker_knows_key=knows_key,
            candidates=largest,
            seconds=seconds, candidates_per_second=largest / seconds if seconds else 0.0,
            hits_per_second=len(all_hits) / seconds if seconds else 0.0,
            chance_share=chance, noise_bound=chance_noise(chance, options.attack_keys),
            target_load_before=float(normal_load[target] / normal_load.mean()),
            budgets=outcomes)

    @staticmethod
    def _forgery(options: HostileKeysOptions, real: Algorithm, hash_name: str, target: int,
                 weights: npt.NDArray[np.float64], attack_requests: int) -> HashAttack:
        """As many candidates as the largest budget, constructed: values drawn inside the
        target's arcs, and for each the suffix that gives a name that checksum (in numpy,
        timed); the first `attack_keys` become names and are sent."""
        ring = real.ring
        assert ring is not None and ring.bits == 32
        largest = options.budgets[-1]
        started = time.perf_counter()
        values = _values_in_arcs(ring.positions, ring.owners, target, largest, options.seed)
        forge_suffixes(FORGED_PREFIX, values)
        seconds = time.perf_counter() - started
        on_target = real.lookup_many(values) == target
        names = forged_names(FORGED_PREFIX, values[: options.attack_keys])
        normal_load = _normal_load(options, real, hash_name, weights)
        chance = _chance(real, target, weights)
        return HashAttack(
            hash=hash_name, method="forgery", keyed=False, attacker_knows_key=True,
            candidates=largest, seconds=seconds,
            candidates_per_second=largest / seconds if seconds else 0.0,
            hits_per_second=int(on_target.sum()) / seconds if seconds else 0.0,
            chance_share=chance, noise_bound=chance_noise(chance, options.attack_keys),
            target_load_before=float(normal_load[target] / normal_load.mean()),
            budgets=[_outcome(real, names, budget, int(on_target[:budget].sum()), target,
                              normal_load, weights, attack_requests)
                     for budget in options.budgets])

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: what an attacker who knows the hash does to the target with the
        fewest and the most candidates, and what one without a keyed hash's key does."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            h: HostileKeys = run.figure(self.name)
            section = f"Hostile keys ({literal(run.label)})"
            target = literal(h.target)
            known = [a for a in h.attacks if a.attacker_knows_key and a.budgets]
            if known:
                fastest = max(known, key=lambda a: a.budgets[0].target_load)
                first = fastest.budgets[0]
                load = number(first.target_load).text
                lines.append(Answer(section, (
                    f"{literal(run.label)}: an attacker who knows the hash "
                    f"({literal(fastest.hash)}, {literal(fastest.method)}) puts {target} at "
                    f"{load}x the mean load with {first.budget:,} candidates."),
                    (load, f"{first.budget:,}")))
                searched = [a for a in known if a.method == "brute-force"]
                if searched:  # a forgery needs no budget: the line above has it
                    last = min(searched, key=lambda a: a.budgets[-1].target_load)
                    floor = number(last.budgets[-1].target_load).text
                    lines.append(Answer(section, (
                        f"{literal(run.label)}: with {last.budgets[-1].budget:,} candidates, "
                        f"a brute force on any hash the attacker knows puts {target} at "
                        f"{floor}x the mean load or more."),
                        (floor, f"{last.budgets[-1].budget:,}")))
            for a in h.attacks:
                if a.attacker_knows_key or not a.budgets:
                    continue
                b = a.budgets[-1]
                share, chance = pct(b.share_on_target, 2).text, pct(a.chance_share, 2).text
                load = number(b.target_load).text
                lines.append(Answer(section, (
                    f"{literal(run.label)}: {literal(a.hash)} with its key unknown: after "
                    f"{b.budget:,} candidates {share} of the attack lands on {target} "
                    f"(chance: {chance}), {load}x the mean load."), (share, chance, load)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            h: HostileKeys | None = run.figure(self.name)
            if h is None:
                continue
            summary = Table.of(
                ["hash", "attack", "keyed", "attacker knows the key", "candidates/s", "hits/s",
                 "chance (target's arcs)", f"noise bound ({NOISE_SIGMAS:g} sd)",
                 "target load, honest traffic"],
                [[text(a.hash), text(a.method), text("yes" if a.keyed else "no"),
                  text("yes" if a.attacker_knows_key else "no"),
                  count(round(a.candidates_per_second)), count(round(a.hits_per_second)),
                  pct(a.chance_share, 2),
                  pct(a.noise_bound, 2), number(a.target_load_before)] for a in h.attacks],
                notes=[f"Target {h.target} of {h.servers} servers. Candidates per second: "
                       "the brute force's wall time (hashing in C batches and one batch lookup "
                       "per batch) over the largest budget; hits per second: the candidates "
                       "its ring sends to the target, over the same time (a forgery: the "
                       "names it constructed)."])
            budgets = Table.of(
                ["hash", "attack", "budget (candidates)", "hits found",
                 "attack keys on target", "share on target", "target load",
                 "busiest server load"],
                [[text(a.hash), text(a.method), count(b.budget), count(b.hits), count(b.on_target),
                  pct(b.share_on_target, 2), number(b.target_load), number(b.peak_load)]
                 for a in h.attacks for b in a.budgets],
                notes=[f"The attack sends {h.attack_keys:,} distinct keys: its hits, filled up "
                       "with other candidates when it found fewer. Traffic mix: "
                       f"{h.normal_requests:,} honest requests for distinct keys plus "
                       f"{h.attack_requests:,} attack requests ({h.attack_share:.0%} of all) "
                       "spread evenly over the attack's keys; loads are requests per unit "
                       "weight over the mean. A forgery constructs its candidates (names "
                       "ending in four computed bytes), every one a hit."])
            chart = charts.grouped_bars(
                f"Share of the attack's requests on {h.target}, by candidates tried",
                [{"budget": f"{b.budget:,} candidates",
                  "hash": a.hash if a.method == "brute-force" else f"{a.hash} ({a.method})",
                  "share": b.share_on_target, "label": f"{b.share_on_target:.1%}"}
                 for a in h.attacks for b in a.budgets],
                category="budget", group="hash", value="share",
                value_title="share on target", label="label")
            sections.append(Section(f"Hostile keys ({literal(run.label)})",
                                    tables=[summary, budgets], charts=[chart]))
        return sections


def _recipe_with(algorithm: Algorithm, hash_name: str) -> dict[str, Any]:
    """The run's ring recipe with another hash (a keyed one gets a key drawn for it); held
    in the run's layout where that layout stores the hash's width, else searched on the
    ring's own arrays by the vectorised reference."""
    params = {**algorithm.params, "hash": hash_name, "hash_key": None}
    if hash_bits(hash_name) != hash_bits(str(algorithm.params["hash"])):
        params["layout"] = NO_LAYOUT
    return params


def _values_in_arcs(positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16],
                    target: int, count: int, seed: int) -> npt.NDArray[np.uint32]:
    """`count` distinct 32-bit values inside the target's arcs (the hashes its points own:
    above the previous point, up to its own), drawn in proportion to the arcs' lengths."""
    space = 1 << 32
    ends = positions.astype(np.int64)
    lengths = (ends - np.roll(ends, 1)) % space
    if len(ends) == 1:
        lengths[:] = space
    mine = np.flatnonzero(owners == target)
    cumulative = np.cumsum(lengths[mine])
    rng = np.random.default_rng(seed)
    values = np.empty(0, dtype=np.int64)
    while len(values) < count:  # distinct values: draw again the few that collide
        # an arc in proportion to its length: where a uniform draw falls on their running sum
        along = rng.integers(0, int(cumulative[-1]), size=count)
        arcs = mine[np.searchsorted(cumulative, along, side="right")]
        back = (rng.random(count) * lengths[arcs]).astype(np.int64)
        values = _distinct(np.concatenate([values, (ends[arcs] - back) % space]))
    drawn: npt.NDArray[np.uint32] = rng.permutation(values)[:count].astype(np.uint32)
    return drawn


def _distinct(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The distinct values, sorted. By sorting: numpy 2.4's np.unique took 14 s for a
    million int64 here, against 0.12 s for a sort."""
    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    distinct: npt.NDArray[np.int64] = ordered[keep]
    return distinct


def _normal_load(options: HostileKeysOptions, real: Algorithm, hash_name: str,
                 weights: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Honest requests per unit weight: one request per key user-0, user-1, ..."""
    owners = real.lookup_many(hash_numbered(hash_name, b"user-", options.normal_requests,
                                            _key_of(real)))
    load: npt.NDArray[np.float64] = np.bincount(owners, minlength=len(weights)) / weights
    return load


def _outcome(real: Algorithm, sent: list[bytes], budget: int, hits: int, target: int,
             normal_load: npt.NDArray[np.float64], weights: npt.NDArray[np.float64],
             attack_requests: int) -> BudgetOutcome:
    """Where the attack's keys land and what they do to the loads in the traffic mix."""
    # The real routing of the attack's keys, by the plain reference: the attacker's batch
    # lookups are checked against it whenever its ring is the real one.
    owners = real.reference_owners(real.hash_keys(sent))
    per_key = np.full(len(sent), attack_requests // len(sent), dtype=np.float64)
    per_key[: attack_requests % len(sent)] += 1
    load = normal_load + np.bincount(owners, weights=per_key, minlength=len(weights)) / weights
    on_target = int((owners == target).sum())
    return BudgetOutcome(budget=budget, hits=hits, on_target=on_target,
                         share_on_target=on_target / len(sent),
                         target_load=float(load[target] / load.mean()),
                         peak_load=float(load.max() / load.mean()))


def _chance(real: Algorithm, target: int, weights: npt.NDArray[np.float64]) -> float:
    shares = real.exact_shares()
    return float(shares[target]) if shares is not None else float(
        weights[target] / weights.sum())


def _key_of(algorithm: Algorithm) -> bytes | None:
    key = algorithm.params.get("hash_key")
    return None if key is None else bytes.fromhex(str(key))

