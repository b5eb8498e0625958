"""Typed reading of one TOML table, with errors that name file, field, expected and got.

Each `Fields` wraps one table; `take_*` methods read a key (with a default
when it is optional) and `finish()` rejects the keys nobody took, so a typo
such as `point_per_weight` is an error, not a silently ignored setting.

The `take_*` calls are also the declarations of the format: inside `recording()`
each call is noted as a `FieldRecord` (table, key, type, bounds, default), and
the scenario reference (`harness.run.reference`) is generated from those notes,
so the page and the validation cannot disagree.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from harness.core.errors import ScenarioError
from harness.core.redact import without_keys

_MISSING: Any = object()


@dataclass(frozen=True)
class FieldRecord:
    """One key as validation reads it: where, what it must be, and its default."""

    #: the table's path with list indexes elided ("servers.list[]"; "" for the top level)
    table: str
    key: str
    #: what the value must be, as the error message says it
    expected: str
    #: the default, or None when the key is required (`required` says which)
    default: Any
    required: bool
    #: the default in words, where it depends on the rest of the file
    shown_default: str | None = None


_RECORDS: ContextVar[list[FieldRecord] | None] = ContextVar("field_records", default=None)


@contextmanager
def recording() -> Iterator[list[FieldRecord]]:
    """Note every key read by any `Fields` while the block runs."""
    records: list[FieldRecord] = []
    token = _RECORDS.set(records)
    try:
        yield records
    finally:
        _RECORDS.reset(token)


def table_pattern(path: str) -> str:
    """A table's path with its list indexes elided, as the reference names tables."""
    return re.sub(r"\[\d+\]", "[]", path)


#: why no string of a scenario may hold a NUL: names reach C libraries (a foreign peer's
#: ring_peer_build, a live server's configuration) as NUL-terminated strings, where a name
#: holding one would arrive cut short, two distinct servers as one
NO_NUL_EXPECTED = ("text with no NUL character (names reach C libraries as NUL-terminated "
                   "strings)")


def _holds_nul(value: object) -> bool:
    """Whether a string, or a string in a list at any depth, holds a NUL. Tables are left
    to the `Fields` that reads them, so that the error names the field inside."""
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def describe(value: object) -> str:
    """How a received value is shown in an error: its TOML-ish repr and type, with any
    secret key in it hidden (a table quoted whole may hold a keyed hash's `hash_key`)."""
    value = without_keys(value) if isinstance(value, dict | list) else value
    kind = {bool: "boolean", int: "integer", float: "float", str: "string",
            list: "array", dict: "table"}.get(type(value), type(value).__name__)
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{value!r}, {article} {kind}"


class Fields:
    def __init__(self, file: str, path: str, table: object, *, declares: bool = True) -> None:
        """`declares`: whether this table's keys are scenario keys (noted while `recording`);
        keyword arguments of an API call are read as a table too, but are no such keys."""
        self.file, self.path, self._declares = file, path, declares
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

    def _note(self, key: str, expected: str, default: Any,
              shown_default: str | None = None) -> None:
        records = _RECORDS.get()
        if records is not None and self._declares:
            required = default is _MISSING
            records.append(FieldRecord(table_pattern(self.path), key, expected,
                                       None if required else default, required,
                                       shown_default))

    def _raw(self, key: str, default: Any) -> Any:
        self._taken.add(key)
        if key in self.table:
            value = self.table[key]
            if _holds_nul(value):
                raise self.error(key, NO_NUL_EXPECTED, value)
            return value
        if default is _MISSING:
            raise ScenarioError(f"{self.file}: {self.field(key)} is required but missing")
        return default

    def take_raw(self, key: str, default: Any = _MISSING, *, expected: str,
                 shown_default: str | None = None) -> Any:
        """The value as TOML gave it, for a caller that checks its shape itself; `expected`
        says what that shape is (in the reference and in the caller's error)."""
        self._note(key, expected, default, shown_default)
        return self._raw(key, default)

    def take_int(self, key: str, default: Any = _MISSING, *, minimum: int | None = None,
                 maximum: int | None = None, expected: str | None = None) -> int:
        """An integer within the bounds; `expected` words the message in the caller's own
        terms (what the value means to it) instead of the bare range."""
        expected = expected or _range_text("an integer", minimum, maximum)
        self._note(key, expected, default)
        value = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, expected, value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise self.error(key, expected, value)
        return value

    def take_number(self, key: str, default: Any = _MISSING, *, positive: bool = True,
                    bounds: tuple[float, float] | None = None) -> float:
        """A finite number (positive unless told otherwise); `bounds` (low, high) where the
        arithmetic on it would overflow or underflow beyond them."""
        expected = "a finite positive number" if positive else "a finite number"
        if bounds is not None:
            expected = f"a number from {bounds[0]:g} to {bounds[1]:g}"
        self._note(key, expected, default)
        value = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or (
            positive and not value > 0
        ) or not math.isfinite(value) or (
            bounds is not None and not bounds[0] <= value <= bounds[1]
        ):
            raise self.error(key, expected, value)
        return float(value)

    def take_str(self, key: str, default: Any = _MISSING,
                 check: Callable[[str], str | None] | None = None,
                 expected: str = "a non-empty string",
                 shown_default: str | None = None) -> str:
        """A non-empty string; `check` returns what was expected when the value is wrong,
        and `expected` describes the rule for the reference."""
        self._note(key, expected, default, shown_default)
        value = self._raw(key, default)
        if not isinstance(value, str) or not value:
            raise self.error(key, "a non-empty string", value)
        problem = check(value) if check else None
        if problem:
            raise self.error(key, problem, value)
        return value

    def take_label(self, key: str, default: Any = _MISSING,
                   shown_default: str | None = None) -> str:
        """A name that labels rows, columns and chart series (a recipe, a peer, a fleet):
        at most MAX_LABEL_BYTES, since every table, chart and comparison that shows it
        repeats it."""
        return self.take_str(key, default, check=_label_problem, expected=LABEL_EXPECTED,
                             shown_default=shown_default)

    def take_secret_hex(self, key: str, default: Any = _MISSING, *, byte_count: int,
                        shown_default: str | None = None) -> str | None:
        """A secret of `byte_count` bytes given as hex digits, returned in lower case (None
        when left out with a default of None). The error names what is wrong with the value
        but never shows it: a key one digit short is still most of a secret."""
        expected = f"{2 * byte_count} hex digits ({byte_count} bytes, a secret key)"
        self._note(key, expected, default, shown_default)
        value = self._raw(key, default)
        if value is None and default is None:
            return None
        if not isinstance(value, str):
            kind = describe(value).rsplit(", ", 1)[-1]
            raise ScenarioError(f"{self.file}: {self.field(key)} must be {expected} "
                                f"(got {kind}, not shown)")
        if len(value) != 2 * byte_count or not all(c in string.hexdigits for c in value):
            what = ("" if all(c in string.hexdigits for c in value)
                    else ", not all hex digits")
            raise ScenarioError(f"{self.file}: {self.field(key)} must be {expected} "
                                f"(got a string of {len(value)} characters{what}, not shown)")
        return value.lower()

    def take_template(self, key: str, default: Any, *placeholders: str) -> str:
        """A name template that uses exactly these fields, each of them."""
        return self.take_str(key, default, check=template_check(*placeholders),
                             expected=template_expected(*placeholders))

    def take_choice(self, key: str, choices: Sequence[str], default: Any = _MISSING, *,
                    described: tuple[str, str] | None = None) -> str:
        """One of the choices; `described` is (the choices, the default) in words, for a
        key whose choices depend on the rest of the file."""
        expected = "one of " + ", ".join(repr(c) for c in choices)
        if described is None:
            self._note(key, expected, default)
        else:
            self._note(key, described[0], default, described[1])
        value = self._raw(key, default)
        if value not in choices:
            raise self.error(key, expected, value)
        return str(value)

    def take_int_or_list(self, key: str, default: Any = _MISSING, *,
                         minimum: int = 1, maximum: int | None = None,
                         shown_default: str | None = None) -> tuple[int, ...]:
        expected = _range_text("an integer", minimum, maximum) + " or a non-empty list of them"
        self._note(key, expected, default, shown_default)
        value = self._raw(key, default)
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
                      choices: Sequence[str] | None = None,
                      shown_default: str | None = None) -> tuple[str, ...]:
        self._note(key, "a list of strings" if choices is None else
                   "a list of names from " + ", ".join(choices), default, shown_default)
        value = self._raw(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, "a list of strings", value)
        if choices is not None:
            for v in value:
                if v not in choices:
                    raise self.error(key, "a list of names from " + ", ".join(choices), v)
        return tuple(value)

    def take_table(self, key: str) -> Fields:
        self._note(key, "a table", {})
        return Fields(self.file, self.field(key), self._raw(key, {}))

    def take_table_list(self, key: str) -> list[Fields]:
        self._note(key, "an array of tables", [])
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


#: the longest label in UTF-8 bytes: a recipe's name of a million characters was repeated
#: through every table and chart of its result, 954 MiB at the peak and 259 MiB of files
#: against a 94 MiB estimate; 200 bytes, as a scenario's own name
MAX_LABEL_BYTES = 200
LABEL_EXPECTED = (f"a non-empty name of at most {MAX_LABEL_BYTES} bytes (it labels rows and "
                  "charts)")


def _label_problem(value: str) -> str | None:
    return LABEL_EXPECTED if len(value.encode("utf-8", "surrogatepass")) > MAX_LABEL_BYTES \
        else None


def template_expected(*placeholders: str) -> str:
    return "a name template using " + " and ".join(f"{{{p}}}" for p in placeholders)


#: a format spec an integer field may carry: fill and align, sign, zero padding, width,
#: grouping and an integer base (no precision, no 'c' or 'n'), so that distinct numbers
#: always give distinct names and formatting can never fail
_INTEGER_SPEC = re.compile(r"(?:[^{}]?[<>=^])?[+ -]?#?0?(?P<width>\d*)[,_]?[bdoxX]?")
#: the widest a template's field may be padded: a name of a million characters per key is
#: refused by the memory estimate anyway, but a width of 999,999,999 made the estimate
#: itself format 1 GB names (29 s and 2 GB before its refusal)
MAX_FIELD_WIDTH = 100_000
WIDTH_EXPECTED = f"with every field's width at most {MAX_FIELD_WIDTH:,}"


def _too_wide(match: re.Match[str] | None) -> bool:
    """Whether a matched spec pads its field beyond MAX_FIELD_WIDTH."""
    width = (match.group("width") if match else "").lstrip("0")
    # Its length first: int() refuses strings of more than 4,300 digits.
    return len(width) > len(str(MAX_FIELD_WIDTH)) or int(width or 0) > MAX_FIELD_WIDTH


def _template_problem(value: str, placeholders: Sequence[str]) -> str | None:
    """Why the template cannot be formatted for every number, or None."""
    try:
        parsed = list(string.Formatter().parse(value))
    except ValueError:
        return "and no lone brace (a literal one is written {{ or }})"
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in placeholders:
            return "and no other field (no attribute, index or number)"
        if field == "server":
            # A server's name is a string: a spec only an integer takes ({server:d}) fails
            # when names are made, so it is refused here, like every other bad spec.
            if conversion is not None or "{" in (spec or "") or not _string_spec(spec or ""):
                return "with {server} plain or with a string format spec such as {server:>8}"
            if _too_wide(_STRING_SPEC.fullmatch(spec or "")):
                return WIDTH_EXPECTED
            continue
        if conversion is not None or not _INTEGER_SPEC.fullmatch(spec or ""):
            return (f"with {{{field}}} plain or with an integer format spec such as "
                    f"{{{field}:04d}}")
        if _too_wide(_INTEGER_SPEC.fullmatch(spec or "")):
            return WIDTH_EXPECTED
    return None


#: a format spec {server} may carry: fill and align, width, and the string type only (no
#: precision, which cuts names short until two servers share one), so that distinct names
#: always give distinct point names and formatting a name can never fail
_STRING_SPEC = re.compile(r"(?:.?[<>^])?(?P<width>[0-9]*)s?", re.S)


def _string_spec(spec: str) -> bool:
    """Whether `spec` is one {server} may carry (see _STRING_SPEC)."""
    return _STRING_SPEC.fullmatch(spec) is not None


def template_check(*placeholders: str) -> Callable[[str], str | None]:
    """A name template may use exactly these fields, and must use each of them."""
    expected = template_expected(*placeholders)

    def check(value: str) -> str | None:
        problem = _template_problem(value, placeholders)
        if problem:
            return f"{expected} {problem}"
        def sample(changed: str | None = None) -> str:
            # Each field as what fills it: {server} a server's name, the others numbers.
            return value.format(**{q: (("server-1" if q == changed else "server-0")
                                       if q == "server" else int(q == changed))
                                   for q in placeholders})

        try:
            sample()
        except (KeyError, IndexError, ValueError, TypeError, AttributeError, OverflowError):
            return expected + " and no other field"
        # Without a field every name would be the same: keys or points would all coincide.
        if any(sample(p) == sample() for p in placeholders):
            return expected + " (each of them, so that names differ)"
        return None

    return check
