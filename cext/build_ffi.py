"""cffi build script for the C core (API mode, compiled out of line at install).

It imports nothing from the `harness` package: setup.py names it in
`cffi_modules`, and `harness.core.native._c` is the only module that loads the
result (`harness.core.native.compiled._ring_c`); the binding module of each C unit
(`harness.core.native.ring` for cext/ring.c, `.hashes` for cext/hashes.c, ...) calls
its functions through it.

The units are cext/units.py's list; what cffi declares of each is its header's marked
blocks, read by harness/core/native/cdef_blocks.py. Both files import the standard
library only and are loaded here by their paths, not imported through the package.
"""

import importlib.util
import os
import shlex
import sys
from pathlib import Path
from types import ModuleType

from cffi import FFI

ROOT = Path(__file__).resolve().parent.parent


def load(path: Path) -> ModuleType:
    """The module at `path`, loaded by its path alone (no package imported)."""
    spec = importlib.util.spec_from_file_location(f"_ring_harness_build_{path.stem}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its classes name a module that exists
    spec.loader.exec_module(module)
    return module


# Extra flags for a checked build (tox -e sanitize: -fsanitize=address,undefined); setup.py
# reads the same variables for harness.core.native.compiled._scalar.
EXTRA_COMPILE_ARGS = shlex.split(os.environ.get("RING_HARNESS_EXTRA_CFLAGS", ""))
EXTRA_LINK_ARGS = shlex.split(os.environ.get("RING_HARNESS_EXTRA_LDFLAGS", ""))
# Every function starts on a 64-byte line, so that its speed depends on its own code and
# not on how much code the linker put before it. Without, a change to bucketed.c's
# declarations moved ring.c's fills from a line's start to its middle, and the A/B gate
# measured the 16k ring's cffi-aligned and cffi-packed-64 builds 1.24x to 1.58x slower in
# six runs of seven against the commit before, with their own code unchanged; with it,
# 0.84x to 1.00x, and three runs of three passed. setup.py passes the same to the other
# modules.
ALIGNMENT_ARGS = ["-falign-functions=64"]

units = load(ROOT / "cext" / "units.py")
cdef_blocks = load(ROOT / "harness" / "core" / "native" / "cdef_blocks.py")
BOUND = [unit for unit in units.UNITS if unit.bound]

ffibuilder = FFI()
for unit in BOUND:
    for block in cdef_blocks.cdef_blocks(ROOT / "cext" / f"{unit.name}.h"):
        ffibuilder.cdef(block.text, packed=block.packed)

ffibuilder.set_source(
    "harness.core.native.compiled._ring_c",
    "\n".join(f'#include "{unit.name}.h"' for unit in BOUND),
    # Relative to the project root, where setup.py runs (sdists need this).
    sources=units.sources(units.UNITS),
    include_dirs=["cext"],
    depends=units.headers(units.UNITS),
    libraries=units.libraries(units.UNITS),
    extra_compile_args=["-O2", "-std=c99", *ALIGNMENT_ARGS, *EXTRA_COMPILE_ARGS],
    extra_link_args=EXTRA_LINK_ARGS,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
