"""The C units declared once: cext/units.py names every unit, each header's marked blocks
are what cffi declares, and the compiled module still exposes the surface recorded
before the declarations moved out of cext/build_ffi.py (tests/fixtures/c_core/)."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from harness.core.native._c import ffi, lib
from harness.core.native.cdef_blocks import CdefBlock, cdef_blocks
from tests.paths import FIXTURES, ROOT

CEXT = ROOT / "cext"
#: `ffi.list_types()`, then each name of `dir(lib)` with its C type, then each struct's
#: layout, as the module built from the hand-copied cdef strings had them
SURFACE = FIXTURES / "c_core" / "ring_c_surface.txt"
#: the C files that are no unit of the core: each extension module's own file
MODULE_FILES = {"scalar.c", "counted.c"}


@pytest.fixture(scope="module")
def units() -> ModuleType:
    """cext/units.py, loaded by its path as setup.py and cext/build_ffi.py load it."""
    if not (CEXT / "units.py").is_file():
        pytest.skip("no cext/ beside the tests (an installed copy)")
    spec = importlib.util.spec_from_file_location("_test_units", CEXT / "units.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_c_file_is_a_unit_or_a_module(units: ModuleType) -> None:
    """A .c or .h in cext/ that no unit names would be compiled by nobody (or by hand)."""
    named = {Path(path).name for path in units.sources(units.UNITS) + units.headers(units.UNITS)}
    on_disk = {path.name for path in CEXT.glob("*.[ch]")}
    assert on_disk - MODULE_FILES == named


def test_bound_units_and_only_they_carry_blocks(units: ModuleType) -> None:
    """A bound unit's header has cffi blocks; a header-only helper's has none."""
    for unit in units.UNITS:
        marked = "/* cffi:begin" in (CEXT / f"{unit.name}.h").read_text()
        assert marked == unit.bound, unit.name


def test_the_packed_structs_are_declared_packed(units: ModuleType) -> None:
    """ring.h's two packed layouts reach cffi as packed blocks, so cffi's sizes are C's."""
    packed = [block.text for block in cdef_blocks(CEXT / "ring.h") if block.packed]
    assert [("ring_entry_packed " in text, "ring_entry_packed64 " in text)
            for text in packed] == [(True, False), (False, True)]
    assert ffi.sizeof("struct ring_entry_packed") == 6
    assert ffi.sizeof("struct ring_entry_packed64") == 10


def _surface() -> list[str]:
    out = [f"list_types: {ffi.list_types()!r}"]
    for name in sorted(dir(lib)):
        value = getattr(lib, name)
        try:
            out.append(f"lib.{name}: {ffi.typeof(value).cname}")
        except TypeError:
            out.append(f"lib.{name}: value {value!r}")
    for kind in ffi.list_types()[1]:
        struct = ffi.typeof(f"struct {kind}")
        out.append(f"struct {kind}: size {ffi.sizeof(struct)} align {ffi.alignof(struct)} "
                   "fields " + ", ".join(f"{name}:{field.type.cname}@{field.offset}"
                                         for name, field in struct.fields))
    return out


def test_the_compiled_surface_is_the_recorded_one() -> None:
    """Every type, function (with its C type), constant and struct layout of the recorded
    surface is still there; a unit added since adds lines, it removes none."""
    recorded = SURFACE.read_text().splitlines()
    now = _surface()
    kept = [line for line in recorded[1:] if line not in now]
    assert not kept, kept
    types_then = ast.literal_eval(recorded[0].split(": ", 1)[1])
    assert all(set(then) <= set(current)
               for then, current in zip(types_then, ffi.list_types(), strict=True))


@pytest.mark.parametrize(("text", "wanted"), [
    ("/* cffi:begin */ int f(void); /* cffi:end */", [CdefBlock(" int f(void); ", False)]),
    ("/* cffi:begin packed */ struct s { int a; } __attribute__((packed)); /* cffi:end */",
     [CdefBlock(" struct s { int a; }; ", True)]),
    ("/* cffi:begin */ int f(void);", "must come in begin/end pairs"),
    ("int f(void);", "at least one (got none)"),
    ("/* cffi:end */ /* cffi:begin */", "must come in begin/end pairs"),
    ("/* cffi:begin */ struct s { int a; } __attribute__((packed)); /* cffi:end */",
     "belongs in a /* cffi:begin packed */ block"),
    ("/* cffi:begin packed */ int f(void); /* cffi:end */",
     "belongs in a /* cffi:begin packed */ block"),
])
def test_cdef_blocks_reads_or_names_what_is_wrong(tmp_path: Path, text: str,
                                                  wanted: list[CdefBlock] | str) -> None:
    """A header's blocks, in order; unpaired markers or a packed attribute outside a packed
    block is an error naming the header."""
    header = tmp_path / "unit.h"
    header.write_text(text)
    if isinstance(wanted, str):
        with pytest.raises(ValueError, match=r"unit\.h: .*" + re.escape(wanted)):
            cdef_blocks(header)
    else:
        assert cdef_blocks(header) == wanted
