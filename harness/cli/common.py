"""What both command lines share: one-line refusals of a bad flag, an exit code for what
argparse would exit with, and output streams that escape what they cannot show."""

from __future__ import annotations

import argparse
import sys
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


#: what one_line escapes: every line break `str.splitlines` knows besides the newline (a
#: field name or value echoed from a hostile file must not turn a one-line refusal into
#: several), and every other control character (C0 but the tab, DEL, C1), since a foreign
#: peer's stderr line or a library's build error reaches the message as it wrote it, and
#: an ESC there would drive the terminal (clear it, rewrite the line before, set its title)
_CONTROLS = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
             for code in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0),
                          0x2028, 0x2029]}


def one_line(message: object) -> str:
    """The message on one line: newlines and every other line break escaped, and every
    control character a terminal would act on."""
    return str(message).replace("\n", "\\n").translate(_CONTROLS)
