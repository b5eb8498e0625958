"""A recipe changed: the parameters a migration's `to` (or any change of recipe) gives,
applied over the recipe it starts from. One rule, used by the scenario's checks before any
work and by the migration itself, so what is checked is what is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.recipes.constructions import CONSTRUCTIONS


def changed_params(algorithm: str, params: Mapping[str, Any],
                   to: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(algorithm, parameters) of the recipe `to` makes of (`algorithm`, `params`).

    Another algorithm takes only what `to` gives. The same algorithm keeps its parameters
    under `to`'s, except that another construction drops the old one's own parameters
    (libmemcached's mode, the points' hash and names) unless it takes them too: they
    describe a ring that is no longer built."""
    target = to.get("algorithm", algorithm)
    given = {k: v for k, v in to.items() if k != "algorithm"}
    if target != algorithm:
        return str(target), given
    kept = dict(params)
    old, new = kept.get("construction"), given.get("construction", kept.get("construction"))
    if old != new and old in CONSTRUCTIONS and new in CONSTRUCTIONS:
        taken = {param.name for param in CONSTRUCTIONS[new].params}
        for param in CONSTRUCTIONS[old].params:
            if param.name not in taken:
                kept.pop(param.name, None)
    return algorithm, {**kept, **given}
