"""Stub that setuptools still needs for the compiled parts; all metadata is in pyproject.toml.

- `cffi_modules`: the C core (the units of cext/units.py: cext/ring.c, cext/bucketed.c, ...)
  behind cffi, `harness.core.native.compiled._ring_c`; it links OpenSSL's libcrypto and zlib.
  Each C unit has its binding module in harness/core/native/ (ring.py for cext/ring.c, ...).
- `harness.core.native.compiled._scalar`: a small CPython extension that calls the same lookup
  functions one key at a time through vectorcall (see cext/scalar.c for why); it compiles
  the units cext/units.py marks `scalar`.
- `harness.core.native.compiled._counted`: one marker function that callgrind counts by (cext/counted.c).

RING_HARNESS_EXTRA_CFLAGS and RING_HARNESS_EXTRA_LDFLAGS add compiler and linker flags
to both (cext/build_ffi.py reads them too); such a build gets its own build directory,
because setuptools reuses objects it thinks up to date whatever flags made them.

`build_py` also copies scenarios/ into the wheel as harness/run/builtin_scenarios/: the
built-in scenarios, which `harness.run.builtin` finds there (or, in a checkout or an
editable install, in scenarios/ itself).
"""

import hashlib
import importlib.util
import os
import shlex
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

EXTRA_COMPILE_ARGS = shlex.split(os.environ.get("RING_HARNESS_EXTRA_CFLAGS", ""))
EXTRA_LINK_ARGS = shlex.split(os.environ.get("RING_HARNESS_EXTRA_LDFLAGS", ""))
# Functions on 64-byte lines, as in cext/build_ffi.py (which says why: timings that do not
# move when unrelated code does).
ALIGNMENT_ARGS = ["-falign-functions=64"]
OPTIONS = {}
if EXTRA_COMPILE_ARGS or EXTRA_LINK_ARGS:
    flags = hashlib.sha256(shlex.join(EXTRA_COMPILE_ARGS + ["--"] + EXTRA_LINK_ARGS).encode())
    OPTIONS = {"build": {"build_base": f"build/flags-{flags.hexdigest()[:12]}"}}

# The list of C units, loaded by its path (cext/ is no package; cext/build_ffi.py does the same).
_spec = importlib.util.spec_from_file_location(
    "_ring_harness_build_units", Path(__file__).resolve().parent / "cext" / "units.py")
assert _spec is not None and _spec.loader is not None
units = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = units
_spec.loader.exec_module(units)
SCALAR_UNITS = units.scalar_units()


class BuildPyWithScenarios(build_py):
    """build_py, then scenarios/ copied whole into the built package (a stale copy removed
    first, so that a deleted scenario does not linger). An editable install copies nothing:
    the checkout's scenarios/ is read in place."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib, "harness", "run", "builtin_scenarios")
        shutil.rmtree(target, ignore_errors=True)
        self.copy_tree("scenarios", str(target))


setup(
    cmdclass={"build_py": BuildPyWithScenarios},
    cffi_modules=["cext/build_ffi.py:ffibuilder"],
    ext_modules=[
        Extension(
            "harness.core.native.compiled._scalar",
            sources=["cext/scalar.c", *units.sources(SCALAR_UNITS)],
            depends=units.headers(SCALAR_UNITS),
            include_dirs=["cext"],
            libraries=units.libraries(SCALAR_UNITS),
            extra_compile_args=["-O2", "-std=c99", *ALIGNMENT_ARGS, *EXTRA_COMPILE_ARGS],
            extra_link_args=EXTRA_LINK_ARGS,
        ),
        Extension(
            "harness.core.native.compiled._counted",
            sources=["cext/counted.c"],
            extra_compile_args=["-O2", "-std=c99", *ALIGNMENT_ARGS, *EXTRA_COMPILE_ARGS],
            extra_link_args=EXTRA_LINK_ARGS,
        ),
    ],
    options=OPTIONS,
)
