"""A progress bar for long runs (tqdm), silent when stderr is not a terminal."""

from __future__ import annotations

import sys
from types import TracebackType

from tqdm import tqdm


class Progress:
    def __init__(self, total: int, label: str, enabled: bool | None = None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._bar = tqdm(total=total, desc=label, disable=not enabled, file=sys.stderr,
                         unit="step", dynamic_ncols=True, leave=False)

    def stage(self, text: str) -> None:
        # A stage names peers and recipes as the scenario wrote them: on the terminal, a
        # character it would act on (ESC, a bidi override) is shown as its escape.
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
        self._bar.set_postfix_str(shown, refresh=True)

    def advance(self, steps: int = 1) -> None:
        self._bar.update(steps)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._bar.close()
