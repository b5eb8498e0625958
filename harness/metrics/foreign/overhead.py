"""What the process protocol costs: one library measured through both doors in one run.

`peers/c/abi_pipe.c` serves any ring_peer ABI library over the pipe, so a scenario can name
the same library twice, once through the C ABI (`library = LIB`, loaded in its worker and
timed there around the C call alone) and once behind the bridge (`command =
[".../abi_pipe", LIB]`, timed by us around the request). Such a pair is found by path: a
process peer one of whose arguments is the same file as a library peer's library. Both
route the same keys in the same interleaved rounds, so the difference of the two per-key
times, round by round, is what the pipe adds to a direct C call (the transfer both ways,
the bridge's decoding and its copies), with the library's own route in both and
cancelling; the median of those per-round differences is the figure, and their range its
spread.

Whether the pipe meets its target is said of the median's interval, not of the median
alone (`harness.metrics.instruments.targets`): "met" only when the whole interval is within
it, "missed" only when the whole interval is past it, else "within noise". The verdict
that counts is the CPU time's, where both doors were timed by CPU time in the run; the
wall-clock figure is judged beside it by the same rule, for comparison.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from harness.core import noise
from harness.core.tables import Cell, Table, text
from harness.metrics.instruments.targets import difference_estimate, verdict_cell
from harness.metrics.instruments.timing import Timing, timing_cell
from harness.recipes.peers.foreign import ForeignPeerSpec

#: the issue's target for the pipe's cost at batches of 100,000 keys, ns per key
TARGET_NS = 5.0


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def library_pairs(specs: Mapping[str, ForeignPeerSpec]) -> dict[str, str]:
    """{process peer: library peer} for each process peer that serves, by one of its
    arguments, a library the scenario also names as a library peer (the first such, in
    order)."""
    libraries = [(name, spec.library) for name, spec in specs.items()
                 if spec.library is not None]
    pairs = {}
    for name, spec in specs.items():
        if spec.command is None:
            continue
        served = next((library_name for library_name, path in libraries
                       if any(_same_file(argument, path) for argument in spec.command[1:])),
                      None)
        if served is not None:
            pairs[name] = served
    return pairs


def per_round_difference(pipe: Sequence[float], c_call: Sequence[float]) -> Timing:
    """Pipe minus the C call, ns per key, one difference per round (same round, same keys)."""
    return Timing.of([a - b for a, b in zip(pipe, c_call, strict=True)])


def signed_cell(timing: Timing) -> Cell:
    """A difference: its median signed, and its range (which may cross zero)."""
    return Cell(f"{timing.median:+,.1f} ({timing.min:+,.1f} to {timing.max:+,.1f})",
                timing.median)


def against_target(difference: Timing) -> Cell:
    """The per-round difference against TARGET_NS: met, missed or within noise, judged on
    its median's interval."""
    estimate = difference_estimate(difference)
    return verdict_cell(estimate.low, estimate.high, estimate.basis, "at most", TARGET_NS,
                        lambda ns: f"{ns:+,.1f}")


def overhead_table(rows: Sequence[tuple[str, str, Timing, Timing, Timing, Timing | None,
                                         Timing | None]], keys: int) -> Table:
    """One row per pair: (pipe peer, library peer, its C call, through the pipe, their
    per-round difference, the same in CPU time or None, the bridge's own clock or None)."""
    # Both verdicts use the same rule; the CPU time's is the one to read. Both doors are
    # timed by CPU time in the same rounds, and CPU time leaves out the waits for the
    # scheduler at each hand-over between the two processes: on a shared machine those
    # waits move the wall-clock difference by tens of ns a key from run to run (its
    # interval straddles the target), while its CPU twin stays within a few ns.
    cells = [[text(library), text(pipe), timing_cell(c_call), timing_cell(piped),
              signed_cell(difference), against_target(difference),
              signed_cell(cpu) if cpu else text(""),
              against_target(cpu) if cpu else text(""),
              timing_cell(own) if own else text("")]
             for pipe, library, c_call, piped, difference, cpu, own in rows]
    target = f"at most {TARGET_NS:g} ns"
    return Table.of(
        ["library, through the C ABI", "the same library through the pipe",
         "its C call ns/key (min-max)", "through the pipe ns/key (min-max)",
         "pipe minus the C call by the wall clock, ns/key per round: median (min to max)",
         f"wall clock: {target}?", "the same in CPU time, both processes",
         f"CPU time: {target}?", "the bridge's own clock, ns/key (min-max)"],
        cells, notes=[
            f"Both doors route the same {keys:,} keys in one batch per round, in the same "
            "interleaved rounds (the order of the peers alternates from round to round); "
            "each round's difference is the pipe's time (timed by us around the request) "
            "minus the C call's (timed in the library's worker around the call alone), and "
            "the median and range are over the rounds. The library's own route is in both, "
            "so what is left is the protocol: the request and reply through the pipe, the "
            "bridge's decoding and copies.",
            "CPU time: the pipe's is our thread's plus the bridge process's threads' "
            "(/proc/PID/task/*/schedstat) around the request; the C call's, the worker's "
            "thread's around the call. It leaves out the waits for the scheduler at each "
            "hand-over between the two processes, which a busy machine adds to the "
            "wall-clock figure.",
            f"{target}?: judged on the median's {noise.CONFIDENCE:.0%} bootstrap interval "
            "over the rounds (shown): met only when the whole interval is within the "
            "target, missed only when the whole interval is past it, otherwise within "
            "noise, whichever side the median is on. The CPU time's verdict is the one to "
            "read: the wall clock's median moves by tens of ns from run to run on a "
            "shared machine.",
            "The bridge's own clock is its TIME answer: the library's route alone, inside "
            "the bridge process."]).trimmed()
