"""A library peer's memory, measured in its own supervised worker process:
`python -m harness.metrics.foreign.memory_worker LIB`.

The worker of `core/native/foreign_worker.py`, with the memory probe's requests added, so
that the library is measured where it runs in a run: a library that calls exit() or
abort(), crashes or never returns while it is measured ends this process only, within
the peer's `timeout` (each request below is one deadline), and its supervisor kills
whatever it started. memray sees the library's mallocs here as it sees a cffi layout's in
a layout's probe; the figures are those of `metrics/memory.py`'s `Memory`.

| request | payload | reply after `K` |
|---|---|---|
| `Pb` | (none) | JSON: held, peak bytes of a build under memray, RSS before and after |
| `Pr` | a route request's body (`r`, `l`: its batch in the region) | JSON: its peak (memray) |
| `Pt` | (none) | JSON: what tracemalloc sees of another build |

A route's peak includes the owners copied out of the region, as a layout's lookup peak
includes its result. memray's traces go to a folder of this process's TMPDIR (a folder the
harness removes whatever happens here), removed when the worker ends.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

from harness.core.native.foreign_worker import Worker, main
from harness.metrics.instruments.probes import rss_bytes, tracked


class MemoryWorker(Worker):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._traces: Path | None = None

    def extra(self, opcode: bytes, payload: bytes) -> bytes | None:
        if opcode != b"P":
            return None
        if self._traces is None:
            self._traces = Path(tempfile.mkdtemp(prefix="ring-harness-memray-"))
        what, rest = payload[:1], payload[1:]
        if what == b"b":
            self.ring = None  # one ring at a time, as a layout's probe builds one
            before = rss_bytes()
            self.ring, held, peak = tracked(self.build, self._traces, "build")
            return json.dumps({"held": held, "peak": peak, "rss_before": before,
                               "rss_after": rss_bytes()}).encode()
        if what == b"r":
            region = self.region
            assert region is not None

            def route() -> None:
                self.route(rest[:1], rest[1:])
                # the owners copied out, as a route in the harness's process makes them:
                # a layout's lookup peak includes its result (2 bytes a key)
                count = int.from_bytes(rest[1:5], "little")
                owners_at = int.from_bytes(rest[-8:], "little")
                np.array(np.frombuffer(region, np.uint16, count, owners_at))

            _, _, peak = tracked(route, self._traces, "lookup")
            return json.dumps({"peak": peak}).encode()
        if what == b"t":
            tracemalloc.start()
            try:
                rebuilt = self.build()
                seen = tracemalloc.get_traced_memory()[0]
                del rebuilt
            finally:
                tracemalloc.stop()
            return json.dumps({"tracemalloc": seen}).encode()
        return None

    def quit(self) -> None:
        if self._traces is not None:
            shutil.rmtree(self._traces, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], MemoryWorker))
