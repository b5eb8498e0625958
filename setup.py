"""Stub that setuptools still needs for cffi's `cffi_modules`; all metadata is in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=["cext/build_ffi.py:ffibuilder"])
