"""The layout registry: one module per layout, one `Layout` protocol, one typed map.

`LAYOUTS[name].build(positions, owners)` builds a ring in that layout; its
`hash_bits` (32 or 64) says which rings it takes. Installed packages add
layouts through the entry-point group `ring_harness.layouts` (`harness.recipes.plugins`),
checked against the `Layout` protocol when they load.
"""

from __future__ import annotations

from harness.core.errors import UnknownNameError
from harness.recipes.layouts.base import LAYOUT_DEFAULTS, Layout
from harness.recipes.layouts.bucketed import BucketedLayout
from harness.recipes.layouts.cffi_aligned import CffiAlignedLayout
from harness.recipes.layouts.cffi_aligned_64 import CffiAligned64Layout
from harness.recipes.layouts.cffi_packed import CffiPackedLayout
from harness.recipes.layouts.cffi_packed_64 import CffiPacked64Layout
from harness.recipes.layouts.numpy_aligned import NumpyAlignedLayout
from harness.recipes.layouts.numpy_aligned_64 import NumpyAligned64Layout
from harness.recipes.layouts.numpy_packed import NumpyPackedLayout
from harness.recipes.layouts.numpy_packed_64 import NumpyPacked64Layout
from harness.recipes.layouts.numpy_soa import NumpySoaLayout
from harness.recipes.layouts.tuples import TuplesLayout
from harness.recipes.plugins import Contract, Registry, protocol_members

#: what a plugin's layout must have
CONTRACT = Contract("Layout (harness/recipes/layouts/base.py)", protocol_members(Layout),
                    LAYOUT_DEFAULTS, "harness.recipes.layouts.base.LayoutBase")

LAYOUTS: dict[str, type[Layout]] = Registry("ring_harness.layouts", {
    cls.name: cls
    for cls in (
        TuplesLayout,
        NumpyAlignedLayout,
        NumpyPackedLayout,
        CffiAlignedLayout,
        CffiPackedLayout,
        NumpyAligned64Layout,
        NumpyPacked64Layout,
        CffiAligned64Layout,
        CffiPacked64Layout,
        NumpySoaLayout,
        BucketedLayout,
    )
}, CONTRACT)


def get_layout(name: str) -> type[Layout]:
    """The layout class called `name`, or an error that lists the valid names."""
    try:
        return LAYOUTS[name]
    except KeyError:
        raise UnknownNameError("layout", name, list(LAYOUTS)) from None


__all__ = ["LAYOUTS", "Layout", "get_layout"]
