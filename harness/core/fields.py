"""Typed reading of one TOML table, with errors that name file, field, expected and got.

Each `Fields` wraps one table; `take_*` methods read a key (with a default
when it is optional) and `finish()` rejects the keys nobody took, so a typo
such as `point_per_weight` is an error, not a silently ignored setting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from harness.core.errors import ScenarioError

_MISSING: Any = object()


def describe(value: object) -> str:
    """How a received value is shown in an error: its TOML-ish repr and type."""
    kind = {bool: "boolean", int: "integer", float: "float", str: "string",
            list: "array", dict: "table"}.get(type(value), type(value).__name__)
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{value!r}, {article} {kind}"


class Fields:
    def __init__(self, file: str, path: str, table: object) -> None:
        self.file, self.path = file, path
        if not isinstance(table, dict):
            raise self.error_at(path, "a table", table)
        self.table: dict[str, Any] = table
        self._taken: set[str] = set()

    def field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def error_at(self, field: str, expected: str, got: object) -> ScenarioError:
        return ScenarioError(f"{self.file}: {field} must be {expected} (got {describe(got)})")

    def error(self, key: str, expected: str, got: object) -> ScenarioError:
        return self.error_at(self.field(key), expected, got)

    def has(self, key: str) -> bool:
        return key in self.table

    def _raw(self, key: str, default: Any) -> Any:
        self._taken.add(key)
        if key in self.table:
            return self.table[key]
        if default is _MISSING:
            raise ScenarioError(f"{self.file}: {self.field(key)} is required but missing")
        return default

    def take_raw(self, key: str, default: Any = _MISSING) -> Any:
        """The value as TOML gave it, for a caller that checks its shape itself."""
        return self._raw(key, default)

    def take_int(self, key: str, default: Any = _MISSING, *, minimum: int | None = None,
                 maximum: int | None = None, expected: str | None = None) -> int:
        """An integer within the bounds; `expected` words the message in the caller's own
        terms (what the value means to it) instead of the bare range."""
        value = self._raw(key, default)
        expected = expected or _range_text("an integer", minimum, maximum)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, expected, value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise self.error(key, expected, value)
        return value

    def take_number(self, key: str, default: Any = _MISSING, *, positive: bool = True) -> float:
        value = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or (
            positive and not value > 0
        ) or not math.isfinite(value):
            raise self.error(key, "a finite positive number" if positive else "a finite number",
                             value)
        return float(value)

    def take_str(self, key: str, default: Any = _MISSING,
                 check: Callable[[str], str | None] | None = None) -> str:
        value = self._raw(key, default)
        if not isinstance(value, str) or not value:
            raise self.error(key, "a non-empty string", value)
        problem = check(value) if check else None
        if problem:
            raise self.error(key, problem, value)
        return value

    def take_choice(self, key: str, choices: Sequence[str], default: Any = _MISSING) -> str:
        value = self._raw(key, default)
        if value not in choices:
            raise self.error(key, "one of " + ", ".join(repr(c) for c in choices), value)
        return str(value)

    def take_int_or_list(self, key: str, default: Any = _MISSING, *,
                         minimum: int = 1, maximum: int | None = None) -> tuple[int, ...]:
        value = self._raw(key, default)
        expected = _range_text("an integer", minimum, maximum) + " or a non-empty list of them"
        values = value if isinstance(value, list) else [value]
        ok = bool(values) and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= minimum
            and (maximum is None or v <= maximum)
            for v in values
        )
        if not ok:
            raise self.error(key, expected, value)
        return tuple(values)

    def take_str_list(self, key: str, default: Any = _MISSING,
                      choices: Sequence[str] | None = None) -> tuple[str, ...]:
        value = self._raw(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, "a list of strings", value)
        if choices is not None:
            for v in value:
                if v not in choices:
                    raise self.error(key, "a list of names from " + ", ".join(choices), v)
        return tuple(value)

    def take_table(self, key: str) -> Fields:
        return Fields(self.file, self.field(key), self._raw(key, {}))

    def take_table_list(self, key: str) -> list[Fields]:
        value = self._raw(key, [])
        if not isinstance(value, list):
            raise self.error(key, "an array of tables", value)
        return [Fields(self.file, f"{self.field(key)}[{i}]", item) for i, item in enumerate(value)]

    def take_rest(self) -> dict[str, Any]:
        """Every key not taken yet, now taken (for a table another parser checks whole)."""
        rest = {k: v for k, v in self.table.items() if k not in self._taken}
        self._taken.update(rest)
        return rest

    def finish(self) -> None:
        unknown = sorted(set(self.table) - self._taken)
        if unknown:
            valid = ", ".join(sorted(self._taken))
            raise ScenarioError(
                f"{self.file}: unknown key {self.field(unknown[0])!r}; "
                f"valid keys here: {valid}"
            )


def _range_text(kind: str, minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{kind} from {minimum:,} to {maximum:,}"
    if minimum is not None:
        return f"{kind} >= {minimum:,}"
    return kind
