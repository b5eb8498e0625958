"""Stub that setuptools still needs for the compiled parts; all metadata is in pyproject.toml.

- `cffi_modules`: the C core (cext/ring.c, cext/bucketed.c, cext/generate.c, cext/lean.c)
  behind cffi, `harness._ring_c`; it links OpenSSL's libcrypto and zlib.
- `harness._scalar`: a small CPython extension that calls the same lookup functions one
  key at a time through vectorcall (see cext/scalar.c for why).
"""

from setuptools import Extension, setup

setup(
    cffi_modules=["cext/build_ffi.py:ffibuilder"],
    ext_modules=[
        Extension(
            "harness._scalar",
            sources=["cext/scalar.c", "cext/ring.c", "cext/bucketed.c"],
            depends=["cext/ring.h", "cext/bucketed.h"],
            include_dirs=["cext"],
            extra_compile_args=["-O2", "-std=c99"],
        )
    ],
)
