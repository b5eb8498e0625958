"""A scenario's `[gate]` table: how much each figure may grow before `ring-harness gate`
calls it a regression.

Every threshold is a ratio, new over old (1.10: ten per cent more is still a pass). The
gate reads them from here, and a `--threshold FIGURE=RATIO` on its command line replaces
one. Agreement has no threshold: a change of routing (one key routed differently from
the base) always fails, since a ring that routes differently is a different ring.

    [gate]
    ns_per_key = 1.05        # ns per key as a ratio to the in-run reference
    structure_bytes = 1.05
    bytes_per_entry = 1.05
    peak_build_bytes = 1.25
    cv = 1.10                # balance: CV of keys per server
    moved = 1.10             # the share of keys an operation moves
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from harness.core.errors import ScenarioError
from harness.core.fields import Fields

#: a ratio below 1 would fail unchanged code, one past 100 would pass anything
RATIO_BOUNDS = (1.0, 100.0)


@dataclass(frozen=True)
class GateThresholds:
    """The largest ratio (new / old) of each figure that still passes."""

    #: ns per key over the in-run reference: in A/B mode, the lower end of the paired
    #: interval must stay under it; two processes of the same code differ by a few per cent
    #: (docs/guide/ab-gate.md), so 1.05 (the A/B gate's own) and not 1.0
    ns_per_key: float = 1.05
    structure_bytes: float = 1.05
    bytes_per_entry: float = 1.05
    #: the allocator's peak while building moves with the allocator's state more than the
    #: structure's bytes do
    peak_build_bytes: float = 1.25
    cv: float = 1.10
    moved: float = 1.10

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def with_overrides(self, given: list[str]) -> GateThresholds:
        """These thresholds with `--threshold FIGURE=RATIO` arguments applied (ScenarioError
        naming the argument when one is wrong)."""
        changed = self
        for text in given:
            name, _, value = text.partition("=")
            if name not in self.names():
                raise ScenarioError(f"--threshold {text}: FIGURE must be one of "
                                    f"{', '.join(self.names())} (got {name!r})")
            try:
                ratio = float(value)
            except ValueError:
                ratio = float("nan")
            if not RATIO_BOUNDS[0] <= ratio <= RATIO_BOUNDS[1]:
                raise ScenarioError(f"--threshold {text}: RATIO must be a number from "
                                    f"{RATIO_BOUNDS[0]:g} to {RATIO_BOUNDS[1]:g} "
                                    f"(got {value!r})")
            changed = replace(changed, **{name: ratio})
        return changed


def parse_gate(table: Fields) -> GateThresholds | None:
    """The `[gate]` table, checked, or None when the scenario has none."""
    if not table.table:
        return None
    defaults = GateThresholds()
    values = {name: table.take_number(name, getattr(defaults, name), bounds=RATIO_BOUNDS)
              for name in GateThresholds.names()}
    table.finish()
    return GateThresholds(**values)
