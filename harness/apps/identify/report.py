"""What `identify` prints: the declared space, the recipes that reproduce the observations
(each confirmed by building it as a scenario would), the scenario snippet to paste, and for
a partial match which traits explain which keys. Names and keys from the input are shown
through `repr`-style escaping by the caller (`terminal_text`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from harness.apps.identify.observations import Observations
from harness.apps.identify.search import MAX_FORMS, RING_SIZES, STAGES, Found, Search, Space
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm

#: recipes shown in full, and keys shown that the best candidate misses
SHOWN = 5
MISSED_SHOWN = 5


def render_space(observations: Observations, space: Space, max_minutes: float) -> str:
    cost = space.cost
    return (f"identify: {len(observations.keys):,} observed keys on "
            f"{len(observations.servers):,} servers ({observations.routing_file}, "
            f"{observations.servers_file})\n"
            f"search space: {space.total:,} candidates: {space.shipped} shipped recipes and "
            f"known clients, {space.modulo:,} hash-mod-N, {space.rendezvous:,} rendezvous, "
            f"{space.rings:,} rings ({space.ring_schemes:,} naming schemes x "
            f"{space.ring_counts:,} count rules x 3 tie rules x up to {2 + MAX_FORMS} key "
            "forms), "
            f"{space.swept:,} counts swept off the ladder; keys cut to "
            f"{', '.join(map(str, space.truncations)) or 'no length'}"
            f"{' bytes' if space.truncations else ''} and ring sizes "
            f"{', '.join(map(power_text, RING_SIZES))} as the observations show them; "
            f"at most {cost.seconds:,.0f} s and {cost.peak / 2**20:,.0f} MiB estimated "
            f"({cost.why_seconds})\n"
            f"stages, estimated: {stage_text(space)}; each starts only while the estimates "
            f"of the stages run and its own fit --max-minutes {max_minutes:g}, and the "
            "stages after rendezvous only while no candidate reproduces every key")


def stage_text(space: Space) -> str:
    return ", ".join(f"{STAGES[stage]} {seconds:,.1f} s" for stage, seconds in space.stages)


def power_text(value: int) -> str:
    """2**k and 2**k - 1 as such (ring sizes), any other number with thousands marks."""
    for k in range(8, 65):
        if value in (2**k, 2**k - 1):
            return f"2^{k}" + ("-1" if value != 2**k else "")
    return f"{value:,}"


def confirmed(observations: Observations, search: Search) -> list[tuple[Found, float]]:
    """The top candidates, each rebuilt from its parameters as a scenario builds it and
    routing every key: the agreement reported is that one."""
    out = []
    keys = list(observations.keys)
    observed = np.array(observations.owners)
    servers = list(observations.servers)
    for found in search.ranked[:SHOWN]:
        algorithm = get_algorithm(found.candidate.algorithm).build(
            servers, **found.candidate.params)
        agreement = float(np.mean(algorithm.route(keys).astype(np.int64) == observed))
        out.append((found, agreement))
    out.sort(key=lambda pair: -pair[1])
    return out


def snippet(found: Found) -> str:
    """The recipe as a `[[clients.recipes]]` table to paste into a scenario."""
    lines = ["[[clients.recipes]]", 'name = "observed client"',
             f"algorithm = {json.dumps(found.candidate.algorithm)}"]
    for key, value in found.candidate.params.items():
        lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value)


def _differences(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = sorted(set(a) | set(b))
    parts = [f"{k}={b.get(k, '(default)')!r}" for k in keys if a.get(k) != b.get(k)]
    return ", ".join(parts) or "the same parameters"


def render(observations: Observations, space: Space, search: Search,
           checked: list[tuple[Found, float]], max_minutes: float | None = None) -> str:
    lines = []
    matches = [(f, a) for f, a in checked if a == 1.0]
    if matches:
        lines.append(f"{len(matches)} recipe(s) reproduce all {len(observations.keys):,} "
                     "observations (agreement 1.000000):")
    else:
        lines.append("no recipe matches: no searched recipe reproduces every observation; "
                     "the best candidates:")
    for found, agreement in checked:
        c = found.candidate
        lines.append(f"\n{agreement:.6f}  {c.label} ({c.origin})")
        lines.append(snippet(found))
    if len(matches) > 1:
        varying = sorted({k for f, _ in matches for k in set(f.candidate.params) | set(
            matches[0][0].candidate.params)
            if f.candidate.params.get(k) != matches[0][0].candidate.params.get(k)})
        lines.append(f"\nthe observations cannot tell these apart; they differ in: "
                     f"{', '.join(varying) or 'nothing'} (more keys, or keys hashing onto "
                     "points and equal points, would decide)")
    if not matches and checked:
        lines.extend(_explain(observations, checked))
    lines.append(f"\nsearched {search.tried:,} of {space.total:,} candidates in "
                 f"{search.seconds:,.1f} s"
                 + (f"; rings searched up to hash {search.stopped_after}"
                    if search.stopped_after else ""))
    if search.skipped:
        budget = f" --max-minutes {max_minutes:g}" if max_minutes is not None else " budget"
        lines.append(f"not searched, over the{budget} with a recipe already found: "
                     + ", ".join(STAGES[stage] for stage in search.skipped))
    return "\n".join(lines) + "\n"


def _explain(observations: Observations, checked: list[tuple[Found, float]]) -> list[str]:
    """Which keys the best candidate misses, and which of the others' traits explain them."""
    observed = np.array(observations.owners)
    best = checked[0][0]
    missed = best.owners != observed
    lines = [f"\nthe best candidate misses {int(missed.sum()):,} keys, e.g. "
             + ", ".join(_key(observations, i, best, observations.servers)
                         for i in np.flatnonzero(missed)[:MISSED_SHOWN])]
    for other, _ in checked[1:]:
        explained = int(np.sum(missed & (other.owners == observed)))
        if explained:
            differs = _differences(best.candidate.params, other.candidate.params)
            lines.append(f"  {other.candidate.label} ({differs}) routes {explained:,} of "
                         "them as observed")
    return lines


def _key(observations: Observations, index: int, found: Found,
         servers: tuple[Server, ...]) -> str:
    key = observations.keys[int(index)].decode("utf-8", "surrogateescape")
    return (f"{key!r} observed on {servers[observations.owners[int(index)]].name!r}, "
            f"routed to {servers[int(found.owners[int(index)])].name!r}")
