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
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from harness.core.tables import Cell, Table, text
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


def overhead_table(rows: Sequence[tuple[str, str, Timing, Timing, Timing, Timing | None,
                                         Timing | None]], keys: int) -> Table:
    """One row per pair: (pipe peer, library peer, its C call, through the pipe, their
    per-round difference, the same in CPU time or None, the bridge's own clock or None)."""
    cells = [[text(library), text(pipe), timing_cell(c_call), timing_cell(piped),
              signed_cell(difference),
              text("met" if difference.median <= TARGET_NS else "missed"),
              signed_cell(cpu) if cpu else text(""),
              timing_cell(own) if own else text("")]
             for pipe, library, c_call, piped, difference, cpu, own in rows]
    return Table.of(
        ["library, through the C ABI", "the same library through the pipe",
         "its C call ns/key (min-max)", "through the pipe ns/key (min-max)",
         "pipe minus the C call, ns/key per round: median (min to max)",
         f"at most {TARGET_NS:g} ns", "the same in CPU time, both processes",
         "the bridge's own clock, ns/key (min-max)"],
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
            "The bridge's own clock is its TIME answer: the library's route alone, inside "
            "the bridge process."]).trimmed()
