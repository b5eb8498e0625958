"""The layout registry: one module per layout, one `Layout` protocol, one typed map.

`LAYOUTS[name].build(positions, owners)` builds a ring in that layout.
"""

from __future__ import annotations

from harness.errors import UnknownNameError
from harness.layouts.base import Layout
from harness.layouts.cffi_aligned import CffiAlignedLayout
from harness.layouts.cffi_packed import CffiPackedLayout
from harness.layouts.numpy_aligned import NumpyAlignedLayout
from harness.layouts.numpy_packed import NumpyPackedLayout
from harness.layouts.tuples import TuplesLayout

LAYOUTS: dict[str, type[Layout]] = {
    cls.name: cls
    for cls in (
        TuplesLayout,
        NumpyAlignedLayout,
        NumpyPackedLayout,
        CffiAlignedLayout,
        CffiPackedLayout,
    )
}


def get_layout(name: str) -> type[Layout]:
    """The layout class called `name`, or an error that lists the valid names."""
    try:
        return LAYOUTS[name]
    except KeyError:
        raise UnknownNameError("layout", name, list(LAYOUTS)) from None


__all__ = ["LAYOUTS", "Layout", "get_layout"]
