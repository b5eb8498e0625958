"""Declared parameters: what an algorithm or construction accepts, checked in one place.

A component lists its parameters as `Param`s. `parse_params` reads them from a
`Fields` table (a scenario's TOML table, or keyword arguments wrapped in one),
so a bad value gets the same one-line error wherever it comes from: file,
field, what was expected and what was received.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.core.fields import Fields, template_check

__all__ = ["Param", "keyword_fields", "parse_keywords", "parse_params", "template_check"]

Kind = Literal["int", "number", "str", "choice", "template", "secret_hex"]


@dataclass(frozen=True)
class Param:
    """One parameter: its name, kind, default and bounds, and what it means."""

    name: str
    kind: Kind
    default: Any
    doc: str
    minimum: int | None = None
    maximum: int | None = None
    #: choice: the valid values, or a callable giving them (so registries filled later are
    #: seen); a fixed list is given as it is, so reading it calls nothing of the owner's
    choices: Sequence[str] | Callable[[], Sequence[str]] | None = None
    #: template: the fields a name template may use, each required
    placeholders: tuple[str, ...] = ()
    #: an extra rule on the parsed value: returns what was expected, or None if fine
    check: Callable[[Any], str | None] | None = None
    #: int: what the value must be, in the component's own words (a message that names the
    #: component), for a value of the wrong type or out of bounds; else the bare range
    expected: str | None = None
    #: secret_hex: the bytes of the secret; its default in words (the reference shows it)
    byte_count: int = 16
    shown_default: str | None = None

    def take(self, fields: Fields) -> Any:
        if self.kind == "int":
            value: Any = fields.take_int(self.name, self.default, minimum=self.minimum,
                                         maximum=self.maximum, expected=self.expected)
        elif self.kind == "number":
            value = fields.take_number(self.name, self.default)
        elif self.kind == "choice":
            assert self.choices is not None
            choices = self.choices() if callable(self.choices) else self.choices
            value = fields.take_choice(self.name, list(choices), self.default)
        elif self.kind == "template":
            value = fields.take_template(self.name, self.default, *self.placeholders)
        elif self.kind == "secret_hex":
            # no `check`: its message would show the secret
            return fields.take_secret_hex(self.name, self.default, byte_count=self.byte_count,
                                          shown_default=self.shown_default)
        else:
            value = fields.take_str(self.name, self.default)
        problem = self.check(value) if self.check else None
        if problem:
            raise fields.error(self.name, problem, value)
        return value


def parse_params(params: Sequence[Param], fields: Fields) -> dict[str, Any]:
    """Every declared parameter, read from `fields` (defaults filled in)."""
    return {param.name: param.take(fields) for param in params}


def keyword_fields(owner: str, values: Mapping[str, Any]) -> Fields:
    """Keyword arguments seen as a table, so API calls get the scenario's error messages."""
    return Fields(owner, "", dict(values), declares=False)


def parse_keywords(
    owner: str, params: Sequence[Param], values: Mapping[str, Any]
) -> dict[str, Any]:
    """Keyword arguments checked like a scenario table: declared, in range, none unknown."""
    fields = keyword_fields(owner, values)
    parsed = parse_params(params, fields)
    fields.finish()
    return parsed
