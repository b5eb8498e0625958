# cext/counted.c: callgrind's hooks (see harness/core/native/counted.py).
from collections.abc import Callable
from typing import Any

CALLGRIND: int

def counted(work: Callable[[], Any], /) -> Any: ...
def instrument() -> None: ...
