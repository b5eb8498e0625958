# The cffi module built from cext/build_ffi.py: its objects are untyped (cffi's cdata).
from typing import Any

ffi: Any
lib: Any
