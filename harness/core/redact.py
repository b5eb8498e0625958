"""Secret keys never reach a result: every `hash_key` in a record is replaced by a mark.

A keyed hash's key (`hash_key`, given by a scenario or drawn for the run) travels with
the recipe's parameters, and parameters are recorded in many places: the run, the
scenario's echo, the records of metrics that build recipes of their own. Rather than
trust each of them, the result model passes every document it writes through
`without_keys`, so that no record can carry a key out.
"""

from __future__ import annotations

from typing import Any

#: the field that holds a secret key, wherever it appears
KEY_FIELD = "hash_key"
#: what results record instead of a secret key
HIDDEN_KEY = "(secret, not recorded)"


def without_keys(value: Any, hidden: str = HIDDEN_KEY) -> Any:
    """`value` with every secret key (a string under `KEY_FIELD`, at any depth of dicts,
    lists and tuples) replaced by `hidden`; one already hidden is kept as it is."""
    if isinstance(value, dict):
        return {k: hidden if k == KEY_FIELD and isinstance(v, str)
                and not v.startswith(HIDDEN_KEY) else without_keys(v, hidden)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_keys(v, hidden) for v in value]
    return value
