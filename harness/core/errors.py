"""The package's error classes: everything the harness raises on purpose."""


class HarnessError(Exception):
    """Base class for errors the harness raises deliberately (bad input, failed checks)."""


class UnknownNameError(HarnessError, KeyError):
    """A name (hash, layout, ...) that is not in its registry; the message lists the valid ones."""

    def __init__(self, kind: str, name: str, valid: list[str]) -> None:
        self.kind, self.name, self.valid = kind, name, valid
        super().__init__(f"unknown {kind} {name!r}; valid {kind} names: {', '.join(valid)}")

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class ScenarioError(HarnessError):
    """A scenario file that cannot be run: the message names the file, field, expected, got."""


class ResultFormatError(HarnessError):
    """A result file this version of the harness cannot read."""


class ParityError(HarnessError):
    """Two layouts built from the same ring routed some key to different servers."""


class OutputError(HarnessError):
    """An output that cannot or must not be written (named twice, also an input, no place
    to write it), found before any work starts."""
