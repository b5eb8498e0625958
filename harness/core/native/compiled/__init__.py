"""The compiled modules, built when the package installs (setup.py): `_ring_c` (cffi, from
cext/build_ffi.py), `_scalar` (cext/scalar.c) and `_counted` (cext/counted.c). Only the
binding modules of `harness.core.native` import them (import-linter's forbidden contract)."""
