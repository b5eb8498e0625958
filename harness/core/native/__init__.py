"""The C binding package: the only code that touches cffi and the compiled modules.

`_ring_c` is the cffi module built from `cext/build_ffi.py`, `_scalar` the
vectorcall lookups of `cext/scalar.c`, `_counted` callgrind's marker
(`cext/counted.c`). Everything above takes and returns numpy arrays and
Python values.
"""
