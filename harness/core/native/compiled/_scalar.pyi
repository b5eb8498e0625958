# cext/scalar.c: ScalarLookup(address, length, kind) -> a callable returning one owner.
from typing import Any

ScalarLookup: Any
