"""What both command lines share: one-line refusals of a bad flag, an exit code for what
argparse would exit with, and output streams that escape what they cannot show."""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any, NoReturn

#: bad input: one line, nothing written (both command lines)
EXIT_BAD_INPUT = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse refusing a flag in one line, like every other bad input (not usage + error).
    The line starts with `refusal_prefix`, by default "error: PROG: "."""

    def __init__(self, *args: Any, refusal_prefix: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refusal_prefix = refusal_prefix

    def error(self, message: str) -> NoReturn:
        prefix = self.refusal_prefix or f"error: {self.prog}: "
        print(f"{prefix}{message}".replace("\n", "\\n"), file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def parse_arguments(parser: argparse.ArgumentParser,
                    argv: Sequence[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code argparse stopped with (--help: 0, a refused
    flag: 2), so that `main` returns it instead of raising SystemExit."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT


def escape_unshowable_output() -> None:
    """Text we print may hold any character of a scenario's names, or a path's bytes that
    are not UTF-8: on a stream that cannot show them, escape them rather than fail after
    the work is done."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


class _Unshowable(dict[int, str]):
    """A `str.translate` table of what a terminal must not be handed raw: every control
    character (C0, DEL, C1: an ESC starts a sequence that clears the screen, rewrites the
    line before, sets the title or, as OSC 8, hides a link behind a name), every format
    character (bidi overrides and isolates that reorder what follows, zero-width marks that
    make two names look alike) and the line and paragraph separators, each as its `\\x..`,
    `\\u....` or `\\U........` escape. Filled in as characters are met (a category look-up)."""

    def __init__(self, kept: str) -> None:
        super().__init__()
        self._kept = kept

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char in self._kept or unicodedata.category(char) not in _UNSHOWABLE_CATEGORIES:
            escaped = char
        elif code < 0x100:
            escaped = f"\\x{code:02x}"
        else:
            escaped = f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
        self[code] = escaped
        return escaped


#: controls, format characters, surrogates (a path's bytes that are not UTF-8), line and
#: paragraph separators
_UNSHOWABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: one_line keeps only the tab (the newline becomes \n); terminal text keeps its lines
_ONE_LINE = _Unshowable("\t")
_TERMINAL = _Unshowable("\t\n")


def one_line(message: object) -> str:
    """The message on one line: newlines and every other line break escaped, and every
    character a terminal would act on or hide (a foreign peer's stderr line, a library's
    build error or a hostile file's field reaches the message as it was written)."""
    return str(message).replace("\n", "\\n").translate(_ONE_LINE)


def terminal_text(text: str) -> str:
    """Text printed to stdout (a report's Markdown, holding any name a scenario or result
    gives) with its lines kept and everything else `one_line` escapes escaped; only the
    terminal's copy: the files written hold the text as it is."""
    return text.translate(_TERMINAL)
